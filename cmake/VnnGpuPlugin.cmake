# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What backends/cuda/CMakeLists.txt and backends/hip/CMakeLists.txt share,
# as two macros around their project() call (which must stay literally in
# each top-level file):
#
#   include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/VnnGpuPlugin.cmake")
#   vnn_gpu_plugin_compiler(<cuda|hip>)   # before project()
#   project(vnn_backend_<name> LANGUAGES CXX)
#   vnn_gpu_plugin_kokkos(<Cuda|HIP>)      # after it: sets Kokkos_ARCH...
#   vnn_gpu_plugin(<cuda|hip> SOURCES ... [LIBRARIES ...])
#
# Each plugin is a CMake project of its own: a Kokkos CUDA/HIP build must be
# compiled with nvcc_wrapper/hipcc and cannot share a project with the
# OpenMP Kokkos. The top level builds it through vnn_add_gpu_backend(<name>)
# (cmake/VnnGpuBackends.cmake), passing the compiler, flags, Kokkos_DIR and
# the plugin directory. Standalone (cmake -S backends/<name> -B build-<name>)
# it provides Kokkos itself (cmake/VnnKokkos.cmake) when no compiler is given.
include_guard(GLOBAL)

get_filename_component(_vnn_gpu_plugin_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(NOT DEFINED VNN_REPO_ROOT)
  set(VNN_REPO_ROOT "${_vnn_gpu_plugin_root}")
endif()
list(APPEND CMAKE_MODULE_PATH "${VNN_REPO_ROOT}/cmake")

# Standalone: the compiler (and, for CUDA, the flags and extra SASS) of the
# Kokkos vnn provides. A macro: it sets the caller's cache-free variables.
macro(vnn_gpu_plugin_compiler name)
  if(NOT DEFINED CMAKE_CXX_COMPILER AND NOT DEFINED ENV{CXX})
    include(VnnKokkos)
    string(TOUPPER "${name}" _vnn_gpu_up)
    vnn_provide_kokkos(${name} _vnn_kokkos_dir)
    set(CMAKE_CXX_COMPILER "${VNN_KOKKOS_${_vnn_gpu_up}_CXX_COMPILER}")
    if(VNN_KOKKOS_${_vnn_gpu_up}_CXX_FLAGS)
      set(CMAKE_CXX_FLAGS "${VNN_KOKKOS_${_vnn_gpu_up}_CXX_FLAGS} ${CMAKE_CXX_FLAGS}")
    endif()
    set(Kokkos_DIR "${_vnn_kokkos_dir}")
    if(VNN_KOKKOS_${_vnn_gpu_up}_EXTRA_SASS)
      string(REPLACE ";" "," VNN_CUDA_EXTRA_SASS "${VNN_KOKKOS_${_vnn_gpu_up}_EXTRA_SASS}")
    endif()
  endif()
endmacro()

# The language settings and Kokkos with the given device.
macro(vnn_gpu_plugin_kokkos device)
  if(NOT CMAKE_BUILD_TYPE)
    set(CMAKE_BUILD_TYPE Release)
  endif()
  set(CMAKE_CXX_STANDARD 17)
  set(CMAKE_CXX_STANDARD_REQUIRED ON)
  set(CMAKE_CXX_EXTENSIONS OFF)
  include(VnnBackendPlugin)
  find_package(Kokkos CONFIG REQUIRED)
  kokkos_check(DEVICES ${device})
endmacro()

# The plugin vnn-backend-<name> (VnnBackendPlugin.cmake) on Kokkos, with the
# shared backends/cuda_hip code selected for this vendor (VNN_GPU_HIP).
function(vnn_gpu_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  vnn_kokkos_kernel_sources(kernels "${VNN_REPO_ROOT}/backends/cuda_hip")
  vnn_add_backend(${name} SOURCES ${kernels} ${ARG_SOURCES} LIBRARIES Kokkos::kokkos ${ARG_LIBRARIES})
  if(name STREQUAL "hip")
    target_compile_definitions(vnn-backend-${name} PRIVATE VNN_GPU_HIP=1)
  endif()
endfunction()
