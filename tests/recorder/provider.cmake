# SPDX-License-Identifier: MIT
# provider.cmake - tests of providers and raw events (lib/recorder/provider.c), of the
# compile-out switch (-DFDR_DISABLE) and of the installed package.
#   provider          unit test: identity, conflicts, refcounts, bad input,
#                     fdr_raw_event() return codes (tests/recorder/test-provider.c)
#   provider-raw      raw payloads as babeltrace2 reads them, 64 KiB packets
#   provider-raw-4k   the same with 4 KiB packets (another size limit)
#   disable           -DFDR_DISABLE leaves no symbol, string or section and
#                     runs no argument (tests/recorder/disable/check-disable.sh)
#   install           cmake --install into a temporary DESTDIR/prefix, then
#                     consumers built with pkg-config and find_package(fdr)
#   install-exports   libfdr.so exports exactly what the headers declare
add_executable(test-provider ${CMAKE_CURRENT_LIST_DIR}/test-provider.c)
target_link_libraries(test-provider PRIVATE fdr)
target_include_directories(test-provider PRIVATE ${FDR_TESTS_DIR}/lib)
add_test(NAME provider COMMAND test-provider)
set_tests_properties(provider PROPERTIES TIMEOUT 60)

add_executable(provider-raw ${CMAKE_CURRENT_LIST_DIR}/progs/provider-raw.c)
target_link_libraries(provider-raw PRIVATE fdr)
add_test(NAME provider-raw
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-provider-raw.py
                 $<TARGET_FILE:provider-raw> ${CMAKE_CURRENT_BINARY_DIR}/provider-raw.trace)
add_test(NAME provider-raw-4k
         COMMAND ${FDR_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test-provider-raw.py
                 $<TARGET_FILE:provider-raw> ${CMAKE_CURRENT_BINARY_DIR}/provider-raw-4k.trace
                 4096)
set_tests_properties(provider-raw provider-raw-4k PROPERTIES TIMEOUT 60)

# The example and the consumers are built by the scripts, with the same
# sanitizer as libfdr: a sanitized library needs a sanitized program.
set(_fdr_san_flags "")
if(FDR_SANITIZE)
  set(_fdr_san_flags "-fsanitize=${FDR_SANITIZE}")
endif()
add_test(NAME disable
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/disable/check-disable.sh ${CMAKE_C_COMPILER}
                 "${CMAKE_CXX_COMPILER}" ${PROJECT_SOURCE_DIR}/include
                 $<TARGET_FILE_DIR:fdr> ${CMAKE_CURRENT_BINARY_DIR}/disable.work
                 "${_fdr_san_flags}")
set_tests_properties(disable PROPERTIES TIMEOUT 120)

add_test(NAME install
         COMMAND sh ${FDR_TESTS_DIR}/install/check-install.sh ${CMAKE_COMMAND}
                 ${CMAKE_BINARY_DIR} ${CMAKE_INSTALL_LIBDIR} ${CMAKE_C_COMPILER}
                 ${FDR_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/install.work "${_fdr_san_flags}")
set_tests_properties(install PROPERTIES TIMEOUT 180)

add_test(NAME install-exports
         COMMAND ${FDR_PYTHON} ${FDR_TESTS_DIR}/install/check-exports.py
                 $<TARGET_FILE:fdr> ${PROJECT_SOURCE_DIR}/include)
set_tests_properties(install-exports PROPERTIES TIMEOUT 30)

# The public headers under QEMU's and Lua's warning flags (issue 10).
add_test(NAME install-headers-strict
         COMMAND sh ${FDR_TESTS_DIR}/install/check-headers.sh ${PROJECT_SOURCE_DIR}/include
                 ${CMAKE_CURRENT_BINARY_DIR}/headers-strict.work)
set_tests_properties(install-headers-strict PROPERTIES TIMEOUT 180)
