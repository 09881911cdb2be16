// Error reporting: a thread-local last_error text and CL error translation.
#ifndef VNN_OPENCL_ERRORS_HPP
#define VNN_OPENCL_ERRORS_HPP

#include <CL/cl.h>

#include "vnn/backend_abi.h"

namespace vnn_opencl {

// "CL_OUT_OF_RESOURCES" for -5; "CL error -1234" for codes we do not know.
const char* cl_error_name(cl_int err);

// The vnn status a failed CL call maps to: allocation failures become
// VNN_STATUS_OUT_OF_MEMORY (the core may then free cached blocks and retry),
// everything else VNN_STATUS_DEVICE_ERROR.
vnn_status status_from_cl(cl_int err);

// Sets this thread's last_error to the printf-formatted text; returns st so
// callers can write `return fail(VNN_STATUS_..., "...")`.
vnn_status fail(vnn_status st, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// As fail(), with status_from_cl(err) and ": <CL error name>" appended.
vnn_status fail_cl(cl_int err, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

const char* last_error();

}  // namespace vnn_opencl

#endif
