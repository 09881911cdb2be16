#include "errors.hpp"

#include <cstdarg>
#include <cstdio>
#include <string>

#include <CL/cl_ext.h>

namespace vnn_opencl {
namespace {

thread_local std::string t_last_error;

std::string vformat(const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return fmt;
  std::string s(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&s[0], s.size(), fmt, ap);
  s.resize(static_cast<size_t>(n));
  return s;
}

}  // namespace

const char* cl_error_name(cl_int err) {
  switch (err) {
#define VNN_CL_ERR(name) \
  case name:             \
    return #name;
    VNN_CL_ERR(CL_SUCCESS)
    VNN_CL_ERR(CL_DEVICE_NOT_FOUND)
    VNN_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    VNN_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    VNN_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    VNN_CL_ERR(CL_OUT_OF_RESOURCES)
    VNN_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    VNN_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    VNN_CL_ERR(CL_MEM_COPY_OVERLAP)
    VNN_CL_ERR(CL_IMAGE_FORMAT_MISMATCH)
    VNN_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    VNN_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    VNN_CL_ERR(CL_MAP_FAILURE)
    VNN_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    VNN_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    VNN_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
    VNN_CL_ERR(CL_LINKER_NOT_AVAILABLE)
    VNN_CL_ERR(CL_LINK_PROGRAM_FAILURE)
    VNN_CL_ERR(CL_DEVICE_PARTITION_FAILED)
    VNN_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    VNN_CL_ERR(CL_INVALID_VALUE)
    VNN_CL_ERR(CL_INVALID_DEVICE_TYPE)
    VNN_CL_ERR(CL_INVALID_PLATFORM)
    VNN_CL_ERR(CL_INVALID_DEVICE)
    VNN_CL_ERR(CL_INVALID_CONTEXT)
    VNN_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    VNN_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    VNN_CL_ERR(CL_INVALID_HOST_PTR)
    VNN_CL_ERR(CL_INVALID_MEM_OBJECT)
    VNN_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    VNN_CL_ERR(CL_INVALID_IMAGE_SIZE)
    VNN_CL_ERR(CL_INVALID_SAMPLER)
    VNN_CL_ERR(CL_INVALID_BINARY)
    VNN_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    VNN_CL_ERR(CL_INVALID_PROGRAM)
    VNN_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    VNN_CL_ERR(CL_INVALID_KERNEL_NAME)
    VNN_CL_ERR(CL_INVALID_KERNEL_DEFINITION)
    VNN_CL_ERR(CL_INVALID_KERNEL)
    VNN_CL_ERR(CL_INVALID_ARG_INDEX)
    VNN_CL_ERR(CL_INVALID_ARG_VALUE)
    VNN_CL_ERR(CL_INVALID_ARG_SIZE)
    VNN_CL_ERR(CL_INVALID_KERNEL_ARGS)
    VNN_CL_ERR(CL_INVALID_WORK_DIMENSION)
    VNN_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    VNN_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    VNN_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    VNN_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    VNN_CL_ERR(CL_INVALID_EVENT)
    VNN_CL_ERR(CL_INVALID_OPERATION)
    VNN_CL_ERR(CL_INVALID_GL_OBJECT)
    VNN_CL_ERR(CL_INVALID_BUFFER_SIZE)
    VNN_CL_ERR(CL_INVALID_MIP_LEVEL)
    VNN_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    VNN_CL_ERR(CL_INVALID_PROPERTY)
    VNN_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
    VNN_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
    VNN_CL_ERR(CL_INVALID_LINKER_OPTIONS)
    VNN_CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
    VNN_CL_ERR(CL_PLATFORM_NOT_FOUND_KHR)
#undef VNN_CL_ERR
    // Codes of later OpenCL versions, spelled out so that the 1.2 target
    // we compile against still names them.
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    default: break;
  }
  thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "CL error %d", static_cast<int>(err));
  return buf;
}

vnn_status status_from_cl(cl_int err) {
  switch (err) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
      return VNN_STATUS_OUT_OF_MEMORY;
    default:
      return VNN_STATUS_DEVICE_ERROR;
  }
}

vnn_status fail(vnn_status st, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  t_last_error = vformat(fmt, ap);
  va_end(ap);
  return st;
}

vnn_status fail_cl(cl_int err, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  t_last_error = vformat(fmt, ap);
  va_end(ap);
  t_last_error += ": ";
  t_last_error += cl_error_name(err);
  return status_from_cl(err);
}

const char* last_error() { return t_last_error.c_str(); }

}  // namespace vnn_opencl
