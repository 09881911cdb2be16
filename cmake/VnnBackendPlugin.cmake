# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn_add_backend(<name> SOURCES <files...> [LIBRARIES <libs...>])
#
# Declares the plugin library vnn-backend-<name> (a MODULE: dlopen'ed, never
# linked). Every symbol is hidden except the entry point (version script +
# hidden visibility), static libraries linked in (Kokkos) are kept private
# with --exclude-libs, and the plugin lands in <build>/lib/vnn so the loader
# finds it in the build tree exactly as in an install.
include_guard(GLOBAL)
include(GNUInstallDirs)

set(VNN_BACKEND_MAP "${CMAKE_CURRENT_LIST_DIR}/backend.map" CACHE INTERNAL "")
get_filename_component(VNN_REPO_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE CACHE)
set(VNN_REPO_ROOT "${VNN_REPO_ROOT}" CACHE INTERNAL "")

function(vnn_add_backend name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  set(target vnn-backend-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  if(NOT ARG_OUTPUT_DIRECTORY)
    if(VNN_PLUGIN_OUTPUT_DIR)
      set(ARG_OUTPUT_DIRECTORY "${VNN_PLUGIN_OUTPUT_DIR}")
    else()
      set(ARG_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/lib/vnn")
    endif()
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_include_directories(${target} PRIVATE
    "${VNN_REPO_ROOT}/include"
    "${VNN_REPO_ROOT}/backends")
  target_link_libraries(${target} PRIVATE ${ARG_LIBRARIES})
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${VNN_BACKEND_MAP}"
    "LINKER:--exclude-libs,ALL")
  # Sanitized builds (VNN_SANITIZE): clang links the sanitizer runtime into
  # the executable only, so a plugin's __asan_/__tsan_ references stay
  # undefined until it is loaded; every other build links with no undefined
  # symbols.
  if(NOT VNN_SANITIZE)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  # cpu and opencl ship in libvnn; the GPU plugins are installed by the
  # outer project (VnnGpuBackends.cmake) in their own components.
  install(TARGETS ${target} LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/vnn" COMPONENT runtime)
endfunction()

# vnn_kokkos_kernel_sources(<out-var> <dir>)
#
# The kernel families of the Kokkos plugins (backends/kokkos/instantiate/
# <family>.hpp), as <dir>/kernels_<family>.cpp: each plugin compiles every
# family in a translation unit of its own, so that its build runs in
# parallel pieces instead of one long compile.
function(vnn_kokkos_kernel_sources out dir)
  set(srcs "")
  foreach(family binary unary copy reduction indexing optimizer pooling matmul attention rnn_cell scan sort
                 grid_sample)
    list(APPEND srcs "${dir}/kernels_${family}.cpp")
  endforeach()
  set(${out} "${srcs}" PARENT_SCOPE)
endfunction()
