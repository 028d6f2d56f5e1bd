# CMake package file for supraseal-c2 (installed by scripts/install.sh into
# PREFIX/lib/cmake/supraseal_c2/). Relocatable: paths are derived from this
# file's location, so the prefix can be moved.
#
#   find_package(supraseal_c2 0.1 REQUIRED)       # CMAKE_PREFIX_PATH=PREFIX
#   target_link_libraries(app PRIVATE supraseal_c2::supraseal_c2)
#
# Gives the imported target supraseal_c2::supraseal_c2 (the shared library
# libsupraseal_c2.so and the directory of supraseal_c2.h), and sets
# supraseal_c2_LIBRARY and supraseal_c2_INCLUDE_DIR.

get_filename_component(_supraseal_c2_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

set(supraseal_c2_LIBRARY "${_supraseal_c2_prefix}/lib/libsupraseal_c2.so")
set(supraseal_c2_INCLUDE_DIR "${_supraseal_c2_prefix}/include")

foreach(_supraseal_c2_file "${supraseal_c2_LIBRARY}" "${supraseal_c2_INCLUDE_DIR}/supraseal_c2.h")
  if(NOT EXISTS "${_supraseal_c2_file}")
    set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
    set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE "missing ${_supraseal_c2_file}")
    unset(_supraseal_c2_file)
    unset(_supraseal_c2_prefix)
    return()
  endif()
endforeach()
unset(_supraseal_c2_file)

if(NOT TARGET supraseal_c2::supraseal_c2)
  add_library(supraseal_c2::supraseal_c2 SHARED IMPORTED)
  # The library has no SONAME: IMPORTED_NO_SONAME makes CMake link it as
  # -L<dir> -lsupraseal_c2, so the executable records "libsupraseal_c2.so"
  # (found through the run path or LD_LIBRARY_PATH), not an absolute path.
  set_target_properties(supraseal_c2::supraseal_c2 PROPERTIES
    IMPORTED_LOCATION "${supraseal_c2_LIBRARY}"
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${supraseal_c2_INCLUDE_DIR}")
endif()

unset(_supraseal_c2_prefix)
