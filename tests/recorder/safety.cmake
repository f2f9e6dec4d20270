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
set(_sf_cases resethand nodefer mask loop ignfault ignsent dflsent snapsegv snapabrt)
if(FDR_SANITIZE MATCHES thread)
  # TSan delivers signals to handlers itself, with masks of its own: the
  # masks seen inside a handler are not the kernel's, with or without fdr.
  list(REMOVE_ITEM _sf_cases nodefer mask)
endif()
foreach(c ${_sf_cases})
  add_test(NAME safety-signal-${c} COMMAND test-safety-signal ${c})
  set_tests_properties(safety-signal-${c} PROPERTIES TIMEOUT 180)
endforeach()

#   safety-fork         test-safety-fork.c: 1,000 children forked at random
#                       moments while 7 threads are inside every API that
#                       locks; each child calls them all: none may hang
add_executable(test-safety-fork ${_sf_src}/test-safety-fork.c)
target_include_directories(test-safety-fork PRIVATE ${FDR_TESTS_DIR}/lib)
target_link_libraries(test-safety-fork PRIVATE fdr Threads::Threads)
set(_sf_fork ${CMAKE_CURRENT_BINARY_DIR}/safety-fork)
if(FDR_SANITIZE)
  set(_sf_children 200) # each fork of a sanitized process is slow
else()
  set(_sf_children 1000)
endif()
add_test(NAME safety-fork
         COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1/trace\" && exec \"$0\" \"$1\" $2"
                 $<TARGET_FILE:test-safety-fork> ${_sf_fork} ${_sf_children})
set(_sf_tsan "")
if(FDR_SANITIZE MATCHES thread)
  # The child starts a helper thread, which TSan does not support after a
  # multi-threaded fork: locks are checked, the child's helper is not.
  set(_sf_tsan "TSAN_OPTIONS=die_after_fork=0;SAFETY_FORK_NO_HELPER=1;")
elseif(FDR_SANITIZE MATCHES address)
  # GCC 12's libasan does not take its allocator's locks around fork():
  # a thread started in a child forked while a parent thread allocates
  # can wait forever inside ASan itself (seen: pthread_getattr_np -> free
  # -> quarantine -> a size class's mutex). fdr's locks are still checked.
  set(_sf_tsan "SAFETY_FORK_NO_HELPER=1;")
endif()
set_tests_properties(safety-fork PROPERTIES TIMEOUT 600
  ENVIRONMENT "${_sf_tsan}FDR_OUTPUT=${_sf_fork}/trace;FDR_BUFFER_SIZE=64K;FDR_PACKET_SIZE=4K;FDR_SNAPSHOT_SIGNAL=USR2;FDR_SNAPSHOT_DIR=${_sf_fork}/sig")

#   safety-input-CASE   test-safety-input.c: a FIFO as FDR_TRACES=@file and
#                       as FDR_TRACE_FILE (no hang, one line), /dev/full as
#                       FDR_TRACE_FILE (one line), numbers with a leading
#                       space or '+' refused
add_executable(test-safety-input ${_sf_src}/test-safety-input.c)
target_link_libraries(test-safety-input PRIVATE fdr)
foreach(c fifo-traces fifo-file full space plus crashplus rtspace)
  add_test(NAME safety-input-${c}
           COMMAND test-safety-input ${c} ${CMAKE_CURRENT_BINARY_DIR}/safety-input)
  set_tests_properties(safety-input-${c} PROPERTIES TIMEOUT 120)
endforeach()

#   safety-dlclose      test-safety-dlclose.c: a module with call sites and
#                       a tunable, dlopen()ed, used, dlclose()d, then every
#                       control API (SEGV before), then opened again
add_library(safety-module MODULE ${_sf_src}/progs/safety-module.c)
target_link_libraries(safety-module PRIVATE fdr)
add_executable(test-safety-dlclose ${_sf_src}/test-safety-dlclose.c)
target_link_libraries(test-safety-dlclose PRIVATE fdr ${CMAKE_DL_LIBS})
target_include_directories(test-safety-dlclose PRIVATE ${FDR_TESTS_DIR}/lib)
add_test(NAME safety-dlclose
         COMMAND test-safety-dlclose $<TARGET_FILE:safety-module>)
set_tests_properties(safety-dlclose PROPERTIES TIMEOUT 60)
