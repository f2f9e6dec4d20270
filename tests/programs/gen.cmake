# SPDX-License-Identifier: MIT
# gen.cmake - tests of fdr-gen (programs/gen/fdr-gen.c, gen-parse.c,
# gen-emit.c): trace-event definition files to a C/C++ header (issue #6).
#   gen-ok-syntax, gen-ok-warn: headers compared with gen/expected/;
#   gen-skip: a file with one bad line: the others generated, exit 0;
#   gen-run-c, gen-run-cxx: the generated header compiled (C, C++), run with
#     FDR_OUTPUT and the trace checked with bt2 (gen/check-run.py): values,
#     live text, and the display base of %x/%o fields;
#   gen-run-qemu: the same program and checks on the header that
#     contrib/qemu/fdr.py (QEMU's tracetool back-end) makes, in QEMU's shape;
#   gen-compile: strict C11 with gcc and clang, C++17 with g++ and clang++,
#     and a -DFDR_DISABLE build that must not need libfdr;
#   gen-bad-<case>: each gen/bad/<case>.trace-events with --strict, exact
#     message (<case>.err), exit 1 and no output; gen-usage-*: command-line
#     errors;
#   gen-corpus: real QEMU files, only where ../shared/corpus exists (CI);
#   fuzz-gen-replay: the seed corpus through the fuzz target; with clang and
#     FDR_FUZZ=ON, fuzz-gen: 60 s of libFuzzer (tests/fuzz/run-fuzz.sh).
set(_gen_src ${CMAKE_CURRENT_LIST_DIR}/gen)
set(_gen_tools ${PROJECT_SOURCE_DIR}/programs/gen)
set(_gen_out ${CMAKE_CURRENT_BINARY_DIR}/gen)
file(MAKE_DIRECTORY ${_gen_out})

# The header the run and compile tests use, made at build time.
add_custom_command(
  OUTPUT ${_gen_out}/gen-syntax.h
  COMMAND fdr-gen --provider gent --include gen-types.h -o ${_gen_out}/gen-syntax.h
          ok/syntax.trace-events ok/second.trace-events
  WORKING_DIRECTORY ${_gen_src}
  DEPENDS fdr-gen ${_gen_src}/ok/syntax.trace-events ${_gen_src}/ok/second.trace-events
  COMMENT "fdr-gen tests/gen/ok/syntax.trace-events")
add_custom_target(gen-syntax-header DEPENDS ${_gen_out}/gen-syntax.h)

add_executable(gen-run ${CMAKE_CURRENT_LIST_DIR}/progs/gen-run.c)
set(_gen_runs gen-run)
if(CMAKE_CXX_COMPILER) # a cross toolchain may have no g++
  add_executable(gen-run-cxx ${CMAKE_CURRENT_LIST_DIR}/progs/gen-run-cxx.cc)
  list(APPEND _gen_runs gen-run-cxx)
endif()
foreach(t ${_gen_runs})
  add_dependencies(${t} gen-syntax-header)
  target_include_directories(${t} PRIVATE ${_gen_out} ${_gen_src} ${CMAKE_CURRENT_LIST_DIR}/progs)
  target_link_libraries(${t} PRIVATE fdr)
endforeach()
add_test(NAME gen-run-c
         COMMAND ${FDR_PYTHON} ${_gen_src}/check-run.py $<TARGET_FILE:gen-run> ${_gen_out}/run-c)
set_tests_properties(gen-run-c PROPERTIES TIMEOUT 60)
if(CMAKE_CXX_COMPILER)
  add_test(NAME gen-run-cxx
           COMMAND ${FDR_PYTHON} ${_gen_src}/check-run.py $<TARGET_FILE:gen-run-cxx>
                   ${_gen_out}/run-cxx)
  set_tests_properties(gen-run-cxx PROPERTIES TIMEOUT 60)
endif()

# contrib/qemu/fdr.py, the back-end for QEMU's tracetool (issue #31),
# without QEMU's tree: contrib/qemu/test/tracetool-h.py makes the same
# events into a header shaped like QEMU's trace-<group>.h through the
# module; gen-run.c built on it must record what it records with fdr-gen's
# header (check-run.py --qemu). scripts/qemu-check.sh runs a real QEMU.
set(_qemu_be ${PROJECT_SOURCE_DIR}/contrib/qemu)
file(MAKE_DIRECTORY ${_gen_out}/qemu)
add_custom_command(
  OUTPUT ${_gen_out}/qemu/gen-syntax.h
  COMMAND ${FDR_PYTHON} ${_qemu_be}/test/tracetool-h.py gent ${_gen_out}/qemu/gen-syntax.h
          --include gen-types.h ok/syntax.trace-events ok/second.trace-events
  WORKING_DIRECTORY ${_gen_src}
  DEPENDS ${_qemu_be}/fdr.py ${_qemu_be}/test/tracetool-h.py ${_gen_src}/ok/syntax.trace-events
          ${_gen_src}/ok/second.trace-events
  COMMENT "contrib/qemu/fdr.py on tests/gen/ok/syntax.trace-events")
add_custom_target(gen-qemu-header DEPENDS ${_gen_out}/qemu/gen-syntax.h)
add_executable(gen-run-qemu ${CMAKE_CURRENT_LIST_DIR}/progs/gen-run.c)
add_dependencies(gen-run-qemu gen-qemu-header)
target_include_directories(gen-run-qemu PRIVATE ${_gen_out}/qemu ${_gen_src})
target_link_libraries(gen-run-qemu PRIVATE fdr)
add_test(NAME gen-run-qemu
         COMMAND ${FDR_PYTHON} ${_gen_src}/check-run.py $<TARGET_FILE:gen-run-qemu>
                 ${_gen_out}/run-qemu --qemu)
set_tests_properties(gen-run-qemu PROPERTIES TIMEOUT 60)

add_test(NAME gen-compile
         COMMAND sh ${_gen_src}/check-compile.sh ${PROJECT_SOURCE_DIR} ${_gen_out}
                 ${_gen_out}/compile)
set_tests_properties(gen-compile PROPERTIES TIMEOUT 120)

add_test(NAME gen-ok-syntax
         COMMAND sh ${_gen_src}/check-ok.sh $<TARGET_FILE:fdr-gen> ${_gen_src} ${_gen_out}/ok-syntax
                 gen-syntax.h ${_gen_src}/expected/gen-syntax.h ${_gen_src}/expected/empty.err
                 --provider gent --include gen-types.h ok/syntax.trace-events ok/second.trace-events)
add_test(NAME gen-ok-warn
         COMMAND sh ${_gen_src}/check-ok.sh $<TARGET_FILE:fdr-gen> ${_gen_src} ${_gen_out}/ok-warn
                 gen-warn.h ${_gen_src}/expected/gen-warn.h ${_gen_src}/expected/warn.err
                 --provider gent ok/warn.trace-events)
add_test(NAME gen-skip
         COMMAND sh ${_gen_src}/check-ok.sh $<TARGET_FILE:fdr-gen> ${_gen_src} ${_gen_out}/skip
                 gen-skip.h ${_gen_src}/expected/gen-skip.h ${_gen_src}/expected/skip.err
                 --provider gent bad/one-bad-line.trace-events)
set_tests_properties(gen-ok-syntax gen-ok-warn gen-skip PROPERTIES TIMEOUT 30)

file(GLOB _gen_bad RELATIVE ${_gen_src}/bad ${_gen_src}/bad/*.trace-events)
foreach(f ${_gen_bad})
  string(REPLACE ".trace-events" "" c ${f})
  set(_inputs bad/${f})
  if(c STREQUAL "dup-second")  # a clash across two input files
    set(_inputs ok/second.trace-events bad/${f})
  endif()
  add_test(NAME gen-bad-${c}
           COMMAND sh ${_gen_src}/check-fail.sh $<TARGET_FILE:fdr-gen> ${_gen_src}
                   ${_gen_out}/bad-${c} ${_gen_src}/bad/${c}.err 1 --strict --provider gent
                   ${_inputs})
  set_tests_properties(gen-bad-${c} PROPERTIES TIMEOUT 30)
endforeach()

# Command-line errors: exit 2 (a missing input file is bad input: exit 1).
foreach(u no-provider bad-provider no-input missing-file)
  if(u STREQUAL "no-provider")
    set(_args ok/warn.trace-events)
    set(_st 2)
  elseif(u STREQUAL "bad-provider")
    set(_args --provider 9lives ok/warn.trace-events)
    set(_st 2)
  elseif(u STREQUAL "no-input")
    set(_args --provider gent)
    set(_st 2)
  else()
    set(_args --provider gent bad/does-not-exist.trace-events)
    set(_st 1)
  endif()
  add_test(NAME gen-usage-${u}
           COMMAND sh ${_gen_src}/check-fail.sh $<TARGET_FILE:fdr-gen> ${_gen_src}
                   ${_gen_out}/usage-${u} ${_gen_src}/usage/${u}.err ${_st} ${_args})
  set_tests_properties(gen-usage-${u} PROPERTIES TIMEOUT 30)
endforeach()

# Real QEMU trace-events files: kept outside the repository (CI has them).
set(_gen_corpus ${CMAKE_SOURCE_DIR}/../shared/corpus)
if(EXISTS ${_gen_corpus})
  add_test(NAME gen-corpus
           COMMAND sh ${_gen_src}/check-corpus.sh $<TARGET_FILE:fdr-gen> ${_gen_corpus}
                   ${PROJECT_SOURCE_DIR} ${_gen_out}/corpus)
  set_tests_properties(gen-corpus PROPERTIES TIMEOUT 120)
endif()

set(_gen_parser ${_gen_tools}/gen-parse.c ${_gen_tools}/gen-emit.c)
add_executable(fuzz-gen-replay ${FDR_TESTS_DIR}/fuzz/fuzz-gen.c
                               ${FDR_TESTS_DIR}/fuzz/replay.c ${_gen_parser})
target_include_directories(fuzz-gen-replay PRIVATE ${_gen_tools})
add_test(NAME fuzz-gen-replay
         COMMAND fuzz-gen-replay ${FDR_TESTS_DIR}/fuzz/corpus/gen)
set_tests_properties(fuzz-gen-replay PROPERTIES TIMEOUT 60)

if(FDR_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  add_executable(fuzz-gen ${FDR_TESTS_DIR}/fuzz/fuzz-gen.c ${_gen_parser})
  target_include_directories(fuzz-gen PRIVATE ${_gen_tools})
  target_compile_options(fuzz-gen PRIVATE -g -O1 -fsanitize=fuzzer,address,undefined
                                          -fno-sanitize-recover=undefined)
  target_link_options(fuzz-gen PRIVATE -fsanitize=fuzzer,address,undefined)
  add_test(NAME fuzz-gen
           COMMAND ${FDR_TESTS_DIR}/fuzz/run-fuzz.sh $<TARGET_FILE:fuzz-gen>
                   ${FDR_TESTS_DIR}/fuzz/corpus/gen 60)
  set_tests_properties(fuzz-gen PROPERTIES TIMEOUT 180)
endif()
