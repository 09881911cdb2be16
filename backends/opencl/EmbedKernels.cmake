# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn_opencl_embed_kernels(<out_var> <file.cl>...)
#
# Generates one C++ source holding every given .cl file as a raw string
# literal plus a lookup table (name without extension -> source), and sets
# <out_var> to its path. It is regenerated at build time whenever a .cl file
# changes, with nothing but CMake itself (no xxd or python).
include_guard(GLOBAL)

set(_VNN_OPENCL_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/EmbedKernelsScript.cmake")
set(_VNN_OPENCL_PRELUDE_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/AbiPreludeScript.cmake")

# vnn_opencl_abi_prelude(<cl_var> <check_var> <backend_abi.h> <philox.h>)
#
# Generates abi_prelude.cl, the ABI's enumerators as OpenCL macros with the
# same numbers plus the shared Philox rounds (AbiPreludeScript.cmake), and a
# C++ file of static_asserts that checks the numbers against the header;
# sets the variables to their paths.
function(vnn_opencl_abi_prelude cl_var check_var header philox)
  get_filename_component(_vnn_include "${header}" DIRECTORY)
  file(GLOB _vnn_op_tables "${_vnn_include}/ops/*.def")
  set(cl "${CMAKE_CURRENT_BINARY_DIR}/abi_prelude.cl")
  set(check "${CMAKE_CURRENT_BINARY_DIR}/abi_prelude_check.cpp")
  add_custom_command(
    OUTPUT "${cl}" "${check}"
    COMMAND "${CMAKE_COMMAND}" "-DVNN_ABI_HEADER=${header}" "-DVNN_PHILOX_HEADER=${philox}"
            "-DVNN_OUTPUT_CL=${cl}" "-DVNN_OUTPUT_CHECK=${check}" -P "${_VNN_OPENCL_PRELUDE_SCRIPT}"
    DEPENDS "${header}" "${philox}" "${_VNN_OPENCL_PRELUDE_SCRIPT}" ${_vnn_op_tables}
    COMMENT "Generating the OpenCL ABI prelude"
    VERBATIM)
  set(${cl_var} "${cl}" PARENT_SCOPE)
  set(${check_var} "${check}" PARENT_SCOPE)
endfunction()

function(vnn_opencl_embed_kernels out_var)
  file(GLOB _vnn_tables "${PROJECT_SOURCE_DIR}/include/vnn/ops/*.def")
  set(output "${CMAKE_CURRENT_BINARY_DIR}/embedded_kernels.cpp")
  # The list travels as one argument: '|' cannot appear in a path we own.
  string(REPLACE ";" "|" inputs "${ARGN}")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DVNN_INPUTS=${inputs}" "-DVNN_OUTPUT=${output}"
            "-DVNN_INCLUDE_DIR=${PROJECT_SOURCE_DIR}/include" -P "${_VNN_OPENCL_EMBED_SCRIPT}"
    DEPENDS ${ARGN} "${_VNN_OPENCL_EMBED_SCRIPT}" ${_vnn_tables}
    COMMENT "Embedding OpenCL kernels"
    VERBATIM)
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()
