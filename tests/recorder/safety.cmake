# SPDX-License-Identifier: MIT
# safety.cmake - fdr never harms the program (issue 11, second half):
# signals chained exactly as without fdr, modules unloaded with dlclose,
# fork while fdr holds a lock, inputs that could block.
#   safety-signal-CASE  test-safety-signal.c: the same wait status and
#                       output with and without fdr's crash handler
set(_sf_src ${CMAKE_CURRENT_LIST_DIR})

add_executable(test-safety-signal ${_sf_src}/test-safety-signal.c)
target_link_libraries(test-safety-signal PRIVATE fdr)
if(FDR_SANITIZE MATCHES undefined)
  # The null store is the point: UBSan would stop it before the signal.
  target_compile_options(test-safety-signal PRIVATE -fno-sanitize=undefined)
endif()
foreach(c resethand nodefer mask loop ignfault ignsent dflsent snapsegv snapabrt)
  add_test(NAME safety-signal-${c} COMMAND test-safety-signal ${c})
  set_tests_properties(safety-signal-${c} PROPERTIES TIMEOUT 180)
endforeach()
