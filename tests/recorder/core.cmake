# SPDX-License-Identifier: MIT
# core.cmake - the tests of the core recorder (issue #2): field types, exact
# accounting of discarded events, timestamps, 10,000 threads, exit paths,
# compile-time errors, C++ and bad configuration values; core-stress
# (threads, flushes, snapshots and SIGTERM with bounded waits, issue 30);
# core-drain (every event kept after SIGTERM, however the drain helper is made),
# core-open-mark (a trace cut by a kill nothing could count says so).
#   Helper programs: tests/recorder/progs/core-*.c (and .cpp), linked with libfdr.
#   Drivers: tests/recorder/test-core-*.py (bt2 through tracecheck.py) and
#   tests/recorder/test-core-compile.sh (tests/recorder/compile/*.c must fail to compile).
# Each test writes its traces under <build>/tests/core/<test>.
set(_core_src ${CMAKE_CURRENT_LIST_DIR})
set(_core_out ${CMAKE_CURRENT_BINARY_DIR}/core)
file(MAKE_DIRECTORY ${_core_out})

foreach(p types accounting time threads exit config fork stress wrap)
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
# Overwrite mode with FDR_OUTPUT: the packets overwritten before exit are
# reported as discarded packets (an empty packet 0 first), the newest are
# read whole.
add_test(NAME core-overwrite-out
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-overwrite-out.py
                 $<TARGET_FILE:core-accounting> ${_core_out}/overwrite-out)
set_tests_properties(core-overwrite-out PROPERTIES TIMEOUT 120)

# Many threads recording while main flushes and snapshots, threads coming
# and going, and SIGTERM during recording (issue 30's 32-bit hang): every
# wait bounded, a hang fails saying what was still waited for. Run by the
# cross stage on i686 and armhf too.
add_test(NAME core-stress
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-stress.py $<TARGET_FILE:core-stress>
                 ${_core_out}/stress)
set_tests_properties(core-stress PROPERTIES TIMEOUT 600)

# A program killed by SIGTERM keeps every event its threads recorded, also
# where a clone with no exit signal is refused (qemu-user; no-clone makes
# it so natively), and says so where no drain helper can be made at all.
# no-clone needs the kernel's seccomp headers, which musl-gcc's include
# path lacks: there core-drain runs the plain case only ("-").
include(CheckIncludeFile)
check_include_file(linux/seccomp.h FDR_HAVE_LINUX_SECCOMP_H)
set(_noclone -)
if(FDR_HAVE_LINUX_SECCOMP_H)
  add_executable(no-clone ${_core_src}/progs/no-clone.c)
  set(_noclone $<TARGET_FILE:no-clone>)
endif()
add_test(NAME core-drain
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-drain.py $<TARGET_FILE:core-stress>
                 ${_noclone} ${_core_out}/drain $<TARGET_FILE:fdr-drain>)
set_tests_properties(core-drain PROPERTIES TIMEOUT 120)
# core-open-mark: a trace says when its process was killed before finishing
# it (with its drain helper: a cgroup's kill), for fdr print and fdr stats.
add_test(NAME core-open-mark
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-open-mark.py $<TARGET_FILE:core-stress>
                 $<TARGET_FILE:fdr-cli> ${_core_out}/open-mark)
set_tests_properties(core-open-mark PROPERTIES TIMEOUT 240)

# The consumer sleeps FDR_FLUSH_MS between passes, asked in the layout of
# the futex call that takes it (64-bit time_t on a 32-bit target): seen
# with strace (scripts/deps.sh installs it).
add_test(NAME core-wait
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-wait.py $<TARGET_FILE:core-stress>
                 ${_core_out}/wait)
set_tests_properties(core-wait PROPERTIES TIMEOUT 300)

# No atomic of libfdr, fdrd or fdr is a call into libatomic (a lock where
# the target has no lock-free 64-bit atomics): the target's nm.
add_test(NAME check-atomics
         COMMAND sh ${_core_src}/check-atomics.sh ${CMAKE_NM} $<TARGET_FILE:fdr>
                 $<TARGET_FILE:fdrd> $<TARGET_FILE:fdr-cli>)

add_test(NAME core-time
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-time.py $<TARGET_FILE:core-time>
                 ${_core_out}/time)
set_tests_properties(core-time PROPERTIES TIMEOUT 60)

# core-wrap: event headers keep the clock's low 32 bits; every timestamp
# bt2 rebuilds lies between the clock reads around its event, across
# 2^32-tick gaps (a packet's wrap, a thread idle past its packet's
# limit), in FDR_OUTPUT, an fdr_snapshot and a crash dump (~15 s of
# waiting for the clock: 2^32 ticks are ~2 s on a 2 GHz TSC).
add_test(NAME core-wrap
         COMMAND ${FDR_PYTHON} ${_core_src}/test-core-wrap.py $<TARGET_FILE:core-wrap>
                 ${_core_out}/wrap)
set_tests_properties(core-wrap PROPERTIES TIMEOUT 300)

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

# Two runs into one FDR_OUTPUT: both kept (issue 25); FDR_OUTPUT_KEEP=0 removes them.
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

if(CMAKE_CXX_COMPILER) # a cross toolchain may have no g++
  add_executable(core-cxx ${_core_src}/progs/core-cxx.cpp)
  target_link_libraries(core-cxx PRIVATE fdr Threads::Threads)
  set_target_properties(core-cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                            CXX_EXTENSIONS OFF)
  add_test(NAME core-cxx
           COMMAND ${FDR_PYTHON} ${_core_src}/test-core-cxx.py $<TARGET_FILE:core-cxx>
                   ${_core_out}/cxx)
  set_tests_properties(core-cxx PROPERTIES TIMEOUT 60)
endif()

# Compile-time errors, with the build's compilers and with clang when found.
add_test(NAME core-compile
         COMMAND sh ${_core_src}/test-core-compile.sh ${CMAKE_C_COMPILER} "${CMAKE_CXX_COMPILER}"
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

foreach(case buffer-size packet-size mode drain daemon debug rundir test-daemon-delay test-sndbuf
             test-kill-handing test-no-rings test-reuse-wait test-move-hold output-missing
             output-readonly output-file)
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
  # FDR_MEMORY=0: the writer keeps the one ring the test opens (two 4 KiB
  # packets), where a budget would move it to a larger one, a second memfd.
  set_tests_properties(core-committed-${sig} PROPERTIES TIMEOUT 300
                       ENVIRONMENT "FDR_MEMORY=0")
endforeach()

# docs/hotpath.md is what scripts/disasm-hotpath.py makes from the headers
# today, and the code keeps its promises (disabled: 1 load + 1 branch;
# enabled: no lock, xchg, fence or call);
# the comparison is skipped with another compiler than the one it was made with.
add_test(NAME hotpath-doc
         COMMAND ${FDR_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/disasm-hotpath.py
                 --cc ${CMAKE_C_COMPILER} --check ${PROJECT_SOURCE_DIR}/docs/hotpath.md)
set_tests_properties(hotpath-doc PROPERTIES SKIP_RETURN_CODE 77)

# test-core-carry.c: the carry of a full ring's last discards retries until
# the consumer made room, at a thread's exit (writer.c) and at a flush
# (init.c), instead of giving up at once: the consumer runs only when the
# test lets it (writer hooks replaced: linked statically).
add_executable(test-core-carry ${CMAKE_CURRENT_LIST_DIR}/test-core-carry.c)
target_include_directories(test-core-carry PRIVATE ${FDR_TESTS_DIR}/lib ${PROJECT_SOURCE_DIR}/lib)
target_link_libraries(test-core-carry PRIVATE fdr_static Threads::Threads)
add_test(NAME core-carry COMMAND test-core-carry)
set_tests_properties(core-carry PROPERTIES TIMEOUT 60 ENVIRONMENT
  "FDR_OUTPUT=${_core_out}/carry;FDR_RUNDIR=${_core_out}/carry/no-fdrd;FDR_PACKET_SIZE=4096;FDR_BUFFER_SIZE=16384;FDR_FLUSH_MS=60000;FDR_OUTPUT_KEEP=0")
