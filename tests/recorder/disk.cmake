# SPDX-License-Identifier: MIT
# disk.cmake - a trace on disk always opens (issue #11, first half):
# processes sharing FDR_OUTPUT, SIGKILL and _exit while recording, a full
# disk, paths another user prepared. One helper program,
# tests/recorder/progs/disk-prog.c; drivers tests/recorder/test-disk-*.py
# read the traces with bt2 (tests/lib/tracecheck.py).
set(_dk_src ${CMAKE_CURRENT_LIST_DIR})
set(_dk_out ${CMAKE_CURRENT_BINARY_DIR}/disk)
file(MAKE_DIRECTORY ${_dk_out})

add_executable(disk-prog ${_dk_src}/progs/disk-prog.c)
target_link_libraries(disk-prog PRIVATE fdr Threads::Threads m)
if(FDR_SANITIZE MATCHES undefined)
  target_compile_options(disk-prog PRIVATE -fno-sanitize=undefined)
endif()

if(FDR_SANITIZE)
  set(_dk_kills 20)
else()
  set(_dk_kills 100)
endif()
foreach(t share kill full symlink evidence fds)
  set(_args)
  if(t STREQUAL kill)
    set(_args ${_dk_kills})
  endif()
  add_test(NAME disk-${t}
           COMMAND ${FDR_PYTHON} ${_dk_src}/test-disk-${t}.py $<TARGET_FILE:disk-prog>
                   ${_dk_out}/${t} ${_args})
  set_tests_properties(disk-${t} PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77)
endforeach()

# test-disk-fault.py: one write to a stream file cut short, then EIO, by an
# LD_PRELOAD library (progs/fault-writev.c, fault injection): the file keeps
# only whole packets, the loss is counted; a batch that fails once is
# written again whole ("retry"). Not with sanitizers, whose
# runtimes must come first in the preload list.
if(NOT FDR_SANITIZE)
  add_library(fault-writev MODULE ${_dk_src}/progs/fault-writev.c)
  target_link_libraries(fault-writev PRIVATE ${CMAKE_DL_LIBS})
  foreach(who flush consumer retry)
    add_test(NAME disk-fault-${who}
             COMMAND ${FDR_PYTHON} ${_dk_src}/test-disk-fault.py $<TARGET_FILE:disk-prog>
                     $<TARGET_FILE:fault-writev> ${_dk_out}/fault-${who} ${who})
    set_tests_properties(disk-fault-${who} PROPERTIES TIMEOUT 300)
  endforeach()
endif()
