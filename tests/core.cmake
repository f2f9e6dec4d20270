# core.cmake - the tests of the core recorder (issue #2): field types, exact
# accounting of discarded events, timestamps, 10,000 threads, exit paths,
# compile-time errors, C++ and bad configuration values.
#   Helper programs: tests/progs/core-*.c (and .cpp), linked with libfdr.
#   Drivers: tests/test-core-*.py (bt2 through tracecheck.py) and
#   tests/test-core-compile.sh (tests/compile/*.c must fail to compile).
# Each test writes its traces under <build>/tests/core/<test>.
set(_core_src ${CMAKE_CURRENT_LIST_DIR})
set(_core_out ${CMAKE_CURRENT_BINARY_DIR}/core)
file(MAKE_DIRECTORY ${_core_out})

foreach(p types accounting time threads exit)
  add_executable(core-${p} ${_core_src}/progs/core-${p}.c)
  target_link_libraries(core-${p} PRIVATE fdr Threads::Threads m)
endforeach()

add_test(NAME core-types
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-types.py $<TARGET_FILE:core-types>
                 ${_core_out}/types)
set_tests_properties(core-types PROPERTIES TIMEOUT 60)

add_test(NAME core-accounting
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-accounting.py
                 $<TARGET_FILE:core-accounting> ${_core_out}/accounting)
set_tests_properties(core-accounting PROPERTIES TIMEOUT 240)

add_test(NAME core-time
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-time.py $<TARGET_FILE:core-time>
                 ${_core_out}/time)
set_tests_properties(core-time PROPERTIES TIMEOUT 60)

add_test(NAME core-threads
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-threads.py $<TARGET_FILE:core-threads>
                 ${_core_out}/threads)
set_tests_properties(core-threads PROPERTIES TIMEOUT 240)

foreach(mode exit return _exit thread)
  add_test(NAME core-exit-${mode}
           COMMAND ${FDR_PYTHON} ${_core_src}/test-core-exit.py $<TARGET_FILE:core-exit>
                   ${_core_out}/exit-${mode} ${mode})
  set_tests_properties(core-exit-${mode} PROPERTIES TIMEOUT 60)
endforeach()
