# provider.cmake - explicit providers and generic raw events (lib/provider.c,
# include/fdr/provider.h). Tests are in tests/provider.cmake.
list(APPEND FDR_LIB_SOURCES ${CMAKE_CURRENT_LIST_DIR}/provider.c)
