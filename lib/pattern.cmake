# pattern.cmake - the event-pattern language module (lib/pattern.c), its unit
# test and its fuzz target. include()d from the top CMakeLists.txt, which owns
# enable_testing() and the warning flags.
#   Adds: lib/pattern.c to FDR_LIB_SOURCES; test "pattern" (cmocka); test
#   "fuzz-pattern-replay" (the fuzz corpus run through the fuzz target); with a
#   clang compiler and FDR_FUZZ=ON, target fuzz-pattern and test "fuzz-pattern"
#   (60 s of libFuzzer on a copy of tests/fuzz/corpus/pattern).
set(_fdr_pattern_lib ${CMAKE_CURRENT_LIST_DIR})
set(_fdr_pattern_root ${CMAKE_CURRENT_LIST_DIR}/..)

list(APPEND FDR_LIB_SOURCES ${_fdr_pattern_lib}/pattern.c)

find_library(FDR_CMOCKA_LIBRARY cmocka)
find_path(FDR_CMOCKA_INCLUDE_DIR cmocka.h)
if(FDR_CMOCKA_LIBRARY AND FDR_CMOCKA_INCLUDE_DIR)
    add_executable(test-pattern ${_fdr_pattern_root}/tests/test-pattern.c
                                ${_fdr_pattern_lib}/pattern.c)
    target_include_directories(test-pattern PRIVATE ${_fdr_pattern_lib}
                                                    ${FDR_CMOCKA_INCLUDE_DIR})
    target_link_libraries(test-pattern PRIVATE ${FDR_CMOCKA_LIBRARY})
    add_test(NAME pattern COMMAND test-pattern)
    set_tests_properties(pattern PROPERTIES TIMEOUT 120)
else()
    message(WARNING "cmocka not found (apt install libcmocka-dev): test 'pattern' disabled")
endif()

# Every build replays the fuzz corpus through the fuzz target (no libFuzzer).
add_executable(fuzz-pattern-replay ${_fdr_pattern_root}/tests/fuzz/fuzz-pattern.c
                                   ${_fdr_pattern_root}/tests/fuzz/replay.c
                                   ${_fdr_pattern_lib}/pattern.c)
target_include_directories(fuzz-pattern-replay PRIVATE ${_fdr_pattern_lib})
add_test(NAME fuzz-pattern-replay
         COMMAND fuzz-pattern-replay ${_fdr_pattern_root}/tests/fuzz/corpus/pattern)

option(FDR_FUZZ "Build libFuzzer targets and their bounded fuzz tests (clang only)" OFF)
if(FDR_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
    add_executable(fuzz-pattern ${_fdr_pattern_root}/tests/fuzz/fuzz-pattern.c
                                ${_fdr_pattern_lib}/pattern.c)
    target_include_directories(fuzz-pattern PRIVATE ${_fdr_pattern_lib})
    target_compile_options(fuzz-pattern PRIVATE -g -O1 -fsanitize=fuzzer,address,undefined
                                                -fno-sanitize-recover=undefined)
    target_link_options(fuzz-pattern PRIVATE -fsanitize=fuzzer,address,undefined)
    add_test(NAME fuzz-pattern
             COMMAND ${_fdr_pattern_root}/tests/fuzz/run-fuzz.sh $<TARGET_FILE:fuzz-pattern>
                     ${_fdr_pattern_root}/tests/fuzz/corpus/pattern 60)
    set_tests_properties(fuzz-pattern PROPERTIES TIMEOUT 180)
endif()
