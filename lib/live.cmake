# live.cmake - live tracing and runtime control (issue #5): tunables. The
# pattern language has its own fragment (pattern.cmake); control.c and
# print.c are in the core list of the top CMakeLists.txt.
list(APPEND FDR_LIB_SOURCES ${CMAKE_CURRENT_LIST_DIR}/tunable.c)
