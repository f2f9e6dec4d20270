# SPDX-License-Identifier: MIT
# bench/CMakeLists-others.cmake — the side-by-side benchmark fdr-bench
# (fdr vs. a physical floor, LTTng-UST and barectf). See bench/README.md.
#
# Include it from the top-level CMakeLists.txt, after the fdr library target
# is defined:
#     include(bench/CMakeLists-others.cmake)
#
# Inputs (cache variables):
#   FDR_BENCH_FDR_TARGET   name of the fdr library target (default "fdr");
#                          when it exists, the fdr columns are built
#                          (FDR_BENCH_HAVE_FDR), otherwise they print n/a.
# Needs liblttng-ust-dev and the Debian barectf 3.x (scripts/bench-deps.sh
# installs them); without them fdr-bench is skipped with a warning.
# Outputs: executable fdr-bench and libfdr-bench-lttng-tp.so, both in
# ${CMAKE_BINARY_DIR}/bench; test "bench-quick".

set(FDR_BENCH_FDR_TARGET "fdr" CACHE STRING "fdr library target for fdr-bench")
set(_fb_src ${CMAKE_CURRENT_LIST_DIR})
set(_fb_gen ${CMAKE_BINARY_DIR}/bench/barectf-gen)
set(_fb_out ${CMAKE_BINARY_DIR}/bench)

find_program(FDR_BENCH_BARECTF barectf PATHS /usr/bin NO_DEFAULT_PATH)
find_program(FDR_BENCH_BARECTF barectf)
find_path(FDR_BENCH_LTTNG_INCLUDE lttng/tracepoint.h
          PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
find_library(FDR_BENCH_LTTNG_UST lttng-ust)
find_path(FDR_BENCH_BT2_INCLUDE babeltrace2/babeltrace.h)
find_library(FDR_BENCH_BT2 babeltrace2)

if(NOT FDR_BENCH_BARECTF OR NOT FDR_BENCH_LTTNG_INCLUDE OR NOT FDR_BENCH_LTTNG_UST
   OR NOT FDR_BENCH_BT2_INCLUDE OR NOT FDR_BENCH_BT2)
  message(WARNING "fdr-bench skipped: needs barectf (${FDR_BENCH_BARECTF}), "
    "lttng/tracepoint.h (${FDR_BENCH_LTTNG_INCLUDE}), liblttng-ust "
    "(${FDR_BENCH_LTTNG_UST}) and libbabeltrace2-dev (${FDR_BENCH_BT2}); "
    "run scripts/bench-deps.sh")
  return()
endif()

set(_fb_warn -Wall -Wextra -Werror)

# barectf: C code generated at build time from config.yaml (never committed).
add_custom_command(
  OUTPUT ${_fb_gen}/bbench.c ${_fb_gen}/bbench.h ${_fb_gen}/bbench-bitfield.h
         ${_fb_gen}/metadata
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_fb_gen}
  COMMAND ${FDR_BENCH_BARECTF} generate --code-dir=${_fb_gen}
          --headers-dir=${_fb_gen} --metadata-dir=${_fb_gen}
          ${_fb_src}/barectf/config.yaml
  DEPENDS ${_fb_src}/barectf/config.yaml
  COMMENT "barectf: generating bench tracer from bench/barectf/config.yaml"
  VERBATIM)
add_library(fdr-bench-barectf STATIC ${_fb_gen}/bbench.c)
target_include_directories(fdr-bench-barectf PUBLIC ${_fb_gen})
# Generated third-party code: not held to our warning flags.
target_compile_options(fdr-bench-barectf PRIVATE -O2 -w)

# LTTng-UST probes, dlopen()ed by the measurement process only.
add_library(fdr-bench-lttng-tp MODULE ${_fb_src}/lttng/tp.c)
target_include_directories(fdr-bench-lttng-tp PRIVATE ${_fb_src}
                           ${FDR_BENCH_LTTNG_INCLUDE})
target_compile_options(fdr-bench-lttng-tp PRIVATE -O2 ${_fb_warn})
target_link_libraries(fdr-bench-lttng-tp PRIVATE ${FDR_BENCH_LTTNG_UST})
set_target_properties(fdr-bench-lttng-tp PROPERTIES
  OUTPUT_NAME fdr-bench-lttng-tp PREFIX "lib"
  LIBRARY_OUTPUT_DIRECTORY ${_fb_out})

add_executable(fdr-bench
  ${_fb_src}/main.c
  ${_fb_src}/benchfn.c
  ${_fb_src}/report.c
  ${_fb_src}/machine.c
  ${_fb_src}/sections.c
  ${_fb_src}/scope_bench.c
  ${_fb_src}/floor.c
  ${_fb_src}/fdr_adapter.c
  ${_fb_src}/lttng/lttng_adapter.c
  ${_fb_src}/lttng/session.c
  ${_fb_src}/barectf/platform.c
  ${_fb_src}/barectf/barectf_adapter.c)
target_include_directories(fdr-bench PRIVATE ${_fb_src}
                           ${FDR_BENCH_LTTNG_INCLUDE})
target_compile_options(fdr-bench PRIVATE -O2 ${_fb_warn})
target_compile_definitions(fdr-bench PRIVATE
  FDR_BENCH_RESULTS_DEFAULT="${_fb_src}/results/latest.json")
if(TARGET fdr-cli) # the print section: fdr print against babeltrace2
  target_compile_definitions(fdr-bench PRIVATE FDR_BENCH_FDR_CLI="$<TARGET_FILE:fdr-cli>")
  add_dependencies(fdr-bench fdr-cli)
endif()
target_link_libraries(fdr-bench PRIVATE fdr-bench-barectf ${CMAKE_DL_LIBS})
set_target_properties(fdr-bench PROPERTIES
  C_STANDARD 11 C_STANDARD_REQUIRED ON
  RUNTIME_OUTPUT_DIRECTORY ${_fb_out})
add_dependencies(fdr-bench fdr-bench-lttng-tp)
if(TARGET ${FDR_BENCH_FDR_TARGET})
  target_compile_definitions(fdr-bench PRIVATE FDR_BENCH_HAVE_FDR=1)
  target_link_libraries(fdr-bench PRIVATE ${FDR_BENCH_FDR_TARGET})
else()
  message(STATUS "fdr-bench: no target '${FDR_BENCH_FDR_TARGET}', fdr columns disabled")
endif()

# fdr-bench-count: counts events and discarded events of CTF traces with
# libbabeltrace2 (the sustained section's emitted = recorded + discarded).
add_executable(fdr-bench-count ${_fb_src}/btcount.c)
target_include_directories(fdr-bench-count PRIVATE ${FDR_BENCH_BT2_INCLUDE})
target_compile_options(fdr-bench-count PRIVATE -O2 ${_fb_warn})
target_link_libraries(fdr-bench-count PRIVATE ${FDR_BENCH_BT2})
set_target_properties(fdr-bench-count PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${_fb_out})

# The load programs of the process-level sections (load.c): no tracer,
# LTTng-UST (probes linked in), fdr.
add_executable(fdr-bench-load-none ${_fb_src}/load.c)
add_executable(fdr-bench-load-lttng ${_fb_src}/load.c ${_fb_src}/lttng/tp.c)
target_compile_definitions(fdr-bench-load-lttng PRIVATE LOAD_LTTNG=1)
target_include_directories(fdr-bench-load-lttng PRIVATE ${_fb_src}
                           ${FDR_BENCH_LTTNG_INCLUDE})
target_link_libraries(fdr-bench-load-lttng PRIVATE ${FDR_BENCH_LTTNG_UST}
                      ${CMAKE_DL_LIBS})
set(_fb_loads fdr-bench-load-none fdr-bench-load-lttng)
if(TARGET ${FDR_BENCH_FDR_TARGET})
  add_executable(fdr-bench-load-fdr ${_fb_src}/load.c)
  target_compile_definitions(fdr-bench-load-fdr PRIVATE LOAD_FDR=1)
  target_link_libraries(fdr-bench-load-fdr PRIVATE ${FDR_BENCH_FDR_TARGET})
  # fdr_snapshot() (issue 4) is being written; measured once it exists.
  if(EXISTS ${CMAKE_SOURCE_DIR}/lib/recorder/snapshot.c)
    target_compile_definitions(fdr-bench-load-fdr PRIVATE FDR_BENCH_HAVE_SNAPSHOT=1)
  endif()
  list(APPEND _fb_loads fdr-bench-load-fdr)
endif()
foreach(t ${_fb_loads})
  target_compile_options(${t} PRIVATE -O2 ${_fb_warn})
  target_link_libraries(${t} PRIVATE Threads::Threads)
  set_target_properties(${t} PROPERTIES C_STANDARD 11
                        RUNTIME_OUTPUT_DIRECTORY ${_fb_out})
endforeach()
add_dependencies(fdr-bench fdr-bench-count ${_fb_loads})

# fdr-bench-spans (spans.c): a span against the two events it replaces.
if(TARGET ${FDR_BENCH_FDR_TARGET})
  add_executable(fdr-bench-spans ${_fb_src}/spans.c ${_fb_src}/benchfn.c)
  target_compile_options(fdr-bench-spans PRIVATE -O2 ${_fb_warn})
  target_link_libraries(fdr-bench-spans PRIVATE ${FDR_BENCH_FDR_TARGET})
  set_target_properties(fdr-bench-spans PROPERTIES C_STANDARD 11
                        RUNTIME_OUTPUT_DIRECTORY ${_fb_out})
  # bench-spans-quick: every row's median, min and max and the ratios, in
  # one run (bench/check-spans.py; no duration asserted)
  if(FDR_PYTHON)
    add_test(NAME bench-spans-quick
             COMMAND ${FDR_PYTHON} ${_fb_src}/check-spans.py $<TARGET_FILE:fdr-bench-spans>
                     ${CMAKE_BINARY_DIR}/bench-spans-quick.json)
    set_tests_properties(bench-spans-quick PROPERTIES TIMEOUT 120)
  endif()
endif()

add_test(NAME bench-quick
         COMMAND fdr-bench --quick --strict --out ${CMAKE_BINARY_DIR}/bench-quick.json)
set_tests_properties(bench-quick PROPERTIES TIMEOUT 60)

# The full run (minutes): cmake --build <dir> --target bench-run
add_custom_target(bench-run
  COMMAND ${_fb_out}/fdr-bench
  DEPENDS fdr-bench
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  USES_TERMINAL
  COMMENT "fdr-bench: full side-by-side benchmark -> bench/results/latest.json")
