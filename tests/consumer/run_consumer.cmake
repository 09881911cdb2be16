# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the vnn build into a scratch prefix, then configures, builds and
# runs tests/consumer against it (find_package(vnn)), and once more with
# add_subdirectory(vnn) when MODE is "subdirectory".
if(NOT MODE)
  set(MODE package)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
set(args)
if(MODE STREQUAL "package")
  execute_process(COMMAND ${CMAKE_COMMAND} --install "${VNN_BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(rc)
    message(FATAL_ERROR "install of vnn failed (${rc})")
  endif()
  set(args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
else()
  # The test checks that add_subdirectory(vnn) configures, builds, links and
  # runs, not the kernels' speed: -O1 compiles the CPU plugin's kernels in a
  # fraction of -O3's time (this test was the suite's longest at -O3).
  set(args -DVNN_CONSUMER_MODE=subdirectory -DVNN_SOURCE_DIR=${VNN_SOURCE_DIR}
           -DVNN_BACKEND_OPENCL=OFF -DVNN_BACKEND_CUDA=OFF -DVNN_BACKEND_HIP=OFF
           -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
                        ${args} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
# Run it away from every build tree: plugins must be found next to libvnn.
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc WORKING_DIRECTORY /)
if(rc)
  message(FATAL_ERROR "the consumer failed (${rc})")
endif()
# The LibTorch-style port (docs/from-libtorch.md); it writes a checkpoint,
# so it runs in the scratch directory.
execute_process(COMMAND "${WORK_DIR}/build/libtorch_style" RESULT_VARIABLE rc WORKING_DIRECTORY "${WORK_DIR}")
if(rc)
  message(FATAL_ERROR "the LibTorch-style consumer failed (${rc})")
endif()
