# SPDX-License-Identifier: MIT
# fdr-scope.cmake - `fdr scope` without a browser (programs/fdr/scope/;
# docs/scope-api.md). Each driver gets fdr, fdrd, session-client, its work
# directory and scope-prog (tests/scope/scope-prog.c); a real fdrd of its
# own on a real socket (session_helpers.py), HTTP with urllib
# (scope_client.py), values checked against bt2's reading of traces.
#   fdr-scope-http   the token on every path, 404/405/431/413/400/409,
#                    the embedded page, /api/info and /api/events of a
#                    replay, a stream's points equal to the trace's values
#                    and times (split, width thinning, tail, bad pattern),
#                    idle and vanished clients, 16 streams then 503
#   fdr-scope-live   `fdr scope -- scope-prog`: events and tunables, the
#                    stream's points equal to the program's own trace
#                    (FDR_OUTPUT), record off/on and a tunable seen in that
#                    trace, out-of-range refused, replay of the program's
#                    trace gives the same points, SIGTERM and SIGKILL leave
#                    no trace in fdrd and no files, PID mode
#   fdr-scope-flood  1,000 half-open connections without the token held
#                    on the port: /api/info answered 200 at once while
#                    they hold, and each is closed after about a second
#                    (scope/gate.c; issue 26)
# (scope-prog and session-client are made later: tests/scope, fdr-session.cmake)
if(NOT TARGET fdrd)
  return()
endif()
set(_scope_out ${CMAKE_CURRENT_BINARY_DIR}/scope)
foreach(_t http live flood)
  add_test(NAME fdr-scope-${_t}
           COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-scope-${_t}.py
                   $<TARGET_FILE:fdr-cli> $<TARGET_FILE:fdrd> $<TARGET_FILE:session-client>
                   ${_scope_out}/${_t} $<TARGET_FILE:scope-prog>)
  set_tests_properties(fdr-scope-${_t} PROPERTIES TIMEOUT 300)
endforeach()
