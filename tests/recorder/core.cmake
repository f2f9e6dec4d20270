# SPDX-License-Identifier: MIT
# core.cmake - the tests of the core recorder (issue #2): field types, exact
# accounting of discarded events, timestamps, 10,000 threads, exit paths,
# compile-time errors, C++ and bad configuration values.
#   Helper programs: tests/recorder/progs/core-*.c (and .cpp), linked with libfdr.
#   Drivers: tests/recorder/test-core-*.py (bt2 through tracecheck.py) and
#   tests/recorder/test-core-compile.sh (tests/recorder/compile/*.c must fail to compile).
# Each test writes its traces under <build>/tests/core/<test>.
set(_core_src ${CMAKE_CURRENT_LIST_DIR})
set(_core_out ${CMAKE_CURRENT_BINARY_DIR}/core)
file(MAKE_DIRECTORY ${_core_out})

foreach(p types accounting time threads exit config fork)
  add_executable(core-${p} ${_core_src}/progs/core-${p}.c)
  target_link_libraries(core-${p} PRIVATE fdr Threads::Threads m)
endforeach()

add_test(NAME core-types
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-types.py $<TARGET_FILE:core-types>
                 ${_core_out}/types)
set_tests_properties(core-types PROPERTIES TIMEOUT 60)
# The same with FDR_STRING_MAX=16: every string cut at 16 bytes.
add_test(NAME core-types-string-max
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-types.py $<TARGET_FILE:core-types>
                 ${_core_out}/types-string-max 16)
set_tests_properties(core-types-string-max PROPERTIES TIMEOUT 60)

add_test(NAME core-accounting
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-accounting.py
                 $<TARGET_FILE:core-accounting> ${_core_out}/accounting)
set_tests_properties(core-accounting PROPERTIES TIMEOUT 240)
# The same accounting when the process ends with _exit() after its threads
# exited: each thread's exit must report its last discards.
add_test(NAME core-accounting-exit
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-accounting.py
                 $<TARGET_FILE:core-accounting> ${_core_out}/accounting-exit _exit)
set_tests_properties(core-accounting-exit PROPERTIES TIMEOUT 120)

add_test(NAME core-time
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-time.py $<TARGET_FILE:core-time>
                 ${_core_out}/time)
set_tests_properties(core-time PROPERTIES TIMEOUT 60)

add_test(NAME core-threads
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-threads.py $<TARGET_FILE:core-threads>
                 ${_core_out}/threads)
set_tests_properties(core-threads PROPERTIES TIMEOUT 240)
# Sanitizer runtimes keep per-thread caches of their own whose high-water
# mark moves by a few MB from run to run (8.2 MB seen under ASan); 32 MB over
# 9,800 threads still catches a leak of 4 KiB per thread, and a ring not
# reused costs at least a packet (64 KiB) per thread.
if(FDR_SANITIZE)
  set_property(TEST core-threads PROPERTY ENVIRONMENT FDR_TEST_HWM_GROWTH_KB=32768)
endif()

# Two runs into one FDR_OUTPUT: only the second run's events are read.
add_test(NAME core-rerun
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-rerun.py $<TARGET_FILE:core-accounting>
                 ${_core_out}/rerun)
set_tests_properties(core-rerun PROPERTIES TIMEOUT 60)

add_test(NAME core-fork
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-fork.py $<TARGET_FILE:core-fork>
                 ${_core_out}/fork)
set_tests_properties(core-fork PROPERTIES TIMEOUT 60)

foreach(mode exit return _exit thread)
  add_test(NAME core-exit-${mode}
           COMMAND ${FDR_PYTHON} ${_core_src}/test-core-exit.py $<TARGET_FILE:core-exit>
                   ${_core_out}/exit-${mode} ${mode})
  set_tests_properties(core-exit-${mode} PROPERTIES TIMEOUT 60)
endforeach()

add_executable(core-cxx ${_core_src}/progs/core-cxx.cpp)
target_link_libraries(core-cxx PRIVATE fdr Threads::Threads)
set_target_properties(core-cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                          CXX_EXTENSIONS OFF)
add_test(NAME core-cxx
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-cxx.py $<TARGET_FILE:core-cxx>
                 ${_core_out}/cxx)
set_tests_properties(core-cxx PROPERTIES TIMEOUT 60)

# Compile-time errors, with the build's compilers and with clang when found.
add_test(NAME core-compile
         COMMAND sh ${_core_src}/test-core-compile.sh ${CMAKE_C_COMPILER} ${CMAKE_CXX_COMPILER}
                 ${PROJECT_SOURCE_DIR}/include ${_core_src}/compile)
set_tests_properties(core-compile PROPERTIES TIMEOUT 120)
find_program(FDR_CLANG clang)
find_program(FDR_CLANGXX clang++)
if(FDR_CLANG AND FDR_CLANGXX AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  add_test(NAME core-compile-clang
           COMMAND sh ${_core_src}/test-core-compile.sh ${FDR_CLANG} ${FDR_CLANGXX}
                   ${PROJECT_SOURCE_DIR}/include ${_core_src}/compile)
  set_tests_properties(core-compile-clang PROPERTIES TIMEOUT 120)
endif()

foreach(case buffer-size packet-size mode drain daemon debug rundir output-missing output-readonly output-file)
  add_test(NAME core-config-${case}
           COMMAND ${FDR_PYTHON} ${_core_src}/test-core-config.py $<TARGET_FILE:core-config>
                   ${_core_out}/config-${case} ${case})
  set_tests_properties(core-config-${case} PROPERTIES TIMEOUT 60)
endforeach()

# test-core-committed.c: the committed position of the open packet, read
# from the buffer's memfd alone after SIGSTOP / SIGKILL of its writer.
add_executable(test-core-committed ${CMAKE_CURRENT_LIST_DIR}/test-core-committed.c)
target_link_libraries(test-core-committed PRIVATE fdr fdr_common)
target_include_directories(test-core-committed PRIVATE ${FDR_TESTS_DIR}/lib)
foreach(sig stop kill)
  add_test(NAME core-committed-${sig} COMMAND test-core-committed ${sig} 200)
  set_tests_properties(core-committed-${sig} PROPERTIES TIMEOUT 300)
endforeach()

# docs/hotpath.md is what scripts/disasm-hotpath.py makes from the headers
# today, and the code keeps its promises (disabled: 1 load + 1 branch;
# enabled: no lock, xchg, fence or call);
# the comparison is skipped with another compiler than the one it was made with.
add_test(NAME hotpath-doc
         COMMAND ${FDR_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/disasm-hotpath.py
                 --cc ${CMAKE_C_COMPILER} --check ${PROJECT_SOURCE_DIR}/docs/hotpath.md)
set_tests_properties(hotpath-doc PROPERTIES SKIP_RETURN_CODE 77)
