# vnn_opencl_embed_kernels(<out_var> <file.cl>...)
#
# Generates one C++ source holding every given .cl file as a raw string
# literal plus a lookup table (name without extension -> source), and sets
# <out_var> to its path. It is regenerated at build time whenever a .cl file
# changes, with nothing but CMake itself (no xxd or python).
include_guard(GLOBAL)

set(_VNN_OPENCL_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/EmbedKernelsScript.cmake")

function(vnn_opencl_embed_kernels out_var)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/embedded_kernels.cpp")
  # The list travels as one argument: '|' cannot appear in a path we own.
  string(REPLACE ";" "|" inputs "${ARGN}")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DVNN_INPUTS=${inputs}" "-DVNN_OUTPUT=${output}"
            -P "${_VNN_OPENCL_EMBED_SCRIPT}"
    DEPENDS ${ARGN} "${_VNN_OPENCL_EMBED_SCRIPT}"
    COMMENT "Embedding OpenCL kernels"
    VERBATIM)
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()
