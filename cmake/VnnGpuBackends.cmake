# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn_add_gpu_backend(<cuda|hip>)
#
# Builds the GPU plugin backends/<name> as a separate CMake project
# (ExternalProject): a Kokkos CUDA/HIP build must be compiled with
# nvcc_wrapper/hipcc and cannot share the host project. Kokkos comes from
# vnn_provide_kokkos(<name>) (cmake/VnnKokkos.cmake). The plugin lands in
# ${VNN_PLUGIN_OUTPUT_DIR} (default <build>/lib/vnn) next to the others and
# installs to <libdir>/vnn. With testing on, a ctest test
# backend.<name>.plugin (labels <name>, gpu) loads it with vnn-plugin-check;
# it reports "skipped" where the machine has no such GPU.
#
# The options VNN_BACKEND_CUDA / VNN_BACKEND_HIP (default ON where nvcc /
# hipcc is found) are declared here unless the top level already did.
include_guard(GLOBAL)
include(ExternalProject)
include(GNUInstallDirs)
include(${CMAKE_CURRENT_LIST_DIR}/VnnKokkos.cmake)

find_program(VNN_NVCC nvcc HINTS "$ENV{CUDA_HOME}/bin" "$ENV{CUDA_PATH}/bin" PATHS /usr/local/cuda/bin)
find_program(VNN_HIPCC hipcc HINTS "$ENV{ROCM_PATH}/bin" PATHS /opt/rocm/bin)
if(NOT DEFINED VNN_BACKEND_CUDA)
  if(VNN_NVCC)
    option(VNN_BACKEND_CUDA "CUDA backend (Kokkos Cuda, cuBLAS)" ON)
  else()
    option(VNN_BACKEND_CUDA "CUDA backend (Kokkos Cuda, cuBLAS)" OFF)
  endif()
endif()
if(NOT DEFINED VNN_BACKEND_HIP)
  if(VNN_HIPCC)
    option(VNN_BACKEND_HIP "HIP backend (Kokkos HIP)" ON)
  else()
    option(VNN_BACKEND_HIP "HIP backend (Kokkos HIP)" OFF)
  endif()
endif()

get_filename_component(_vnn_gpu_repo_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

function(_vnn_plugin_check_tool)
  if(TARGET vnn-plugin-check)
    return()
  endif()
  add_executable(vnn-plugin-check "${_vnn_gpu_repo_root}/cmake/kokkos/vnn_plugin_check.cpp")
  target_include_directories(vnn-plugin-check PRIVATE "${_vnn_gpu_repo_root}/include")
  target_compile_features(vnn-plugin-check PRIVATE cxx_std_17)
  target_link_libraries(vnn-plugin-check PRIVATE ${CMAKE_DL_LIBS})
endfunction()

function(vnn_add_gpu_backend name)
  if(NOT name MATCHES "^(cuda|hip)$")
    message(FATAL_ERROR "vnn_add_gpu_backend: unknown GPU backend '${name}' (cuda or hip)")
  endif()
  string(TOUPPER "${name}" up)
  vnn_provide_kokkos(${name} kokkos_dir)

  set(out_dir "${VNN_PLUGIN_OUTPUT_DIR}")
  if(NOT out_dir)
    set(out_dir "${CMAKE_BINARY_DIR}/lib/vnn")
  endif()
  set(build_type "${CMAKE_BUILD_TYPE}")
  if(NOT build_type)
    set(build_type Release)
  endif()
  set(plugin "${out_dir}/${CMAKE_SHARED_MODULE_PREFIX}vnn-backend-${name}${CMAKE_SHARED_MODULE_SUFFIX}")
  set(extra_args "")
  if(name STREQUAL "cuda")
    get_filename_component(nvcc_bin "${VNN_NVCC}" REALPATH)
    get_filename_component(nvcc_bin "${nvcc_bin}" DIRECTORY)
    get_filename_component(cuda_root "${nvcc_bin}" DIRECTORY)
    list(APPEND extra_args "-DCUDAToolkit_ROOT:PATH=${cuda_root}")
    string(REPLACE ";" "," sass "${VNN_KOKKOS_CUDA_EXTRA_SASS}")
    list(APPEND extra_args "-DVNN_CUDA_EXTRA_SASS:STRING=${sass}")
  endif()
  if(CMAKE_MAKE_PROGRAM)
    list(APPEND extra_args "-DCMAKE_MAKE_PROGRAM:FILEPATH=${CMAKE_MAKE_PROGRAM}")
  endif()
  ExternalProject_Add(vnn-backend-${name}-project
    SOURCE_DIR "${_vnn_gpu_repo_root}/backends/${name}"
    BINARY_DIR "${CMAKE_BINARY_DIR}/backends/${name}-plugin"
    CMAKE_CACHE_ARGS
      "-DCMAKE_CXX_COMPILER:FILEPATH=${VNN_KOKKOS_${up}_CXX_COMPILER}"
      "-DCMAKE_CXX_FLAGS:STRING=${VNN_KOKKOS_${up}_CXX_FLAGS}"
      "-DCMAKE_BUILD_TYPE:STRING=${build_type}"
      "-DKokkos_DIR:PATH=${kokkos_dir}"
      "-DVNN_REPO_ROOT:PATH=${_vnn_gpu_repo_root}"
      "-DVNN_PLUGIN_OUTPUT_DIR:PATH=${out_dir}"
      ${extra_args}
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON
    BUILD_BYPRODUCTS "${plugin}"
    USES_TERMINAL_CONFIGURE ON
    USES_TERMINAL_BUILD ON)
  install(FILES "${plugin}" DESTINATION "${CMAKE_INSTALL_LIBDIR}/vnn"
          PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                      WORLD_READ WORLD_EXECUTE
          COMPONENT backend_${name})
  set(VNN_GPU_BACKEND_${up}_PLUGIN "${plugin}" CACHE INTERNAL "")

  if(VNN_BUILD_TESTS OR BUILD_TESTING)
    _vnn_plugin_check_tool()
    add_test(NAME backend.${name}.plugin COMMAND vnn-plugin-check "${plugin}")
    set_tests_properties(backend.${name}.plugin PROPERTIES
      LABELS "${name};gpu" SKIP_RETURN_CODE 77 TIMEOUT 300)
    # The extra SASS (sm_90: Hopper) really is in the plugin: without it
    # Kokkos 3.4 aborts on such a device (backends/cuda/cuda_arch.hpp).
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(name STREQUAL "cuda" AND VNN_KOKKOS_CUDA_EXTRA_SASS AND Python3_Interpreter_FOUND)
      string(REPLACE ";" "," sass "${VNN_KOKKOS_CUDA_EXTRA_SASS}")
      add_test(NAME backend.cuda.sass
               COMMAND "${Python3_EXECUTABLE}" "${_vnn_gpu_repo_root}/ci/fatbin-archs.py" "${plugin}" --require "${sass}")
      set_tests_properties(backend.cuda.sass PROPERTIES LABELS "cuda;cpu" TIMEOUT 60)
    endif()
    # Every translation unit of the HIP plugin (Kokkos's included) has a code
    # object for each arch of VNN_HIP_ARCHS (backends/hip/hip_arch.hpp).
    if(name STREQUAL "hip" AND VNN_KOKKOS_HIP_CXX_FLAGS MATCHES "--offload-arch=" AND Python3_Interpreter_FOUND)
      vnn_hip_kokkos_gfx("${VNN_KOKKOS_HIP_ARCH}" archs)
      string(REGEX MATCHALL "--offload-arch=[^ ]+" offload "${VNN_KOKKOS_HIP_CXX_FLAGS}")
      string(REPLACE "--offload-arch=" "" offload "${offload}")
      string(REPLACE ";" "," archs "${archs};${offload}")
      add_test(NAME backend.hip.code_objects
               COMMAND "${Python3_EXECUTABLE}" "${_vnn_gpu_repo_root}/ci/hip-code-objects.py" "${plugin}" --require "${archs}")
      set_tests_properties(backend.hip.code_objects PROPERTIES LABELS "hip;cpu" TIMEOUT 60)
    endif()
  endif()
endfunction()
