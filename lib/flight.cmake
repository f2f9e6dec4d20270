# lib/flight.cmake - the flight recorder: snapshots and crash dumps
# (section.c, the tracing-activity protocol, is in the core list).
list(APPEND FDR_LIB_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/snapshot.c
  ${CMAKE_CURRENT_LIST_DIR}/crash.c)
