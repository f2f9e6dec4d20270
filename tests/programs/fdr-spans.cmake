# SPDX-License-Identifier: MIT
# fdr-spans.cmake - spans (include/fdr/span.h, issue 33):
#   fdr-spans   span-prog's nested, async (ended on another thread) and
#               unbalanced spans read by bt2 (layout, depths, pairs, counts);
#               `fdr stats --json` count, total, min, p50, p90, p99, max and
#               self time equal to what the driver computes from bt2's
#               events, and what did not pair counted; `fdr export` to
#               Perfetto decoded by protoc (programs/fdr/perfetto.proto):
#               slices nest exactly as the driver pairs them, async spans on
#               tracks of their own with a flow to the end's thread; Chrome
#               JSON B/E and b/e; the crash dump names the spans open on
#               each thread; a C++ scoped span ends in its destructor.
add_executable(span-prog ${CMAKE_CURRENT_LIST_DIR}/progs/span-prog.c)
target_link_libraries(span-prog PRIVATE fdr Threads::Threads)
set(_span_cxx none) # a cross toolchain may have no g++: no C++ part then
if(CMAKE_CXX_COMPILER)
  add_executable(span-cxx ${CMAKE_CURRENT_LIST_DIR}/progs/span-cxx.cc)
  target_link_libraries(span-cxx PRIVATE fdr)
  set_target_properties(span-cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                            CXX_EXTENSIONS OFF)
  set(_span_cxx $<TARGET_FILE:span-cxx>)
endif()
add_test(NAME fdr-spans
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-fdr-spans.py
                 $<TARGET_FILE:fdr-cli> $<TARGET_FILE:span-prog> ${_span_cxx}
                 ${PROJECT_SOURCE_DIR}/programs/fdr/perfetto.proto
                 ${CMAKE_CURRENT_BINARY_DIR}/fdr-spans)
set_tests_properties(fdr-spans PROPERTIES TIMEOUT 120)
