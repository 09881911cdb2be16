// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Copies within and between devices, dtype conversion, host access.
#include <cstring>

#include "autograd/autograd.hpp"
#include "runtime/stream_state.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/checked_size.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn {

using detail::DeviceContext;

namespace detail {

// Pinned memory comes from the best device with memory of its own (the one
// transfers will go to).
DeviceContext* pinning_context() {
  for (auto& d : devices()) {
    auto& c = context(d.device);
    if (!c.host_accessible && c.backend->host_alloc) {
      c.ensure_initialized();
      return &c;
    }
  }
  return nullptr;
}

Tensor pinned_empty(DeviceContext& pinner, const Shape& sizes, DType dtype) {
  for (auto n : sizes)
    if (n < 0) VNN_THROW(ShapeError, "pin_memory: negative size in shape ", sizes.str());
  int64_t n = 0, bytes = 0;
  if (!checked::numel(sizes.data(), sizes.size(), &n) || !checked::bytes(n, int64_t(itemsize(dtype)), &bytes))
    VNN_THROW(ValueError, "pin_memory: shape ", sizes.str(), " of ", name(dtype),
              " has more bytes than an int64 can count");
  auto s = std::make_shared<Storage>();
  s->ctx = &context(Device("cpu", 0));
  s->pinned_by = &pinner;
  s->kind = Storage::Kind::pinned_host;
  s->bytes = std::max<size_t>(size_t(bytes), 1);
  s->handle = pinner.pinned_cache.acquire(pinner, s->bytes);
  return make_tensor(std::move(s), dtype, sizes, contiguous_strides(sizes), 0);
}

}  // namespace detail

namespace {

// Same-device copy (any strides, any dtypes) through the backend's COPY op.
void device_copy(const Tensor& dst, const Tensor& src) {
  detail::enqueue(VNN_OP_COPY, "copy_", {&src}, dst);
}

// A queued copy on `copier`'s `queue` reads or writes this pinned tensor's
// block: the block may be handed out again only once an event recorded
// behind the copy has completed, however soon the tensor itself goes.
void record_pinned_use(const Tensor& pinned, DeviceContext& copier, void* queue) {
  detail::Storage& s = *pinned.impl()->storage;
  s.pinned_by->pinned_cache.record_use(copier, queue, s.handle);
}

// Moves the bytes of a contiguous tensor to a contiguous tensor of the same
// dtype and size on another device. The copy goes to the current stream of
// the device that is not the host (vnn/stream.h): a non_blocking copy of
// pinned memory then overlaps work on that device's other streams.
void transfer_bytes(const Tensor& dst, const Tensor& src, bool non_blocking) {
  DeviceContext& from = src.impl()->ctx();
  DeviceContext& to = dst.impl()->ctx();
  size_t bytes = src.nbytes();
  if (bytes == 0) return;
  size_t elt = itemsize(src.dtype());
  size_t src_off = size_t(src.storage_offset()) * elt, dst_off = size_t(dst.storage_offset()) * elt;
  from.ensure_initialized();
  to.ensure_initialized();
  if (from.host_accessible) {
    from.synchronize();  // the host reads src: its producers must be done
    const void* host = static_cast<const char*>(src.raw_data()) + src_off;
    bool async = non_blocking && src.is_pinned();
    void* queue = detail::current_queue(to);
    to.check(to.backend->copy_to_device(to.plugin_index, dst.raw_data(), dst_off, host, bytes, queue, async ? 0 : 1),
             "to (host to device copy)");
    if (async) record_pinned_use(src, to, queue);
    return;
  }
  if (to.host_accessible) {
    to.synchronize();  // earlier host-side users of dst must be done
    void* host = static_cast<char*>(dst.raw_data()) + dst_off;
    bool async = non_blocking && dst.is_pinned();
    void* queue = detail::current_queue(from);
    from.check(from.backend->copy_to_host(from.plugin_index, host, src.raw_data(), src_off, bytes, queue,
                                          async ? 0 : 1),
               "to (device to host copy)");
    if (async) record_pinned_use(dst, from, queue);
    return;
  }
  // Two devices of one plugin with a direct path (CUDA peer access): one
  // copy on the source's stream, after the destination's earlier users and
  // before its next ones (the host waits for it, as for a staged copy).
  if (from.backend == to.backend && VNN_BACKEND_HAS(from.backend, copy_peer)) {
    to.synchronize();
    void* queue = detail::current_queue(from);
    vnn_status s = from.backend->copy_peer(to.plugin_index, dst.raw_data(), dst_off, from.plugin_index,
                                           src.raw_data(), src_off, bytes, queue);
    if (s != VNN_STATUS_UNSUPPORTED) {
      from.check(s, "to (device to device copy)");
      from.check(from.backend->queue_synchronize(from.plugin_index, queue), "to (device to device copy)");
      return;
    }
  }
  // Two devices with memories of their own: stage through pinned host memory.
  Tensor staging = empty(src.sizes(), TensorOptions(Device("cpu", 0)).with(src.dtype())).pin_memory();
  transfer_bytes(staging, src, false);
  transfer_bytes(dst, staging, false);
}

}  // namespace

namespace {

// The data movement of copy_, without autograd bookkeeping.
void copy_data(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (dst.impl()->storage->ctx == src.impl()->storage->ctx) {
    device_copy(dst, src);
    return;
  }
  // Convert on the source device, move contiguous bytes, scatter into the
  // destination's layout on the destination device.
  Tensor packed = src;
  if (packed.dtype() != dst.dtype() || !packed.is_contiguous()) {
    packed = detail::make_empty(src.impl()->ctx(), src.sizes(), dst.dtype());
    device_copy(packed, src);
  }
  if (dst.is_contiguous()) {
    transfer_bytes(dst, packed, non_blocking);
  } else {
    Tensor landing = detail::make_empty(dst.impl()->ctx(), dst.sizes(), dst.dtype());
    transfer_bytes(landing, packed, false);
    device_copy(dst, landing);
  }
}

// Gradient of a value that moved to another device / dtype: move it back.
detail::BackwardFn move_back(const Tensor& src) {
  Device device = src.device();
  DType dtype = src.dtype();
  return [device, dtype](const Tensor& g) { return std::vector<Tensor>{g.to(device, dtype)}; };
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  Tensor from = sizes() == src.sizes() ? src : src.expand(sizes());  // throws with both shapes if impossible
  detail::mark_modified(*this, "copy_");
  copy_data(*this, from, non_blocking);
  // Every element of self now comes from src: its old history gets nothing.
  if (detail::needs_grad({&from}))
    detail::record("CopyBackward", *this, {&from}, move_back(from), {}, /*twice_differentiable=*/true);
  else if (requires_grad() && !is_leaf()) detail::forget_history(*this);
  return *this;
}

Tensor Tensor::to(const Device& device, DType dt, bool non_blocking) const {
  if (device == this->device() && dt == dtype()) return *this;
  Tensor out = detail::make_empty(detail::context(device), sizes(), dt);
  copy_data(out, *this, non_blocking);
  detail::note_range_from_host(out, *this);
  if (detail::needs_grad({this}) && is_floating(dt))
    detail::record("ToBackward", out, {this}, move_back(*this), {}, /*twice_differentiable=*/true);
  return out;
}
Tensor Tensor::to(const Device& device, bool non_blocking) const { return to(device, dtype(), non_blocking); }
Tensor Tensor::to(DType dt) const { return to(device(), dt, false); }

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = detail::make_empty(impl()->ctx(), sizes(), dtype());
  device_copy(out, *this);
  if (detail::needs_grad({this}))
    detail::record("CloneBackward", out, {this}, [](const Tensor& g) { return std::vector<Tensor>{g}; }, {},
                   /*twice_differentiable=*/true);
  return out;
}

Tensor Tensor::pin_memory() const {
  VNN_CHECK(ValueError, device().is_cpu(), "pin_memory: only cpu tensors can be pinned; this one is on ", device());
  if (is_pinned()) return *this;
  DeviceContext* pinner = detail::pinning_context();
  if (!pinner) return contiguous();  // no device with memory of its own: host memory is already optimal
  Tensor out = detail::pinned_empty(*pinner, sizes(), dtype());
  out.copy_(*this);
  return out;
}

Tensor& Tensor::fill_(double value) {
  detail::mark_modified(*this, "fill_");
  detail::enqueue(VNN_OP_FILL, "fill_", {}, *this, {value});
  if (requires_grad() && !is_leaf()) detail::forget_history(*this);  // a constant now
  return *this;
}

double Tensor::item() const {
  VNN_CHECK(ValueError, numel() == 1, "item: a tensor with ", numel(), " elements (shape ", sizes(),
            ") cannot be converted to a scalar; only one-element tensors can");
  return to_vector<double>()[0];
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  DType want = std::is_same_v<T, bool> ? kBool : dtype_of<T>::value;
  Tensor host = to(Device("cpu", 0), want).contiguous();
  host.impl()->ctx().synchronize();
  std::vector<T> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  const void* p = detail::host_pointer(*host.impl());
  if constexpr (std::is_same_v<T, bool>) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < out.size(); ++i) out[i] = b[i] != 0;
  } else {
    std::memcpy(out.data(), p, out.size() * sizeof(T));
  }
  return out;
}
template std::vector<float> Tensor::to_vector() const;
template std::vector<double> Tensor::to_vector() const;
template std::vector<int32_t> Tensor::to_vector() const;
template std::vector<int64_t> Tensor::to_vector() const;
template std::vector<uint8_t> Tensor::to_vector() const;
template std::vector<int8_t> Tensor::to_vector() const;
template std::vector<int16_t> Tensor::to_vector() const;
template std::vector<bool> Tensor::to_vector() const;

template <class T>
T* Tensor::data() {
  if (dtype_of<T>::value != dtype())
    VNN_THROW(DTypeError, "data<T>: T is ", name(dtype_of<T>::value), " but the tensor holds ", name(dtype()),
              "; convert with .to(dtype) first");
  impl()->ctx().synchronize();
  return static_cast<T*>(detail::host_pointer(*impl()));
}
template <class T>
const T* Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}
#define VNN_INSTANTIATE_DATA(T) template T* Tensor::data<T>(); template const T* Tensor::data<T>() const;
VNN_INSTANTIATE_DATA(float)
VNN_INSTANTIATE_DATA(double)
VNN_INSTANTIATE_DATA(int32_t)
VNN_INSTANTIATE_DATA(int64_t)
VNN_INSTANTIATE_DATA(uint8_t)
VNN_INSTANTIATE_DATA(int8_t)
VNN_INSTANTIATE_DATA(int16_t)
#undef VNN_INSTANTIATE_DATA

}  // namespace vnn
