// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Error reporting: a thread-local last_error text and CL error translation.
#ifndef VNN_OPENCL_ERRORS_HPP
#define VNN_OPENCL_ERRORS_HPP

#include <CL/cl.h>

#include <string>

#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"

namespace vnn_opencl {

// "CL_OUT_OF_RESOURCES" for -5; "CL error -1234" for codes we do not know.
const char* cl_error_name(cl_int err);

// The vnn status a failed CL call maps to: allocation failures become
// VNN_STATUS_OUT_OF_MEMORY (the core may then free cached blocks and retry),
// everything else VNN_STATUS_DEVICE_ERROR.
vnn_status status_from_cl(cl_int err);

// Sets this thread's last_error text.
void set_last_error(std::string text);

// Sets this thread's last_error to str_cat(parts...) (vnn/detail/message.h:
// dtypes by name with abi_dtype(), sizes with desc_sizes()); returns st so
// callers can write `return fail(VNN_STATUS_..., what, ": ...")`.
template <class... Parts>
vnn_status fail(vnn_status st, const Parts&... parts) {
  set_last_error(vnn::detail::str_cat(parts...));
  return st;
}

// As fail(), with status_from_cl(err) and ": <CL error name>" appended.
template <class... Parts>
vnn_status fail_cl(cl_int err, const Parts&... parts) {
  set_last_error(vnn::detail::str_cat(parts..., ": ", cl_error_name(err)));
  return status_from_cl(err);
}

const char* last_error();

}  // namespace vnn_opencl

#endif
