# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the vnn build into a scratch prefix, then configures and builds
# tests/conformance against it with find_package(vnn); ctest then runs the
# programs per backend (the libtorch_conformance_* tests).
#   cmake -DVNN_BUILD_DIR=... -DWORK_DIR=... -DGENERATOR=... [-DCXX_COMPILER=...] [-DCXX_FLAGS=...]
#         -P run_conformance.cmake
# CXX_COMPILER / CXX_FLAGS: vnn's own compiler and sanitizer flags, so that a
# sanitized libvnn gets sanitized programs.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${VNN_BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install of vnn failed (${rc})")
endif()
# No optimisation: the programs check spellings and results, not speed, and
# -O0 keeps the build of five programs short on a 2-core machine.
set(args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=)
if(CXX_COMPILER)
  list(APPEND args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(CXX_FLAGS)
  list(APPEND args "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CXX_FLAGS}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
                        ${args} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the conformance programs failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" --parallel 2 RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the conformance programs failed (${rc})")
endif()
