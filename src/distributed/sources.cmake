# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vnn::distributed inside libvnn (included from src/CMakeLists.txt). Gloo and
# MPI are optional: without them init_process_group says which is missing.
target_sources(vnn PRIVATE
  distributed/tcp_store.cpp
  distributed/process_group.cpp
  distributed/init.cpp
  distributed/gloo_engine.cpp
  distributed/mpi_engine.cpp
  distributed/device_comm.cpp
  distributed/ddp.cpp
  distributed/pipelining.cpp
  distributed/fsdp.cpp
  distributed/fsdp_checkpoint.cpp)
find_package(Gloo CONFIG QUIET)
if(TARGET gloo)
  get_target_property(_vnn_gloo_inc gloo INTERFACE_INCLUDE_DIRECTORIES)
  target_link_libraries(vnn PRIVATE gloo)
  if(NOT _vnn_gloo_inc)
    target_include_directories(vnn PRIVATE ${GLOO_INCLUDE_DIRS})
  endif()
  target_compile_definitions(vnn PRIVATE VNN_HAVE_GLOO=1)
  message(STATUS "vnn distributed: gloo ${GLOO_VERSION}")
else()
  message(STATUS "vnn distributed: no gloo (libgloo-dev): the gloo engine is off")
endif()
option(VNN_DISTRIBUTED_MPI "MPI engine for vnn::distributed" ON)
if(VNN_DISTRIBUTED_MPI)
  find_package(MPI COMPONENTS C QUIET)
endif()
if(MPI_C_FOUND)
  target_link_libraries(vnn PRIVATE MPI::MPI_C)
  target_compile_definitions(vnn PRIVATE VNN_HAVE_MPI=1)
  message(STATUS "vnn distributed: MPI ${MPI_C_VERSION}")
else()
  message(STATUS "vnn distributed: no MPI (libopenmpi-dev): the mpi engine is off")
endif()
