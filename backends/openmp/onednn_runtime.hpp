// What the oneDNN sources of the CPU plugin share (onednn_conv.cpp,
// onednn_pooling.cpp): one engine and stream, the per-thread scratch arena,
// the VNN_ONEDNN switch and the primitive-cache key. Internal to the
// onednn_*.cpp files (openmp_backend.cpp sees onednn_common.hpp only).
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include "vnn/backend_abi.h"

namespace vnn::openmp_backend::onednn {

// VNN_ONEDNN unset or anything but 0 / off / false (read once).
bool switched_on();

// The CPU engine and its stream; never destroyed (ops may run from atexit paths).
dnnl::engine& engine();
dnnl::stream& stream();

// Grow-only, 64-byte aligned scratch memory of at least `bytes` for the
// calling thread (oneDNN runs only on the Kokkos pool's owner thread): the
// primitives' scratchpads, blocked-layout temporaries, pooling workspaces.
// Valid until the next call on the same thread. Throws std::bad_alloc.
char* arena(size_t bytes);

// 64-byte rounding of arena offsets.
inline size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

// A primitive-cache key: tag, the op's kind, every operand's dtype, sizes
// and strides, and its ints.
std::string op_key(const vnn_op& op, int64_t tag);

// The first element of an operand.
inline void* element0(const vnn_tensor_desc& d) { return static_cast<float*>(d.data) + d.offset; }

}  // namespace vnn::openmp_backend::onednn
