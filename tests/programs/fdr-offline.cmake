# SPDX-License-Identifier: MIT
# fdr-offline.cmake - the offline verbs of the fdr command (programs/fdr:
# print.c, stats.c, record.c, on lib/common/reader.c), with traces written
# by tests/programs/progs/offline-prog.c and read back with bt2:
#   fdr-offline-print    fdr print equals babeltrace2 event by event in time
#                        order (every field type, 4 threads, 2 processes),
#                        values parsed from the lines; --filter, --pid, --tid,
#                        --since, --until counted against bt2; bad arguments
#   fdr-offline-corrupt  a stream cut mid-packet, a scribbled packet header, a
#                        packet whose sizes claim more than the packet or the
#                        file (copies of its events behind: none read twice),
#                        a garbage class file, an empty and a missing
#                        directory: one line naming file and offset, the rest
#                        printed, exit 1 (print, stats, export)
#   fdr-offline-stats    fdr stats --json counts per class, thread and process
#                        equal bt2's; with discards (tiny rings and a burst):
#                        discarded > 0, read + discarded == emitted; the table
#   fdr-offline-record   fdr record: layout DIR/<name>-<pid>/, summary numbers
#                        equal bt2's, -e selection, --quiet, exit status and
#                        death by signal passed through, signals forwarded once,
#                        bad pattern (exit 2, command not run), missing (127)
#                        and non-executable (126) commands, a non-empty -o DIR
set(_ofl ${CMAKE_CURRENT_LIST_DIR})
add_executable(offline-prog ${_ofl}/progs/offline-prog.c)
target_link_libraries(offline-prog PRIVATE fdr Threads::Threads m)
foreach(_t print corrupt stats record)
  add_test(NAME fdr-offline-${_t}
           COMMAND ${FDR_PYTHON} ${_ofl}/test-fdr-offline-${_t}.py $<TARGET_FILE:fdr-cli>
                   $<TARGET_FILE:offline-prog> ${CMAKE_CURRENT_BINARY_DIR}/fdr-offline-${_t})
  set_tests_properties(fdr-offline-${_t} PROPERTIES TIMEOUT 300)
endforeach()
# Under TSan the ^C-on-a-terminal part of fdr-offline-record hung once in
# six full runs (never alone): TSan's runtime delivers signals itself. That
# part runs in the normal and ASan builds.
if(FDR_SANITIZE MATCHES thread)
  set_property(TEST fdr-offline-record PROPERTY ENVIRONMENT FDR_TEST_NO_TTY=1)
endif()
