# SPDX-License-Identifier: MIT
# fdr-export.cmake - `fdr export` (programs/fdr/export.c):
#   fdr-export   Chrome JSON and Perfetto protobuf of a trace with slices,
#                counters and every field type, two processes, compared with
#                bt2 event by event (the protobuf decoded by protoc against
#                programs/fdr/perfetto.proto); --filter; bad arguments, a
#                missing trace, a corrupt stream, an unwritable output
add_executable(export-prog ${CMAKE_CURRENT_LIST_DIR}/progs/export-prog.c)
target_link_libraries(export-prog PRIVATE fdr Threads::Threads)
# offline-prog comes from fdr-offline.cmake (generator expressions are
# resolved once every fragment is read).
add_test(NAME fdr-export
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-export.py
                 $<TARGET_FILE:fdr-cli> $<TARGET_FILE:export-prog> $<TARGET_FILE:offline-prog>
                 ${PROJECT_SOURCE_DIR}/programs/fdr/perfetto.proto
                 ${CMAKE_CURRENT_BINARY_DIR}/fdr-export)
set_tests_properties(fdr-export PROPERTIES TIMEOUT 300)
