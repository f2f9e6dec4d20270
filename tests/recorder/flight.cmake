# SPDX-License-Identifier: MIT
# flight.cmake - the flight recorder (issue #4): the tracing-section
# protocol under load, snapshots, crash dumps, re-entrancy from a signal
# handler.
#   test-flight-stress.c         1M quiesce cycles with the barrier (zero
#                                violations) and without it (must see some)
#   test-flight-*.py             drivers of progs/flight-*.c, traces
#                                read with bt2 through tracecheck.py
# Under sanitizers the stress runs fewer cycles (each is ~10x slower); the
# no-barrier run is left out under TSan, which rightly reports the races it
# provokes.
set(_fl_src ${CMAKE_CURRENT_LIST_DIR})
set(_fl_out ${CMAKE_CURRENT_BINARY_DIR}/flight)
file(MAKE_DIRECTORY ${_fl_out})

add_executable(test-flight-stress ${_fl_src}/test-flight-stress.c)
target_include_directories(test-flight-stress PRIVATE ${PROJECT_SOURCE_DIR}/lib ${PROJECT_SOURCE_DIR}/lib/recorder
                           ${FDR_TESTS_DIR}/lib)
target_link_libraries(test-flight-stress PRIVATE fdr_static Threads::Threads m)

foreach(p crash snapshot reentry scribble)
  add_executable(flight-${p} ${_fl_src}/progs/flight-${p}.c)
  target_link_libraries(flight-${p} PRIVATE fdr Threads::Threads m)
endforeach()
target_include_directories(flight-scribble PRIVATE ${FDR_TESTS_DIR}/lib)
target_include_directories(flight-snapshot PRIVATE ${FDR_TESTS_DIR}/lib)
if(FDR_SANITIZE MATCHES undefined)
  # The crashes are the point: UBSan would stop the null store and the
  # division by zero before the signal does.
  target_compile_options(flight-crash PRIVATE -fno-sanitize=undefined)
  target_compile_options(flight-scribble PRIVATE -fno-sanitize=undefined)
endif()

if(FDR_SANITIZE MATCHES thread)
  set(_fl_cycles 20000)   # ~4 ms a cycle under TSan
  set(_fl_sig_cycles 3000)
elseif(FDR_SANITIZE)
  set(_fl_cycles 100000)  # ~100 us a cycle under ASan
  set(_fl_sig_cycles 10000)
else()
  set(_fl_cycles 1000000) # ~50 us a cycle: ~50 s
  set(_fl_sig_cycles 30000)
endif()
add_test(NAME flight-stress COMMAND test-flight-stress ${_fl_cycles} barrier 90)
set_tests_properties(flight-stress PROPERTIES TIMEOUT 150)
# The fallback barrier (signals instead of membarrier), fewer cycles: each
# costs two signal deliveries.
add_test(NAME flight-stress-signal COMMAND test-flight-stress ${_fl_sig_cycles} barrier 90)
set_tests_properties(flight-stress-signal PROPERTIES TIMEOUT 150
                     ENVIRONMENT "FDR_SECTION_BARRIER=signal")
# The run without the barrier shows the stress test can fail: a race that
# needs the writer's store and the controller's load to cross in the store
# buffer. Sanitizers slow the writer so much that the window rarely opens
# (0 in 100,000 cycles under ASan) and TSan reports the race itself; it is
# meaningful in the normal build only.
if(NOT FDR_SANITIZE)
  add_test(NAME flight-stress-nobarrier COMMAND test-flight-stress ${_fl_cycles} nobarrier 150)
  set_tests_properties(flight-stress-nobarrier PROPERTIES TIMEOUT 300)
endif()

add_test(NAME flight-crash
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-crash.py $<TARGET_FILE:flight-crash>
                 ${_fl_out}/crash)
set_tests_properties(flight-crash PROPERTIES TIMEOUT 150)

add_test(NAME flight-snapshot
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-snapshot.py
                 $<TARGET_FILE:flight-snapshot> ${_fl_out}/snapshot)
set_tests_properties(flight-snapshot PROPERTIES TIMEOUT 150)

add_test(NAME flight-reentry
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-reentry.py
                 $<TARGET_FILE:flight-reentry> ${_fl_out}/reentry)
set_tests_properties(flight-reentry PROPERTIES TIMEOUT 150)

# Memory fdr does not own is not trusted: a program that scribbles its own
# ring header and packet headers, then snapshots, crashes or flushes; a
# packet header that claims more than its slot, at every reader of a ring
# in the process (the crash dump too).
# flight-scribble-race: the write lands between the consumer's check of a
# batch and its write (test hook, so linked statically).
add_executable(flight-scribble-race ${_fl_src}/progs/flight-scribble-race.c)
target_include_directories(flight-scribble-race PRIVATE ${PROJECT_SOURCE_DIR}/lib)
target_link_libraries(flight-scribble-race PRIVATE fdr_static Threads::Threads)
add_test(NAME flight-scribble
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-scribble.py
                 $<TARGET_FILE:flight-scribble> ${_fl_out}/scribble
                 $<TARGET_FILE:flight-scribble-race>)
set_tests_properties(flight-scribble PROPERTIES TIMEOUT 150)

# Random scribbles, seeded, over the header page and the packets, then each
# way out (snapshot, flush, exit, crash, SIGKILL): never a crash, every
# trace left reads (test-flight-scribble-seeds.py). A bounded count here
# (40 seeds, ~1 s each; 10 under the sanitizers); the fuzz build
# (-DFDR_FUZZ=ON, scripts/test.sh runs its "fuzz" tests) runs 1,000.
if(FDR_SANITIZE)
  set(_fl_seeds 10)
else()
  set(_fl_seeds 40)
endif()
add_test(NAME flight-scribble-seeds
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-scribble-seeds.py
                 $<TARGET_FILE:flight-scribble> ${_fl_out}/scribble-seeds ${_fl_seeds})
set_tests_properties(flight-scribble-seeds PROPERTIES TIMEOUT 300)
if(FDR_FUZZ)
  add_test(NAME fuzz-scribble-seeds
           COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-scribble-seeds.py
                   $<TARGET_FILE:flight-scribble> ${_fl_out}/fuzz-scribble-seeds 1000)
  set_tests_properties(fuzz-scribble-seeds PROPERTIES TIMEOUT 3600)
endif()

# test-flight-pool.py with progs/flight-pool.c: memory that follows
# activity. 1,000 threads (10 busy) in overwrite mode: RSS added and rings
# within the budget, the snapshot holds each busy thread's newest events
# and each quiet thread's last.
add_executable(flight-pool ${_fl_src}/progs/flight-pool.c)
target_link_libraries(flight-pool PRIVATE fdr Threads::Threads)
# Under the sanitizers RSS also counts their shadow memory and quarantine
# (60 MiB added under ASan): there the rings are checked, not RSS.
if(FDR_SANITIZE)
  set(_fl_rss no-rss)
else()
  set(_fl_rss rss)
endif()
add_test(NAME flight-pool
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-pool.py $<TARGET_FILE:flight-pool>
                 ${_fl_out}/pool ${_fl_rss})
set_tests_properties(flight-pool PROPERTIES TIMEOUT 600)
# test-disk-pool.py: the same program writing to disk (FDR_OUTPUT): 1,000
# threads, 3 busy ones grow, the idle ones keep small rings, RSS and
# rings within the budget, every busy event in the trace.
add_test(NAME disk-pool
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-disk-pool.py $<TARGET_FILE:flight-pool>
                 ${_fl_out}/disk-pool ${_fl_rss})
set_tests_properties(disk-pool PROPERTIES TIMEOUT 900)

# test-flight-barrier-wait.py with progs/flight-barrier-wait.c: a writer
# held in its barrier signal handler until the controller has passed its
# deadline (a retry counted, test hook fdr__section_barrier_hook): the
# snapshot waits for it, returns 0 and holds each writer's newest events
# up to its last. The slow-writer
# path on any machine, however fast; nothing depends on time.
add_executable(flight-barrier-wait ${_fl_src}/progs/flight-barrier-wait.c)
target_include_directories(flight-barrier-wait PRIVATE ${PROJECT_SOURCE_DIR}/lib)
target_link_libraries(flight-barrier-wait PRIVATE fdr_static Threads::Threads)
add_test(NAME flight-barrier-wait
         COMMAND ${FDR_PYTHON} ${_fl_src}/test-flight-barrier-wait.py
                 $<TARGET_FILE:flight-barrier-wait> ${_fl_out}/barrier-wait)
set_tests_properties(flight-barrier-wait PROPERTIES TIMEOUT 300)

# test-flight-snapshot-packets.c: a snapshot holds, packet by packet, what
# the ring held (header fields and bytes, read from the ring itself):
# every complete packet, oldest first, then the open packet's committed
# events; with a packet open and with none (then the oldest slot holds a
# complete packet too). Linked statically: it reads the rings.
add_executable(test-flight-snapshot-packets ${_fl_src}/test-flight-snapshot-packets.c)
target_include_directories(test-flight-snapshot-packets PRIVATE ${FDR_TESTS_DIR}/lib
                           ${PROJECT_SOURCE_DIR}/lib)
target_link_libraries(test-flight-snapshot-packets PRIVATE fdr_static Threads::Threads)
add_test(NAME flight-snapshot-packets
         COMMAND test-flight-snapshot-packets ${_fl_out}/snapshot-packets)
set_tests_properties(flight-snapshot-packets PROPERTIES TIMEOUT 60 ENVIRONMENT
  "FDR_RUNDIR=${_fl_out}/snapshot-packets-rundir;FDR_PACKET_SIZE=4096;FDR_BUFFER_SIZE=16384")
