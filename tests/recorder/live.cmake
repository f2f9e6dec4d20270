# SPDX-License-Identifier: MIT
# live.cmake - tests of live tracing and runtime control (issue #5): printed
# lines checked exactly, printing vs recording (bt2), concurrent control,
# tunables, help, bad input, pattern files, FDR_DISABLE tunables.
#   Programs: tests/recorder/progs/live-prog.c (driven by tests/recorder/test-live.py),
#   tests/recorder/test-live-concurrent.c, tests/recorder/progs/live-disabled.c.
#   Outputs under <build>/tests/live/<case>.
set(_live_src ${CMAKE_CURRENT_LIST_DIR})
set(_live_out ${CMAKE_CURRENT_BINARY_DIR}/live)
file(MAKE_DIRECTORY ${_live_out})

add_executable(live-prog ${_live_src}/progs/live-prog.c)
target_link_libraries(live-prog PRIVATE fdr Threads::Threads)

foreach(c lines trace-file print-not-record record-not-print threads tunables-env bad
          help file api)
  add_test(NAME live-${c}
           COMMAND ${FDR_PYTHON} ${_live_src}/test-live.py ${c} $<TARGET_FILE:live-prog>
                   ${_live_out}/${c})
  set_tests_properties(live-${c} PROPERTIES TIMEOUT 60)
endforeach()

add_executable(test-live-concurrent ${_live_src}/test-live-concurrent.c)
target_link_libraries(test-live-concurrent PRIVATE fdr Threads::Threads)
target_include_directories(test-live-concurrent PRIVATE ${FDR_TESTS_DIR}/lib)
target_compile_definitions(test-live-concurrent PRIVATE PYTHON="${FDR_PYTHON}"
                           TRACECHECK="${FDR_TESTS_DIR}/lib/tracecheck.py")
# A fresh trace directory each run (stale stream files would be read too).
add_test(NAME live-concurrent
         COMMAND sh -c "rm -rf '${_live_out}/concurrent-trace' && exec '$<TARGET_FILE:test-live-concurrent>'")
set_tests_properties(live-concurrent PROPERTIES TIMEOUT 60
  ENVIRONMENT "FDR_TRACE_FILE=${_live_out}/concurrent.txt;FDR_OUTPUT=${_live_out}/concurrent-trace;FDR_MODE=overwrite;FDR_BUFFER_SIZE=32K;FDR_PACKET_SIZE=4K")

# FDR_DISABLE: the tunable macros are constants, and nothing links libfdr.
add_executable(live-disabled ${_live_src}/progs/live-disabled.c)
target_include_directories(live-disabled PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(live-disabled PRIVATE FDR_DISABLE)
add_test(NAME live-disabled COMMAND live-disabled)
set_tests_properties(live-disabled PROPERTIES TIMEOUT 10
  PASS_REGULAR_EXPRESSION "^batch_size=32 gain=0.5 buf=16\n$")
