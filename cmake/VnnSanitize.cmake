# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sanitizer builds: -DVNN_SANITIZE=address,undefined (or thread, or any
# comma/semicolon list the compiler's -fsanitize= takes).
#
# The flags go on every target of this project (libvnn, the host plugins,
# tests, examples) through add_compile_options/add_link_options, and, through
# VNN_SANITIZE_FLAGS, into the Kokkos vnn builds (cmake/VnnKokkos.cmake puts
# them in its cache key, so sanitized and plain Kokkos never mix). Findings
# are fatal: -fno-sanitize-recover=all makes UBSan abort like ASan/TSan, so a
# ctest run fails on the first report.
#
# CUDA and HIP plugins are separate nvcc/hipcc projects whose device
# compilers do not take host sanitizers (nvcc rejects -fsanitize for device
# code; the GPU runtimes' own allocations are unknown to ASan and trip it), so
# a sanitized build refuses them: turn them off (-DVNN_BACKEND_CUDA=OFF
# -DVNN_BACKEND_HIP=OFF).
include_guard(GLOBAL)

set(VNN_SANITIZE "" CACHE STRING
    "Sanitizers for libvnn, the host plugins, their Kokkos and the tests (e.g. address,undefined or thread)")
set(VNN_SANITIZE_FLAGS "")
if(NOT VNN_SANITIZE STREQUAL "")
  string(REPLACE ";" "," _vnn_san "${VNN_SANITIZE}")
  string(REPLACE " " "" _vnn_san "${_vnn_san}")
  if(_vnn_san MATCHES "thread" AND _vnn_san MATCHES "address")
    message(FATAL_ERROR "vnn: VNN_SANITIZE=${VNN_SANITIZE}: thread and address sanitizers cannot be combined; "
                        "use two build directories")
  endif()
  if(VNN_BACKEND_CUDA OR VNN_BACKEND_HIP)
    message(FATAL_ERROR "vnn: VNN_SANITIZE=${VNN_SANITIZE} covers host code only; the CUDA/HIP plugins "
                        "cannot be sanitized (nvcc/hipcc device code): configure with "
                        "-DVNN_BACKEND_CUDA=OFF -DVNN_BACKEND_HIP=OFF")
  endif()
  include(CheckCXXSourceCompiles)
  set(VNN_SANITIZE_FLAGS -fsanitize=${_vnn_san} -fno-sanitize-recover=all -fno-omit-frame-pointer -g1)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=${_vnn_san}")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=${_vnn_san}")
  check_cxx_source_compiles("int main() { return 0; }" VNN_SANITIZE_WORKS_${_vnn_san})
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT VNN_SANITIZE_WORKS_${_vnn_san})
    message(FATAL_ERROR "vnn: ${CMAKE_CXX_COMPILER} cannot build and link with -fsanitize=${_vnn_san} "
                        "(Debian: the libasan8/libubsan1/libtsan2 runtimes come with g++)")
  endif()
  add_compile_options(${VNN_SANITIZE_FLAGS})
  add_link_options(-fsanitize=${_vnn_san})
  message(STATUS "vnn: sanitizers ${_vnn_san} on libvnn, the host plugins, their Kokkos and the tests")
endif()
