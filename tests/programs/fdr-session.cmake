# SPDX-License-Identifier: MIT
# fdr-session.cmake - fdrd's control plane and the `fdr` session verbs
# (programs/fdr/session.c, client.c; daemon/; lib/proto). Every test runs a
# real fdrd on a real socket in a run directory of its own under the build
# tree, and kills it at the end (session_helpers.py).
#   fdr-session-proto      C unit test of lib/proto: the validator on good,
#                          truncated, oversized, bad-version, unterminated and
#                          wrong-fd-count messages; fd passing closes what it
#                          refuses; trace-name and run-directory rules
#   fdr-session-verbs      create/enable/disable/filter/start/stop/destroy
#                          round trips, checked through list/status --json
#                          (json.loads, every value); text output; auto-start
#   fdr-session-errors     every verb's error lines and exit statuses (usage
#                          2, refusals 1), list/status with no fdrd
#   fdr-session-limits     32 traces work, the 33rd is refused; pattern-item
#                          bounds
#   fdr-session-daemon     run dir 0700, socket and pid file 0600 (os.stat);
#                          unsafe run dirs refused; a second fdrd refused;
#                          SIGTERM: exit 0, socket and pid file removed; a
#                          stale socket replaced; SIGPIPE never kills it
#   fdr-session-uid        a client of another uid (setpriv nobody) is refused
#                          with a log line and gets nothing; fdr as nobody
#                          refuses a socket that is not its own
#   fdr-session-hostile    garbage, truncated, oversized, bad version,
#                          unterminated, unexpected fds, wrong direction,
#                          1,000 idle connections: logged, dropped, `fdr list`
#                          still served, VmRSS bounded
#   fdr-session-providers  provider table from two real processes: shared
#                          handle, long_size/checksum make another, refcounts
#                          drop on exit and SIGKILL, freed at zero
if(NOT TARGET fdrd OR NOT TARGET fdr_proto)
  return()
endif()

add_executable(test-fdr-session-proto ${CMAKE_CURRENT_LIST_DIR}/test-fdr-session-proto.c)
target_link_libraries(test-fdr-session-proto PRIVATE fdr_proto fdr_common)
target_include_directories(test-fdr-session-proto PRIVATE ${FDR_TESTS_DIR}/lib)
# A driver tests/programs/test-NAME.py run with fdr, fdrd, session-client,
# its work directory OUT and session-prog (session_helpers.py's
# Session), with a timeout.
function(fdr_prog_test name out timeout)
  add_test(NAME ${name}
           COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/test-${name}.py
                   $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                   ${_ses_out}/${out} $<TARGET_FILE:session-prog>)
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout})
endfunction()

add_test(NAME fdr-session-proto COMMAND test-fdr-session-proto)
set_tests_properties(fdr-session-proto PROPERTIES TIMEOUT 60)

add_executable(session-client ${CMAKE_CURRENT_LIST_DIR}/progs/session-client.c)
target_link_libraries(session-client PRIVATE fdr_proto fdr_common)

set(_ses_out ${CMAKE_CURRENT_BINARY_DIR}/session)
foreach(_t verbs errors limits daemon uid hostile providers)
  add_test(NAME fdr-session-${_t}
           COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-session-${_t}.py
                   $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd>
                   $<TARGET_FILE:session-client> ${_ses_out}/${_t})
  set_tests_properties(fdr-session-${_t} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()

# fdr-session-libfdr: instrumented programs (progs/session-prog.c, libfdr)
# register with a real fdrd: providers shared by handle and counted per
# process (unregister, SIGKILL, exit), fdrd SIGKILLed while they record
# (they go on, exit 0, register again with a new fdrd), a daemon that
# accepts and never answers (main runs, exit 0), FDR_DEBUG with no fdrd.
add_executable(session-prog ${CMAKE_CURRENT_LIST_DIR}/progs/session-prog.c)
target_link_libraries(session-prog PRIVATE fdr Threads::Threads)
target_include_directories(session-prog PRIVATE ${FDR_TESTS_DIR}/lib)
target_include_directories(session-prog PRIVATE ${FDR_TESTS_DIR}/lib)
fdr_prog_test(fdr-session-libfdr libfdr 300)

# fdr-daemon-collect: fdrd gives programs their rings (sealed memfds) and
# writes them out: one trace selecting ses:tick, three programs (exit,
# SIGKILL, exit after destroy); per thread recorded + discarded == emitted
# exactly (bt2); a flight-recorder trace written at destroy.
fdr_prog_test(fdr-daemon-collect collect 300)

# fdr-daemon-socket: socket activation without systemd: the test binds
# RUNDIR/fdrd.sock and starts fdrd with it as fd 3 (LISTEN_FDS=1,
# LISTEN_PID); a socket of another path, type or mode and LISTEN_FDS=2 are
# refused with one line; on the right one a trace made with fdr records a
# real program (bt2: recorded + discarded == emitted per thread); SIGTERM
# leaves the socket, and a client queued on it is served by the next fdrd.
fdr_prog_test(fdr-daemon-socket socket 300)

# fdr-session-users: two real users (useradd): B's symlinks and directories
# planted on A's output, snapshot, file-buffers and crash paths are refused
# in one line and never written through; A's own links are followed; a
# squatted /tmp/fdr-UID still gives A an fdrd (issue 26). Root only (77).
add_test(NAME fdr-session-users
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-session-users.py
                 $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                 ${_ses_out}/users $<TARGET_FILE:session-prog> $<TARGET_FILE:flight-crash>)
set_tests_properties(fdr-session-users PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)

# fdr-daemon-kill: 130 programs ended mid-flight (SIGKILL, SIGSEGV, SIGABRT,
# _exit) lose nothing they committed (reported through a pipe).
fdr_prog_test(fdr-daemon-kill kill 600)

# fdr-daemon-fork: 500 children of a multi-threaded parent record through
# fdrd under their own pids, exactly; fork + exec: both images registered.
# Not in the TSan build: a registered program's forked child starts a
# thread of its own, which TSan does not support after a multi-threaded
# fork (it runs in the normal and ASan builds).
if(NOT FDR_SANITIZE MATCHES thread)
  fdr_prog_test(fdr-daemon-fork fork 900)
endif()

# fdr-daemon-scribble: a program that writes over its own rings harms
# neither fdrd nor the two programs recording beside it.
fdr_prog_test(fdr-daemon-scribble scribble 600)
# fdr-daemon-scribble-seeds: the scribbler with 24 seeds (normal build; 8
# under the sanitizers), so that the rare packet fdrd once let through is
# found, not waited for: every scribbler's trace reads.
if(FDR_SANITIZE)
  set(_scr_seeds 8)
else()
  set(_scr_seeds 24)
endif()
add_test(NAME fdr-daemon-scribble-seeds
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-daemon-scribble-seeds.py
                 $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                 ${_ses_out}/scribble-seeds $<TARGET_FILE:session-prog> ${_scr_seeds})
set_tests_properties(fdr-daemon-scribble-seeds PROPERTIES TIMEOUT 600)

# fdr-daemon-full: fdrd's output disk (a 2 MiB tmpfs, root only) fills up:
# fdrd stays up, logs it once, every event it could not write is counted
# (exact per thread, bt2); with room again, a new program's trace is whole.
fdr_prog_test(fdr-daemon-full full 300)
set_tests_properties(fdr-daemon-full PROPERTIES SKIP_RETURN_CODE 77)

# fdr-daemon-recover: traces with file-backed buffers (discard and
# overwrite); fdrd and the programs SIGKILLed; fdr recover rebuilds what
# fdrd had not written (exact per thread with what it had, bt2), a corrupt
# ring skipped and counted; recover's error lines; destroy removes the
# buffer directory; a program shrinking its ring files leaves fdrd up.
fdr_prog_test(fdr-daemon-recover recover 600)

# fdr-daemon-recover-damage: one real buffer directory (fdrd and programs
# SIGKILLed), then 120 seeded copies damaged in 1 to 3 ways (metadata or
# class file zeroed/truncated/removed/flipped, ring or packet headers
# scribbled, rings truncated, counts garbled): fdr recover exits 0 and
# babeltrace2 reads its output, or exits 1 naming the process or ring it
# could not rebuild (and what it wrote still reads); never a crash.
fdr_prog_test(fdr-daemon-recover-damage recover-damage 600)

# fdr-daemon-bounds: a packet header in a ring fdrd gave a program claims
# more bytes than its slot (packet and content size, or content size
# alone; every claimed byte parses as events): fdr snapshot, fdr recover
# and fdrd's writing at a program's end skip it (issue 27).
fdr_prog_test(fdr-daemon-bounds bounds 300)

# fdr-daemon-memory: 1,000 threads hold rings within the memory budget
# (FDR_MEMORY alone, fdr create --memory through fdrd), nothing uncounted;
# threads that end still waiting for their ring (fdrd stopped) count
# their events in a used ring, in a packet of their own; and with no
# thread taking a ring of the route again (the process exits with the
# holders; fdrd killed, the program routed again) the counts still reach
# the trace.
fdr_prog_test(fdr-daemon-memory memory 600)

# fdr-daemon-grow: through a discard trace of fdrd, a thread that fills
# its ring moves to the larger one fdrd keeps ready (fdrd stopped: no
# event discarded, exact, bt2); idle threads keep their small rings.
fdr_prog_test(fdr-daemon-grow grow 600)

# fdr-daemon-traces: four traces at once with their own selections and
# filter masks (exact per thread and trace, bt2); 32 traces at once; a
# trace created/started/stopped/destroyed 50 times while 4 threads record
# into another, which holds none of its events.
fdr_prog_test(fdr-daemon-traces traces 600)

# fdr-daemon-sendq: 4 programs x 3 threads record into a discard trace
# while its mask changes 20+ times (ROUTEs of 16 KiB to every program),
# one program stopped meanwhile (its socket fills): fdrd queues what the
# socket does not take and drops nobody; exact per thread, no event twice
# (bt2).
fdr_prog_test(fdr-daemon-sendq sendq 600)
# fdr-relay-*: fdrd streams to a real /usr/bin/lttng-relayd (issue 16),
# started by the test on free ports (test-fdr-relay.py says what each
# phase shows): basic (unreachable relayd refused; live trace, lttng-live
# lists and follows it; relayd's copy == the local one per thread),
# restart (relayd SIGKILLed and restarted: a second relay session, the gap
# counted as discarded, programs not slowed), fake (a relayd that never
# reads: programs not slowed, fdrd's memory bounded), full (relayd's disk,
# a tmpfs, fills: fdrd's waits grow to 5 s, one relay session for all the
# failed attempts; with room, that session reads, exact per thread; root
# only, else skipped).
foreach(_t basic restart fake full)
  add_test(NAME fdr-relay-${_t}
           COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-relay.py
                   $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                   ${_ses_out}/relay-${_t} $<TARGET_FILE:session-prog> ${_t})
  set_tests_properties(fdr-relay-${_t} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()
# fdr-relay-live60: babeltrace2's lttng-live follows 3 threads at about
# 1,000 events/s each (live period 1 s) for 60 s and never aborts on a
# timestamp that goes back (fdrd's beacons never claim a time the stream
# may still send older events for), then ends with the session, exit 0.
# Normal build only: it runs 60 s by design.
if(NOT FDR_SANITIZE)
  add_test(NAME fdr-relay-live60
           COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-relay.py
                   $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                   ${_ses_out}/relay-live60 $<TARGET_FILE:session-prog> live60)
  set_tests_properties(fdr-relay-live60 PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()

# fdr-relay-hosts: two "hosts" (network and UTS namespaces of the test's
# own, veth pairs) each with its fdrd and a program, one lttng-relayd:
# lttng-live lists and follows both; host A's fdrd SIGKILLed: host B's
# stream intact, what A sent readable. Skipped where namespaces cannot be
# made.
add_test(NAME fdr-relay-hosts
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-relay-hosts.py
                 $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                 ${_ses_out}/relay-hosts $<TARGET_FILE:session-prog>)
set_tests_properties(fdr-relay-hosts PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)

# fdr-daemon-control: fdr control steers a running program through fdrd
# (events recorded and printed, tunables; checked in the program's own
# trace), refusals, and the scope's trace (ephemeral, one pid, live
# stream files without relayd).
fdr_prog_test(fdr-daemon-control control 300)

# fdr-daemon-death: fdrd killed (SIGKILL) while 4 programs record into a
# discard trace; `fdr list` starts it again with the trace it had (kept
# in RUNDIR/traces), a torn stream tail cut, bad definitions one log line
# each; the programs register again by themselves; babeltrace2 reads the
# whole trace and per thread recorded + discarded == emitted, exactly.
fdr_prog_test(fdr-daemon-death death 300)

# fdr-daemon-early: what programs record before fdrd's route reaches them
# (issue 24): a two-thread parent's 200 forked children of 1,000 events,
# short programs of one event (1,000; 200 in the sanitizer builds, where
# each start costs tens of ms), 10 programs idle after 5 events, fork +
# exec and system(), a program SIGKILLed once routed, 3 programs with
# FDR_OUTPUT of 100 threads waiting for their rings ("lanes"), of 8
# threads whose rings never come, their past copied by fdrd ("kept"), and
# of 8 threads that end while fdr's thread moves them ("exiting"): per process
# and thread, recorded + discarded == emitted (bt2). FDR_TEST_ONLY=lanes
# (phases, comma-separated) runs some only. In the TSan build
# without the forked children and fork + exec (TSan does not support a
# thread started after a multi-threaded fork: as fdr-daemon-fork).
fdr_prog_test(fdr-daemon-early early 900)

# fdr-daemon-lost: a process that ends before any ring of its route came
# (FDR_TEST_NO_RINGS: libfdr closes every ring fdrd sends) has what its
# threads lost counted in the trace, exiting or killed (fdrd reads it in
# its own ring) or sent at exit (LOST): 2,000 of 2,000 events discarded
# (bt2) for each process, none made up without the hook.
fdr_prog_test(fdr-daemon-lost lost 300)

# fdr-daemon-start: a program started under fdrd takes fdrd's measure of its
# counter from the run directory (issue 29): no sleep before its first
# events (strace), its metadata clock and class-file line clock are that
# frequency; a file 1% off is not taken (FDR_DEBUG says so).
fdr_prog_test(fdr-daemon-start start 300)

# fdr-daemon-ended: processes that end without exit handlers before fdrd's
# route reaches them (raise(SIGKILL), _exit, SIGSEGV, a forked child's
# exec, SIGKILL from outside at random moments, a second thread's ring made
# while the fdr-daemon thread sleeps): fdrd copies their early events from
# the own rings they handed over at registration or ring creation; per process
# and thread recorded + discarded == emitted (bt2). Without the exec part
# in the TSan build (a thread after a multi-threaded fork, as above).
fdr_prog_test(fdr-daemon-ended ended 300)
if(FDR_SANITIZE MATCHES thread)
  set_tests_properties(fdr-daemon-ended PROPERTIES ENVIRONMENT "FDR_TEST_FORKS=0")
endif()
if(FDR_SANITIZE MATCHES thread)
  set_tests_properties(fdr-daemon-early PROPERTIES ENVIRONMENT
                       "FDR_TEST_SHORT=200;FDR_TEST_FORKS=0")
elseif(FDR_SANITIZE)
  # With the fork storm: the child of 200 once missing under ASan was one
  # blocked in connect behind fdrd's listen queue (128) for longer than
  # its exit waits; the queue is 4096 now, and a child that ends first is
  # copied from its own rings.
  set_tests_properties(fdr-daemon-early PROPERTIES ENVIRONMENT "FDR_TEST_SHORT=200")
endif()

# fdr-daemon-wrap: event headers keep the clock's low 32 bits; two traces
# started at once (one the fast path's ring, the other a lane the slow
# path copies into) hold every time exact across 2^32-tick gaps (~5 s of
# waiting for the clock).
add_test(NAME fdr-daemon-wrap
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-daemon-wrap.py
                 $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                 ${_ses_out}/wrap $<TARGET_FILE:core-wrap>)
set_tests_properties(fdr-daemon-wrap PROPERTIES TIMEOUT 300)
