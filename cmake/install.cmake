# SPDX-License-Identifier: MIT
# install.cmake - what `cmake --install` and `make install` put where.
#
#   <prefix>/lib/libfdr.so.0.1.0, libfdr.so.0 (soname), libfdr.so, libfdr.a
#   <prefix>/include/fdr/**.h                  the public headers
#   <prefix>/bin/fdr-gen                       (its rule is in programs/gen/CMakeLists.txt)
#   <libdir>/fdr/fdr-drain                     the drain helper libfdr starts (its rule is in
#                                              lib/recorder/CMakeLists.txt; its path is
#                                              compiled in: elsewhere the helper is a clone)
#   <prefix>/lib/pkgconfig/fdr.pc              pkg-config --cflags --libs fdr
#   <prefix>/lib/cmake/fdr/fdrConfig*.cmake    find_package(fdr): fdr::fdr,
#                                              fdr::fdr_static
#
# The prefix is CMAKE_INSTALL_PREFIX: chosen when configuring
# (-DCMAKE_INSTALL_PREFIX=/opt/fdr), when installing (cmake --install build
# --prefix /opt/fdr) or, with the Makefile generator, `make install
# PREFIX=/opt/fdr`. DESTDIR (make install DESTDIR=/tmp/stage, or in the
# environment of cmake --install) stages the whole tree under another root
# and is not written into any installed file. Everything installed is
# relocatable except fdr.pc, which is written at install time with the
# prefix actually used.
#
# A program built with pkg-config runs from any prefix: fdr.pc's --libs
# has an rpath. For everything else (cc prog.c -lfdr), an install as root
# without DESTDIR runs ldconfig at the end, so that the loader's cache
# knows the new libfdr.so.0 in a system prefix such as /usr/local.
#
# Included from the top CMakeLists.txt once the fdr and fdr_static targets
# exist; tests/install/ checks the result.
include(CMakePackageConfigHelpers)

# `make install PREFIX=...`: make exports a variable given on its command
# line to the install script. MAKELEVEL (set by make) limits this to make, so
# a PREFIX left in a shell's environment does not override --prefix. This is
# the first install rule of the top directory, so it applies to all.
install(CODE [[
if(DEFINED ENV{MAKELEVEL} AND NOT "$ENV{PREFIX}" STREQUAL "")
  set(CMAKE_INSTALL_PREFIX "$ENV{PREFIX}")
endif()
]])

install(TARGETS fdr fdr_static EXPORT fdrTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/fdr
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

set(_fdr_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/fdr)
install(EXPORT fdrTargets NAMESPACE fdr:: DESTINATION ${_fdr_cmakedir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/fdrConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/fdrConfig.cmake
                              INSTALL_DESTINATION ${_fdr_cmakedir}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/fdrConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fdrConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/fdrConfigVersion.cmake
        DESTINATION ${_fdr_cmakedir})

# fdr.pc: the version and directories now, the prefix at install time.
foreach(_d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_d}}")
    set(FDR_PC_${_d} "${CMAKE_INSTALL_${_d}}")
  else()
    set(FDR_PC_${_d} "\${prefix}/${CMAKE_INSTALL_${_d}}")
  endif()
endforeach()
set(FDR_PC_PREFIX "@FDR_PC_PREFIX@") # kept for the install-time pass
configure_file(${CMAKE_CURRENT_LIST_DIR}/fdr.pc.in ${CMAKE_CURRENT_BINARY_DIR}/fdr.pc.tmpl
               @ONLY)
install(CODE "
set(FDR_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
configure_file(\"${CMAKE_CURRENT_BINARY_DIR}/fdr.pc.tmpl\"
               \"${CMAKE_CURRENT_BINARY_DIR}/fdr.pc\" @ONLY)
file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\"
     TYPE FILE FILES \"${CMAKE_CURRENT_BINARY_DIR}/fdr.pc\")
")

# Last: refresh the loader's cache after a real (not staged) root install.
install(CODE [[
if("$ENV{DESTDIR}" STREQUAL "")
  execute_process(COMMAND id -u OUTPUT_VARIABLE _fdr_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  find_program(_fdr_ldconfig ldconfig PATHS /sbin /usr/sbin)
  if(_fdr_uid STREQUAL "0" AND _fdr_ldconfig)
    message(STATUS "Running ldconfig")
    execute_process(COMMAND ${_fdr_ldconfig})
  endif()
endif()
]])
