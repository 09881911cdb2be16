// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One program holding several variants of a kernel file (see Siblings in
// program_cache.hpp).
#ifndef VNN_OPENCL_SIBLING_SOURCE_HPP
#define VNN_OPENCL_SIBLING_SOURCE_HPP

#include <string>
#include <vector>

namespace vnn_opencl {

// The text that follows the shared part of a program's source (the ABI
// prelude and common.cl, `shared`) when it holds every variant of `body`:
// each copy gets its variant's defines ("-DNAME=value ..."), and every
// name the body declares itself (its vnn_* functions and kernels, its
// typedefs and inline functions) gets the suffix "__<index>" there; after each copy the body's
// own macros and the variant's defines are undefined again, so that the
// next copy starts from the same state. A macro defined by `options` (the
// shared -D defines) is left alone.
std::string sibling_source(const std::string& shared, const std::string& body, const std::string& options,
                           const std::vector<std::string>& variants);

// The name of `kernel_name`'s copy in variant `index` of such a program.
std::string sibling_kernel_name(const char* kernel_name, size_t index);

}  // namespace vnn_opencl

#endif
