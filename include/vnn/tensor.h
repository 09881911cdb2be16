// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::Tensor: a reference-counted, strided view of typed memory on a device.
// Copying a Tensor shares it (like torch::Tensor); views share storage.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "vnn/device.h"
#include "vnn/dtype.h"
#include "vnn/shape.h"

namespace vnn {

namespace detail { struct TensorImpl; struct DeviceContext; struct RegisteredTensor; }
class Generator;

/// How a creation function makes a tensor: dtype, device, pinned host memory, requires_grad.
/// LibTorch's spelling: each setter returns a changed copy, so they chain,
///   vnn::zeros({2, 3}, vnn::TensorOptions().dtype(vnn::kLong).device(dev).requires_grad(false));
///   vnn::ones({4}, vnn::dtype(vnn::kDouble).device("cpu"));   // the free helpers start a chain
/// and the getters of the same names read: opt.dtype(), opt.device(), opt.requires_grad().
class TensorOptions {
 public:
  /// float32 on cpu:0, not pinned, no grad.
  TensorOptions() = default;
  /// The given dtype on cpu:0 (`zeros({2}, vnn::kInt64)`).
  TensorOptions(DType t) : dtype_(t), has_dtype_(true) {}
  /// float32 on the given device.
  TensorOptions(Device d) : device_(std::move(d)) {}
  /// float32 on the device named by a string ("cuda:0", "cpu").
  TensorOptions(const char* d) : device_(d) {}
  /// float32 on the device named by a string ("cuda:0", "cpu").
  TensorOptions(const std::string& d) : device_(d) {}

  /// Element type of the new tensor (float32 unless given).
  DType dtype() const { return dtype_; }
  /// Device of the new tensor (cpu:0 unless given).
  const Device& device() const { return device_; }
  /// Whether the new tensor is a leaf that records gradients.
  bool requires_grad() const { return requires_grad_; }
  /// Whether the new tensor is in page-locked host memory (cpu tensors only).
  bool pinned_memory() const { return pinned_; }
  /// Whether a dtype was given explicitly (randint, randperm and integer arange keep theirs otherwise).
  bool has_dtype() const { return has_dtype_; }
  /// The dtype if one was given, else `fallback`.
  DType dtype_or(DType fallback) const { return has_dtype_ ? dtype_ : fallback; }

  /// A copy with dtype `t` (marked as given), as LibTorch's TensorOptions::dtype.
  TensorOptions dtype(DType t) const { return with(t); }
  /// A copy with the dtype of the C++ type T: dtype<float>().
  template <class T> TensorOptions dtype() const;
  /// A copy on device `d` ("cuda:0" and Device("cpu") both convert).
  TensorOptions device(Device d) const { return with(std::move(d)); }
  /// A copy that creates leaves requiring grad (or not).
  TensorOptions requires_grad(bool r) const { return with_requires_grad(r); }
  /// A copy that allocates page-locked host memory (or not); for cpu tensors only.
  TensorOptions pinned_memory(bool p) const { auto o = *this; o.pinned_ = p; return o; }
  /// A copy of these options with dtype `t` (marked as given).
  TensorOptions with(DType t) const { auto o = *this; o.dtype_ = t; o.has_dtype_ = true; return o; }
  /// A copy of these options with device `d`.
  TensorOptions with(Device d) const { auto o = *this; o.device_ = std::move(d); return o; }
  /// A copy of these options with requires_grad set to `r`.
  TensorOptions with_requires_grad(bool r = true) const { auto o = *this; o.requires_grad_ = r; return o; }

 private:
  DType dtype_ = kFloat32;
  Device device_ = Device("cpu", 0);
  bool pinned_ = false;
  bool requires_grad_ = false;
  bool has_dtype_ = false;
};
template <class T> TensorOptions TensorOptions::dtype() const { return with(dtype_of<T>::value); }

/// TensorOptions().dtype(t), to start a chain: vnn::dtype(vnn::kLong).device(dev) (torch::dtype).
inline TensorOptions dtype(DType t) { return TensorOptions().dtype(t); }
/// TensorOptions().dtype<T>(): vnn::dtype<float>() (torch::dtype<T>).
template <class T> TensorOptions dtype() { return TensorOptions().dtype<T>(); }
/// TensorOptions().device(d), to start a chain: vnn::device("opencl:0").dtype(vnn::kInt) (torch::device).
inline TensorOptions device(Device d) { return TensorOptions().device(std::move(d)); }
/// TensorOptions().requires_grad(r) (torch::requires_grad).
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

// torch::indexing's forms for Tensor::index:
//   using namespace vnn::indexing;
//   x.index({Slice(0, 10), 1});   x.index({"...", None, Slice(None, None, 2)});
/// Index forms for Tensor::index and index_put_ (torch::indexing's `None`, `Ellipsis`, `Slice`).
namespace indexing {
// A new dimension of size 1 (NumPy's newaxis); also "no bound" in a Slice.
/// A new dimension of size 1 in an index list (NumPy's newaxis); also "no bound" in a Slice.
inline constexpr std::nullopt_t None = std::nullopt;
/// The type of Ellipsis.
struct EllipsisIndexType {};
/// `...` in an index list: as many full slices as the remaining dims need.
inline constexpr EllipsisIndexType Ellipsis{};
// start:stop:step; a missing bound is the whole range, negative bounds
// count from the end and are clamped, as Python's. step must be positive.
/// Python's start:stop:step on one dim (None bounds are the whole range, negative ones count from the end).
struct Slice {
  /// start:stop:step; each bound may be None (std::nullopt).
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  /// The start bound (std::nullopt: the start of the dim).
  std::optional<int64_t> start, stop, step;
  /// \var stop
  /// The end bound, exclusive (std::nullopt: the end of the dim).
  /// \var step
  /// The stride between positions, positive (std::nullopt: 1).
};
/// One element of an index list: an integer, a Slice, None (new dim) or Ellipsis.
class TensorIndex {
 public:
  /// Which of the four forms this index is.
  enum class Kind { integer, slice, none, ellipsis };
  /// An integer index: selects one position and drops the dim.
  TensorIndex(int64_t i) : kind_(Kind::integer), integer_(i) {}
  /// An integer index: selects one position and drops the dim.
  TensorIndex(int i) : kind_(Kind::integer), integer_(i) {}
  /// A Slice: keeps the dim, narrowed and strided.
  TensorIndex(Slice s) : kind_(Kind::slice), slice_(s) {}
  /// None: inserts a new dim of size 1.
  TensorIndex(std::nullopt_t) : kind_(Kind::none) {}
  /// Ellipsis: stands for the dims not otherwise indexed.
  TensorIndex(EllipsisIndexType) : kind_(Kind::ellipsis) {}
  /// The string "..." as Ellipsis (anything else is a ValueError).
  TensorIndex(const char* ellipsis);  // "..." only (ValueError otherwise)
  /// Which form this index is.
  Kind kind() const { return kind_; }
  /// The integer (Kind::integer only).
  int64_t integer() const { return integer_; }
  /// The slice (Kind::slice only).
  const Slice& slice() const { return slice_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
};
}  // namespace indexing

/// A reference-counted, strided view of typed memory on a device; copies share the data, as torch::Tensor.
class Tensor {
 public:
  /// An undefined tensor (defined() is false), as a default torch::Tensor.
  Tensor();  // undefined tensor
  /// Wraps an implementation object (used by the core and ops; users make tensors with vnn::zeros and friends).
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl);
  // Copies and moves share the tensor, as torch::Tensor's. A module member
  // that received Module::register_parameter's (or register_buffer's) result
  // stays the module's registration: `lm_head->weight = wte->weight` then
  // re-points the registered parameter too, as PyTorch's attribute
  // assignment does. Only the fresh result of a registration passes that
  // binding on (to the member it is assigned to); copies never carry it.
  /// Shares other's tensor (the copy is not bound to any module registration).
  Tensor(const Tensor& other) noexcept : impl_(other.impl_) {}
  /// Takes other's tensor (and a fresh registration's binding, see Module::register_parameter).
  Tensor(Tensor&& other) noexcept : impl_(std::move(other.impl_)) {
    if (other.registration_ & kPendingRegistration) take_registration(other, true);
  }
  /// Shares other's tensor; a registered module member re-points its registration with it.
  Tensor& operator=(const Tensor& other) noexcept {
    impl_ = other.impl_;
    return *this;
  }
  /// Takes other's tensor (and a fresh registration's binding); a registered member re-points its registration.
  Tensor& operator=(Tensor&& other) noexcept {
    if (other.registration_ & kPendingRegistration) {
      if (this != &other) take_registration(other, false);
    }
    if (this != &other) impl_ = std::move(other.impl_);
    return *this;
  }
  /// Releases the tensor (a registered member hands its current tensor back to the module's registry).
  ~Tensor() {
    if (registration_) end_registration();
  }

  /// False for a default-constructed (undefined) tensor.
  bool defined() const { return impl_ != nullptr; }
  /// The size of each dim.
  const Shape& sizes() const;
  /// The stride of each dim, in elements.
  const Shape& strides() const;
  /// The size of `dim` (negative dims count from the end).
  int64_t size(int dim) const;      // negative dims count from the end
  /// The stride of `dim` in elements (negative dims count from the end).
  int64_t stride(int dim) const;
  /// The number of dims (0 for a scalar tensor).
  int dim() const;
  /// The number of elements (product of the sizes; 1 for a 0-dim tensor).
  int64_t numel() const;
  /// Offset of the first element into the storage, in elements.
  int64_t storage_offset() const;
  /// The element type.
  DType dtype() const;
  /// The device the data lives on.
  Device device() const;
  /// Whether the strides are the row-major strides of the sizes (size-1 dims ignored).
  bool is_contiguous() const;
  /// Whether the data is page-locked host memory (see pin_memory()).
  bool is_pinned() const;
  /// numel() times the element size, in bytes.
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(dtype()); }

  // Moving between devices and dtypes. Returns *this when nothing changes.
  // non_blocking: the copy is queued; the source must stay alive until the
  // destination device is synchronised (vnn keeps it alive for you).
  /// A copy on `device` (this tensor itself when it is there already); non_blocking queues the copy.
  Tensor to(const Device& device, bool non_blocking = false) const;
  /// A copy converted to `dtype` (this tensor itself when it already has it).
  Tensor to(DType dtype) const;
  /// A copy on `device` converted to `dtype`, in one step.
  Tensor to(const Device& device, DType dtype, bool non_blocking = false) const;
  /// A copy on cpu:0 (this tensor when it is already there).
  Tensor cpu() const { return to(Device("cpu", 0)); }
  /// This tensor if contiguous, else a contiguous copy.
  Tensor contiguous() const;
  /// A contiguous deep copy with its own storage (recorded by autograd).
  Tensor clone() const;
  /// A copy in page-locked host memory, so copies to a GPU can be asynchronous.
  Tensor pin_memory() const;

  // Views (share storage).
  /// A view with a new shape of the same numel (one size may be -1). It
  /// exists when the strides allow, as PyTorch's rule: each group of dims
  /// merged or split into new dims is contiguous within itself (a slice or
  /// a split of a contiguous tensor views fine; a transpose merged across
  /// its swapped dims does not: ShapeError naming the dims, use reshape).
  Tensor view(const Shape& shape) const;     // one size may be -1
  /// view({sizes...}) with the sizes as arguments: t.view(-1), t.view(B, T, H, E).
  template <class... Ints,
            std::enable_if_t<(sizeof...(Ints) > 0) && (std::is_integral_v<Ints> && ...), int> = 0>
  Tensor view(Ints... sizes) const {
    return view(Shape{static_cast<int64_t>(sizes)...});
  }
  /// The same data in a new shape: a view when one exists (view's rule), else a contiguous copy.
  Tensor reshape(const Shape& shape) const;  // view if possible, else copy
  /// reshape({sizes...}) with the sizes as arguments: t.reshape(-1), t.reshape(2, 3).
  template <class... Ints,
            std::enable_if_t<(sizeof...(Ints) > 0) && (std::is_integral_v<Ints> && ...), int> = 0>
  Tensor reshape(Ints... sizes) const {
    return reshape(Shape{static_cast<int64_t>(sizes)...});
  }
  /// A view with dims `dim0` and `dim1` swapped.
  Tensor transpose(int dim0, int dim1) const;
  /// A view with the dims reordered: dim i of the result is dim dims[i] of this.
  Tensor permute(const Shape& dims) const;
  /// A view broadcasting size-1 dims to `shape` (stride 0, no copy).
  Tensor expand(const Shape& shape) const;
  /// A view of `length` positions of `dim` starting at `start`.
  Tensor narrow(int dim, int64_t start, int64_t length) const;
  /// A view of position `index` of `dim`, which is removed.
  Tensor select(int dim, int64_t index) const;
  // A view with explicit sizes, strides and storage offset (in elements), as
  // torch.as_strided. ValueError when it would reach outside the storage.
  // Not differentiable: a tensor that requires grad is refused.
  /// A view with explicit sizes, strides and storage offset, checked against the storage (torch.as_strided).
  Tensor as_strided(const Shape& sizes, const Shape& strides, int64_t storage_offset) const;
  /// A 1-D view (or copy, when the strides do not allow a view) of all elements.
  Tensor flatten() const;
  // Shape views (src/ops/shape.cpp; free forms in vnn/indexing.h).
  // flatten(start, end) merges dims start..end (a view where their strides
  // allow, else a copy); squeeze(dim) leaves a dim whose size is not 1.
  /// Merges dims start_dim..end_dim into one (a view where the strides allow, else a copy).
  Tensor flatten(int start_dim, int end_dim = -1) const;
  /// Splits `dim` into `sizes` (one may be -1); the inverse of flatten.
  Tensor unflatten(int dim, const Shape& sizes) const;  // one size may be -1
  /// A view without any size-1 dims.
  Tensor squeeze() const;
  /// A view without `dim` if its size is 1; unchanged otherwise.
  Tensor squeeze(int dim) const;
  /// A view with a new size-1 dim at `dim`, in [-(ndim+1), ndim].
  Tensor unsqueeze(int dim) const;  // dim in [-(ndim+1), ndim]
  /// A view broadcasting this tensor to `shape` (as expand, with NumPy's rules).
  Tensor broadcast_to(const Shape& shape) const;
  // Views of consecutive pieces along dim: of split_size each (the last may
  // be shorter), of the given sizes (summing to size(dim)), or n chunks of
  // ceil(size / n) (fewer when the size runs out, as in PyTorch).
  /// Views of `split_size` positions each along `dim` (the last may be shorter).
  std::vector<Tensor> split(int64_t split_size, int dim = 0) const;
  /// Views of the given sizes along `dim` (they must sum to size(dim)).
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int dim = 0) const;
  /// `chunks` views of ceil(size / chunks) positions along `dim` (fewer when the size runs out).
  std::vector<Tensor> chunk(int64_t chunks, int dim = 0) const;
  // Indexing views (src/tensor/tensor_index.cpp), as LibTorch's: t[i] is
  // select(0, i) (negative i counts from the end), so t[i][j] works;
  // slice(dim, start, end, step) is Python's start:end:step on one dim;
  // index({...}) takes integers, Slice, None and Ellipsis. Out-of-range
  // integers throw IndexError naming the dim and its size; a step <= 0
  // throws ValueError.
  /// select(0, index): negative counts from the end, IndexError when out of range.
  Tensor operator[](int64_t index) const;
  /// Python's start:end:step along `dim` as a view (bounds clamped; step must be positive).
  Tensor slice(int dim, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  /// A view indexed by integers, Slice, None and Ellipsis, as torch's Tensor::index.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  /// A view indexed by integers, Slice, None and Ellipsis, as torch's Tensor::index.
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  // Writes value into the indexed view (broadcast to its shape).
  /// Writes `value`, broadcast, into the view index(indices) selects; returns *this.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value);
  /// Writes `value` into every element of the view index(indices) selects; returns *this.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, double value);
  // t(): the transpose of a matrix (0-D and 1-D tensors unchanged, more
  // dims: ShapeError); mT(): the last two dims swapped (2 dims or more).
  /// The transpose of a matrix (0-D and 1-D unchanged; more than 2 dims: ShapeError).
  Tensor t() const;
  /// A view with the last two dims swapped (2 dims or more).
  Tensor mT() const;

  // In-place.
  /// Sets every element to `value` (converted to the dtype); returns *this.
  Tensor& fill_(double value);
  /// Sets every element to zero; returns *this.
  Tensor& zero_() { return fill_(0.0); }
  /// Copies `src` (broadcast, converted to this dtype, from any device) into this tensor.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  /// this += alpha * other, in this tensor's dtype.
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  /// Adds a scalar in place.
  Tensor& add_(double other);
  /// Multiplies by `other` (broadcast) in place.
  Tensor& mul_(const Tensor& other);
  /// Multiplies by a scalar in place.
  Tensor& mul_(double other);
  // More in-place elementwise ops (vnn/elementwise.h). They keep self's
  // dtype: a result needing a wider category throws DTypeError.
  /// this -= alpha * other, in this tensor's dtype.
  Tensor& sub_(const Tensor& other, double alpha = 1.0);
  /// Subtracts a scalar in place.
  Tensor& sub_(double other);
  /// Divides by `other` (broadcast) in place; integer tensors throw DTypeError (the result would be float).
  Tensor& div_(const Tensor& other);
  /// Divides by a scalar in place.
  Tensor& div_(double other);
  /// Raises each element to the matching power in `exponent` (broadcast), in place.
  Tensor& pow_(const Tensor& exponent);
  /// Raises each element to a scalar power in place.
  Tensor& pow_(double exponent);
  /// Clamps into [min, max] in place; a NaN bound is no bound.
  Tensor& clamp_(double min, double max);  // NaN: no bound
  /// Clamps from below in place (NaN: no bound).
  Tensor& clamp_min_(double min);
  /// Clamps from above in place (NaN: no bound).
  Tensor& clamp_max_(double max);
  /// Sets the elements where `mask` (bool, broadcast to self) is true to `value`.
  Tensor& masked_fill_(const Tensor& mask, double value);  // mask broadcasts to self
  // Compound assignment: the in-place ops above (recorded by autograd as
  // those are); self keeps its dtype and shape. Members, so a view such as
  // t[0] += 1 writes through.
  /// add_(other).
  Tensor& operator+=(const Tensor& other) { return add_(other); }
  /// add_(other) with a scalar.
  Tensor& operator+=(double other) { return add_(other); }
  /// sub_(other).
  Tensor& operator-=(const Tensor& other) { return sub_(other); }
  /// sub_(other) with a scalar.
  Tensor& operator-=(double other) { return sub_(other); }
  /// mul_(other).
  Tensor& operator*=(const Tensor& other) { return mul_(other); }
  /// mul_(other) with a scalar.
  Tensor& operator*=(double other) { return mul_(other); }
  /// div_(other).
  Tensor& operator/=(const Tensor& other) { return div_(other); }
  /// div_(other) with a scalar.
  Tensor& operator/=(double other) { return div_(other); }

  // Host access. item() and to_vector() synchronise and copy as needed;
  // data<T>() needs a contiguous tensor on a host-accessible device.
  /// The value of a one-element tensor as a double (synchronises; copies from the device).
  double item() const;
  /// The value of a one-element tensor converted to T.
  template <class T> T item() const { return static_cast<T>(item()); }
  /// All elements in row-major order as T, copied to the host (synchronises).
  template <class T> std::vector<T> to_vector() const;
  /// Pointer to the elements as T; needs a contiguous tensor on a host-accessible device.
  template <class T> T* data();
  /// Read-only pointer to the elements as T; needs a contiguous tensor on a host-accessible device.
  template <class T> const T* data() const;
  /// The backend's handle of the storage (a host pointer on cpu, cl_mem on OpenCL, a device pointer on CUDA/HIP).
  void* raw_data() const;  // device handle (cl_mem on OpenCL)

  // Autograd (see vnn/autograd.h).
  /// Whether autograd records ops on this tensor.
  bool requires_grad() const;
  /// Marks a leaf as requiring grad (or not); returns *this. Non-leaves are refused.
  Tensor& requires_grad_(bool requires = true);  // leaves only
  /// The accumulated gradient (undefined until backward reaches this tensor).
  Tensor grad() const;                           // undefined until backward
  /// Replaces the gradient; an undefined tensor clears it.
  void set_grad(const Tensor& g);                // undefined tensor clears it
  /// The gradient slot itself, as LibTorch's: `p.mutable_grad() = vnn::Tensor()` clears it,
  /// assigning sets it (unchecked: keep the tensor's shape); backward accumulates into it.
  Tensor& mutable_grad();
  /// True for tensors not produced by a recorded op (user-created, or requires_grad false).
  bool is_leaf() const;
  /// The name of the op that produced this tensor ("" for leaves).
  std::string grad_fn_name() const;              // "" for leaves
  // gradient: d root / d self, needed unless self has one element.
  /// Back-propagates from this tensor, accumulating into the .grad() of the leaves that require grad.
  /// `retain_graph` defaults to `create_graph`; `create_graph` records the backward too, so the
  /// gradients can be differentiated again (double backward).
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  /// A tensor sharing this storage, cut from the autograd graph.
  Tensor detach() const;                         // shares storage, no history
  /// Cuts this tensor from the graph in place: it becomes a leaf that does not require grad.
  Tensor& detach_();
  /// Keeps .grad() for this non-leaf after backward; returns *this.
  Tensor& retain_grad();                         // keep .grad() of a non-leaf
  // Called with the gradient flowing into this tensor; may return a
  // replacement (or an undefined tensor to keep it).
  /// Adds a hook called with the gradient flowing into this tensor; it may return a replacement.
  void register_hook(std::function<Tensor(const Tensor&)> hook);
  /// Counter bumped by each in-place write (autograd uses it to catch modified saved tensors).
  uint64_t version() const;

  // ======== LibTorch's method forms of the core ops ========================
  // t.sum(1), t.matmul(w), t.masked_fill(m, 0), t.allclose(u) ...: each is
  // the free function of the same name with *this as its first argument
  // (src/tensor/tensor_methods.cpp, one line each), so its semantics, dtypes
  // and errors are those of the free function, documented in the header the
  // group names. This block is the list of a vnn::Tensor's methods.

  // ---- arithmetic (vnn/tensor.h, vnn/elementwise.h) -------------------------
  /// vnn::add(*this, other, alpha): this + alpha * other.
  Tensor add(const Tensor& other, double alpha = 1.0) const;
  /// vnn::add(*this, other) with a scalar.
  Tensor add(double other) const;
  /// vnn::sub(*this, other, alpha): this - alpha * other.
  Tensor sub(const Tensor& other, double alpha = 1.0) const;
  /// vnn::sub(*this, other) with a scalar.
  Tensor sub(double other) const;
  /// vnn::mul(*this, other).
  Tensor mul(const Tensor& other) const;
  /// vnn::mul(*this, other) with a scalar.
  Tensor mul(double other) const;
  /// vnn::div(*this, other): true division.
  Tensor div(const Tensor& other) const;
  /// vnn::div(*this, other) with a scalar.
  Tensor div(double other) const;
  /// vnn::div(*this, other, rounding_mode): "trunc" or "floor" rounding, in the promoted dtype.
  Tensor div(const Tensor& other, const std::string& rounding_mode) const;
  /// vnn::div(*this, other, rounding_mode) with a scalar.
  Tensor div(double other, const std::string& rounding_mode) const;
  /// vnn::pow(*this, exponent), broadcast.
  Tensor pow(const Tensor& exponent) const;
  /// vnn::pow(*this, exponent) with a scalar exponent.
  Tensor pow(double exponent) const;
  /// this * this (torch's square), in this dtype.
  Tensor square() const;
  /// vnn::maximum(*this, other): the larger elementwise.
  Tensor maximum(const Tensor& other) const;
  /// vnn::minimum(*this, other): the smaller elementwise.
  Tensor minimum(const Tensor& other) const;
  /// zeros of `shape` with this tensor's dtype and device (torch's new_zeros).
  Tensor new_zeros(const Shape& shape) const;
  /// ones of `shape` with this tensor's dtype and device (torch's new_ones).
  Tensor new_ones(const Shape& shape) const;
  /// `shape` filled with `value`, this tensor's dtype and device (torch's new_full).
  Tensor new_full(const Shape& shape, double value) const;
  /// An uninitialised tensor of `shape`, this tensor's dtype and device (torch's new_empty).
  Tensor new_empty(const Shape& shape) const;
  /// to(kFloat16) (torch's half()).
  Tensor half() const;
  /// to(kBFloat16) (torch's bfloat16()).
  Tensor bfloat16() const;
  /// vnn::clamp(*this, min, max) (a NaN bound is no bound).
  Tensor clamp(double min, double max) const;
  /// vnn::clamp_min(*this, min).
  Tensor clamp_min(double min) const;
  /// vnn::clamp_max(*this, max).
  Tensor clamp_max(double max) const;

  // ---- the op table's unary ops (vnn/ops/unary.def) -------------------------
  // For each op f of the table with a plain signature (neg, abs, exp, log,
  // sqrt, relu, sigmoid, tanh, sin, ..., isnan, bitwise_not; docs/ops.md
  // lists them): Tensor::f() is vnn::f(*this), and Tensor::f_() computes it
  // in place (self keeps its dtype: DTypeError where the result's would
  // differ, as an integer tensor's exp_()).
  /// \cond VNN_OP_TABLE
#define VNN_UNARY_METHODS_PLAIN(NAME) \
  Tensor NAME() const;                \
  Tensor& NAME##_();
#define VNN_UNARY_METHODS_FP32(NAME) VNN_UNARY_METHODS_PLAIN(NAME)
#define VNN_UNARY_METHODS_CUSTOM(NAME)
#define VNN_UNARY_OP(ID, NAME, SIG, ...) VNN_UNARY_METHODS_##SIG(NAME)
#ifndef VNN_DOXYGEN
#include "vnn/ops/unary.def"
#endif
#undef VNN_UNARY_OP
#undef VNN_UNARY_METHODS_PLAIN
#undef VNN_UNARY_METHODS_FP32
#undef VNN_UNARY_METHODS_CUSTOM
  // For each plain op f of the binary table: t.f(other) and t.f_(other),
  // with a tensor or a scalar other (docs/ops.md, "The op table (binary)").
#define VNN_BINARY_METHODS_PLAIN(NAME)   \
  Tensor NAME(const Tensor& other) const; \
  Tensor NAME(double other) const;        \
  Tensor& NAME##_(const Tensor& other);   \
  Tensor& NAME##_(double other);
#define VNN_BINARY_METHODS_CUSTOM(NAME)
#define VNN_BINARY_OP(ID, NAME, SIG, ...) VNN_BINARY_METHODS_##SIG(NAME)
#ifndef VNN_DOXYGEN
#include "vnn/ops/binary.def"
#endif
#undef VNN_BINARY_OP
#undef VNN_BINARY_METHODS_PLAIN
#undef VNN_BINARY_METHODS_CUSTOM
  /// \endcond

  // ---- comparisons and logic, bool results (vnn/elementwise.h) --------------
  /// vnn::eq(*this, other).
  Tensor eq(const Tensor& other) const;
  /// vnn::eq(*this, other) against a scalar.
  Tensor eq(double other) const;
  /// vnn::ne(*this, other).
  Tensor ne(const Tensor& other) const;
  /// vnn::ne(*this, other) against a scalar.
  Tensor ne(double other) const;
  /// vnn::lt(*this, other).
  Tensor lt(const Tensor& other) const;
  /// vnn::lt(*this, other) against a scalar.
  Tensor lt(double other) const;
  /// vnn::le(*this, other).
  Tensor le(const Tensor& other) const;
  /// vnn::le(*this, other) against a scalar.
  Tensor le(double other) const;
  /// vnn::gt(*this, other).
  Tensor gt(const Tensor& other) const;
  /// vnn::gt(*this, other) against a scalar.
  Tensor gt(double other) const;
  /// vnn::ge(*this, other).
  Tensor ge(const Tensor& other) const;
  /// vnn::ge(*this, other) against a scalar.
  Tensor ge(double other) const;
  /// vnn::logical_and(*this, other).
  Tensor logical_and(const Tensor& other) const;
  /// vnn::logical_or(*this, other).
  Tensor logical_or(const Tensor& other) const;
  /// vnn::logical_xor(*this, other).
  Tensor logical_xor(const Tensor& other) const;
  /// vnn::isclose(*this, other, rtol, atol, equal_nan): elementwise closeness.
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  /// vnn::allclose(*this, other, rtol, atol, equal_nan): whether every element is close (synchronises).
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  /// vnn::equal(*this, other): the same sizes and equal elements (synchronises).
  bool equal(const Tensor& other) const;

  // ---- selection (vnn/elementwise.h) ----------------------------------------
  /// vnn::where(condition, *this, other): this where condition is true, else other (torch's self.where).
  Tensor where(const Tensor& condition, const Tensor& other) const;
  /// vnn::where(condition, *this, other) with a scalar other.
  Tensor where(const Tensor& condition, double other) const;
  /// vnn::masked_fill(*this, mask, value): a copy with value where mask is true.
  Tensor masked_fill(const Tensor& mask, double value) const;
  /// vnn::tril(*this, diagonal): the lower triangle of the last two dims.
  Tensor tril(int64_t diagonal = 0) const;
  /// vnn::triu(*this, diagonal): the upper triangle of the last two dims.
  Tensor triu(int64_t diagonal = 0) const;

  // ---- reductions and softmax (vnn/reduction.h) -----------------------------
  /// vnn::sum(*this): the sum of all elements, 0-dim.
  Tensor sum() const;
  /// vnn::sum(*this, dims, keepdim): t.sum(1), t.sum({0, 1}).
  Tensor sum(const Dims& dims, bool keepdim = false) const;
  /// vnn::mean(*this): the mean of all elements (floating dtypes).
  Tensor mean() const;
  /// vnn::mean(*this, dims, keepdim): t.mean(1), t.mean({0, 1}).
  Tensor mean(const Dims& dims, bool keepdim = false) const;
  /// vnn::prod(*this): the product of all elements, 0-dim.
  Tensor prod() const;
  /// vnn::prod(*this, dim, keepdim).
  Tensor prod(int dim, bool keepdim = false) const;
  /// vnn::max(*this): the largest element, 0-dim.
  Tensor max() const;
  /// vnn::max(*this, dim, keepdim): (values, int64 indices); auto [v, i] = t.max(1).
  std::tuple<Tensor, Tensor> max(int dim, bool keepdim = false) const;
  /// vnn::maximum(*this, other) (torch's t.max(other)).
  Tensor max(const Tensor& other) const;
  /// vnn::min(*this): the smallest element, 0-dim.
  Tensor min() const;
  /// vnn::min(*this, dim, keepdim): (values, int64 indices).
  std::tuple<Tensor, Tensor> min(int dim, bool keepdim = false) const;
  /// vnn::minimum(*this, other) (torch's t.min(other)).
  Tensor min(const Tensor& other) const;
  /// vnn::amax(*this, dims, keepdim): the largest values, no indices.
  Tensor amax(const Dims& dims = {}, bool keepdim = false) const;
  /// vnn::amin(*this, dims, keepdim): the smallest values, no indices.
  Tensor amin(const Dims& dims = {}, bool keepdim = false) const;
  /// vnn::argmax(*this): the flat index of the first largest element.
  Tensor argmax() const;
  /// vnn::argmax(*this, dim, keepdim).
  Tensor argmax(int dim, bool keepdim = false) const;
  /// vnn::argmin(*this): the flat index of the first smallest element.
  Tensor argmin() const;
  /// vnn::argmin(*this, dim, keepdim).
  Tensor argmin(int dim, bool keepdim = false) const;
  /// vnn::var(*this, dims, correction, keepdim) (correction 1: unbiased; a bool converts).
  Tensor var(const Dims& dims = {}, int64_t correction = 1, bool keepdim = false) const;
  /// vnn::std(*this, dims, correction, keepdim).
  Tensor std(const Dims& dims = {}, int64_t correction = 1, bool keepdim = false) const;
  /// vnn::norm(*this, p, dims, keepdim): the vector p-norm.
  Tensor norm(double p = 2.0, const Dims& dims = {}, bool keepdim = false) const;
  /// vnn::logsumexp(*this, dims, keepdim).
  Tensor logsumexp(const Dims& dims, bool keepdim = false) const;
  /// vnn::any(*this, dims, keepdim), bool.
  Tensor any(const Dims& dims = {}, bool keepdim = false) const;
  /// vnn::all(*this, dims, keepdim), bool.
  Tensor all(const Dims& dims = {}, bool keepdim = false) const;
  /// vnn::topk(*this, k, dim, largest, sorted): (values, int64 indices) of the k largest (or smallest) along dim.
  std::tuple<Tensor, Tensor> topk(int64_t k, int dim = -1, bool largest = true, bool sorted = true) const;
  /// vnn::softmax(*this, dim).
  Tensor softmax(int dim) const;
  /// vnn::log_softmax(*this, dim).
  Tensor log_softmax(int dim) const;

  // ---- scans (vnn/scan.h) ----------------------------------------------------
  /// vnn::cumsum(*this, dim, dtype): the running sum along dim.
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  /// vnn::cumsum_(*this, dim, dtype), in place.
  Tensor& cumsum_(int64_t dim, std::optional<DType> dtype = std::nullopt);
  /// vnn::cumprod(*this, dim, dtype): the running product along dim.
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  /// vnn::cumprod_(*this, dim, dtype), in place.
  Tensor& cumprod_(int64_t dim, std::optional<DType> dtype = std::nullopt);
  /// vnn::cummax(*this, dim): (running maxima, int64 indices).
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  /// vnn::cummin(*this, dim): (running minima, int64 indices).
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  /// vnn::logcumsumexp(*this, dim): log of the running sum of exp.
  Tensor logcumsumexp(int64_t dim) const;
  /// vnn::nonzero(*this): int64 [n, ndim] indices of the non-zero elements.
  Tensor nonzero() const;
  /// vnn::nonzero_numpy(*this): one int64 index tensor per dim (nonzero(as_tuple=True)).
  std::vector<Tensor> nonzero_numpy() const;
  /// vnn::argwhere(*this): nonzero().
  Tensor argwhere() const;
  /// vnn::count_nonzero(*this, dims): int64 counts of non-zeros over dims (all when empty).
  Tensor count_nonzero(const Dims& dims = {}) const;
  /// vnn::masked_select(*this, mask): the 1-D elements where mask (broadcast) is true.
  Tensor masked_select(const Tensor& mask) const;
  /// vnn::masked_scatter(*this, mask, source): a copy with source's leading elements where mask is true.
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  /// vnn::masked_scatter_(*this, mask, source), in place.
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);
  /// vnn::nansum(*this, dims, keepdim): the sum with NaN counted as 0.
  Tensor nansum(const Dims& dims = {}, bool keepdim = false) const;
  /// vnn::nanmean(*this, dims, keepdim): the mean of the non-NaN elements.
  Tensor nanmean(const Dims& dims = {}, bool keepdim = false) const;
  /// vnn::aminmax(*this, dim, keepdim): (amin, amax) over dim (every element when absent).
  std::tuple<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;

  // ---- sorting and searching (vnn/sorting.h) ----
  /// vnn::sort(*this, dim, descending): (values, int64 indices), stable.
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  /// vnn::sort(*this, stable, dim, descending).
  std::tuple<Tensor, Tensor> sort(bool stable, int64_t dim, bool descending) const;
  /// vnn::argsort(*this, dim, descending).
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  /// vnn::argsort(*this, stable, dim, descending).
  Tensor argsort(bool stable, int64_t dim, bool descending) const;
  /// vnn::msort(*this).
  Tensor msort() const;
  /// vnn::kthvalue(*this, k, dim, keepdim).
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  /// vnn::median(*this).
  Tensor median() const;
  /// vnn::median(*this, dim, keepdim).
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  /// vnn::nanmedian(*this).
  Tensor nanmedian() const;
  /// vnn::nanmedian(*this, dim, keepdim).
  std::tuple<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  /// vnn::mode(*this, dim, keepdim).
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  /// vnn::quantile(*this, q, dim, keepdim, interpolation).
  Tensor quantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  /// vnn::quantile(*this, q, dim, keepdim, interpolation) with a tensor q.
  Tensor quantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  /// vnn::nanquantile(*this, q, dim, keepdim, interpolation).
  Tensor nanquantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     const std::string& interpolation = "linear") const;
  /// vnn::nanquantile(*this, q, dim, keepdim, interpolation) with a tensor q.
  Tensor nanquantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     const std::string& interpolation = "linear") const;
  /// vnn::unique(*this, sorted, return_inverse, return_counts).
  std::tuple<Tensor, Tensor, Tensor> unique(bool sorted = true, bool return_inverse = false,
                                            bool return_counts = false) const;
  /// vnn::unique_consecutive(*this, return_inverse, return_counts).
  std::tuple<Tensor, Tensor, Tensor> unique_consecutive(bool return_inverse = false,
                                                        bool return_counts = false) const;
  /// vnn::bincount(*this, weights, minlength).
  Tensor bincount(const Tensor& weights = {}, int64_t minlength = 0) const;
  /// vnn::histc(*this, bins, min, max).
  Tensor histc(int64_t bins = 100, double min = 0, double max = 0) const;

  // ---- matrix products (vnn/linalg.h) ---------------------------------------
  /// vnn::matmul(*this, other), torch.matmul's rules.
  Tensor matmul(const Tensor& other) const;
  /// vnn::mm(*this, mat2): 2-D by 2-D.
  Tensor mm(const Tensor& mat2) const;
  /// vnn::bmm(*this, mat2): [B, n, k] by [B, k, m].
  Tensor bmm(const Tensor& mat2) const;
  /// vnn::addmm(*this, mat1, mat2, beta, alpha): beta * this + alpha * mat1 @ mat2.
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, double beta = 1.0, double alpha = 1.0) const;

  // ---- indexing (vnn/indexing.h) --------------------------------------------
  /// vnn::index_select(*this, dim, index).
  Tensor index_select(int dim, const Tensor& index) const;
  /// vnn::gather(*this, dim, index).
  Tensor gather(int dim, const Tensor& index) const;
  /// vnn::scatter(*this, dim, index, src): a copy with src written at index.
  Tensor scatter(int dim, const Tensor& index, const Tensor& src) const;
  /// vnn::scatter_(*this, dim, index, src), in place.
  Tensor& scatter_(int dim, const Tensor& index, const Tensor& src);
  /// vnn::scatter_add(*this, dim, index, src): a copy with src added at index.
  Tensor scatter_add(int dim, const Tensor& index, const Tensor& src) const;
  /// vnn::scatter_add_(*this, dim, index, src), in place.
  Tensor& scatter_add_(int dim, const Tensor& index, const Tensor& src);
  /// vnn::index_add(*this, dim, index, src, alpha): a copy with alpha * src added at index.
  Tensor index_add(int dim, const Tensor& index, const Tensor& src, double alpha = 1.0) const;
  /// vnn::index_add_(*this, dim, index, src, alpha), in place.
  Tensor& index_add_(int dim, const Tensor& index, const Tensor& src, double alpha = 1.0);

  // ---- shape ops (vnn/shape_ops.h) ----
  /// vnn::flip(*this, dims): a copy with the order of dims reversed.
  Tensor flip(const Dims& dims) const;
  /// vnn::fliplr(*this): flip(1).
  Tensor fliplr() const;
  /// vnn::flipud(*this): flip(0).
  Tensor flipud() const;
  /// vnn::roll(*this, shifts, dims): a copy rolled by shifts along dims (none: flattened).
  Tensor roll(const Dims& shifts, const Dims& dims = {}) const;
  /// vnn::rot90(*this, k, dims): a copy rotated by k quarter turns in the plane of dims.
  Tensor rot90(int64_t k = 1, const Dims& dims = {0, 1}) const;
  /// vnn::repeat(*this, repeats): a copy tiled repeats[i] times along dim i.
  Tensor repeat(const Dims& repeats) const;
  /// vnn::tile(*this, dims): repeat with dims padded by leading ones.
  Tensor tile(const Dims& dims) const;
  /// vnn::repeat_interleave(*this, repeats, dim): each element repeated (none: flattened).
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  /// vnn::repeat_interleave(*this, repeats, dim) with a count per element.
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt) const;
  /// vnn::unbind(*this, dim): the views of each position along dim.
  std::vector<Tensor> unbind(int dim = 0) const;
  /// vnn::movedim(*this, source, destination): a view with dims moved.
  Tensor movedim(const Dims& source, const Dims& destination) const;
  /// vnn::moveaxis(*this, source, destination): movedim.
  Tensor moveaxis(const Dims& source, const Dims& destination) const;
  /// vnn::swapaxes(*this, axis0, axis1): transpose.
  Tensor swapaxes(int axis0, int axis1) const;
  /// vnn::swapdims(*this, dim0, dim1): transpose.
  Tensor swapdims(int dim0, int dim1) const;
  /// vnn::ravel(*this): a 1-D view when contiguous, else a 1-D copy.
  Tensor ravel() const;
  /// vnn::narrow_copy(*this, dim, start, length): narrow, copied.
  Tensor narrow_copy(int dim, int64_t start, int64_t length) const;
  /// vnn::diag(*this, diagonal): 1-D: a matrix with it on a diagonal; 2-D: a copy of a diagonal.
  Tensor diag(int64_t diagonal = 0) const;
  /// vnn::diagonal(*this, offset, dim1, dim2): a view of a diagonal, appended as the last dim.
  Tensor diagonal(int64_t offset = 0, int dim1 = 0, int dim2 = 1) const;
  /// vnn::diag_embed(*this, offset, dim1, dim2): the last dim placed on diagonals of new dims.
  Tensor diag_embed(int64_t offset = 0, int dim1 = -2, int dim2 = -1) const;
  /// vnn::diagflat(*this, offset): diag of the flattened tensor.
  Tensor diagflat(int64_t offset = 0) const;
  /// vnn::trace(*this): the sum of a matrix's main diagonal.
  Tensor trace() const;
  /// vnn::tensor_split(*this, sections, dim): views of near-equal sections.
  std::vector<Tensor> tensor_split(int64_t sections, int dim = 0) const;
  /// vnn::tensor_split(*this, indices, dim): views split before each index.
  std::vector<Tensor> tensor_split(const std::vector<int64_t>& indices, int dim = 0) const;
  /// vnn::hsplit(*this, sections): tensor_split along dim 1 (dim 0 for 1-D), equal parts.
  std::vector<Tensor> hsplit(int64_t sections) const;
  /// vnn::hsplit(*this, indices).
  std::vector<Tensor> hsplit(const std::vector<int64_t>& indices) const;
  /// vnn::vsplit(*this, sections): along dim 0, equal parts.
  std::vector<Tensor> vsplit(int64_t sections) const;
  /// vnn::vsplit(*this, indices).
  std::vector<Tensor> vsplit(const std::vector<int64_t>& indices) const;
  /// vnn::dsplit(*this, sections): along dim 2, equal parts.
  std::vector<Tensor> dsplit(int64_t sections) const;
  /// vnn::dsplit(*this, indices).
  std::vector<Tensor> dsplit(const std::vector<int64_t>& indices) const;
  /// vnn::outer(*this, vec2): the outer product of two vectors.
  Tensor outer(const Tensor& vec2) const;
  /// vnn::ger(*this, vec2): outer.
  Tensor ger(const Tensor& vec2) const;
  /// vnn::inner(*this, other): the sum over the last dims' product.
  Tensor inner(const Tensor& other) const;
  /// vnn::kron(*this, other): the Kronecker product.
  Tensor kron(const Tensor& other) const;
  /// vnn::cross(*this, other, dim): the 3-D cross product along dim (none: the first dim of size 3).
  Tensor cross(const Tensor& other, std::optional<int64_t> dim = std::nullopt) const;
  /// vnn::cov(*this, correction, fweights, aweights): the covariance of the rows' variables.
  Tensor cov(int64_t correction = 1, const Tensor& fweights = Tensor(), const Tensor& aweights = Tensor()) const;
  /// vnn::corrcoef(*this): Pearson's correlation coefficients of the rows.
  Tensor corrcoef() const;
  /// vnn::take(*this, index): the elements of the flattened tensor at index.
  Tensor take(const Tensor& index) const;
  /// vnn::take_along_dim(*this, indices, dim): gather with broadcasting (none: flattened).
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  /// vnn::index_copy(*this, dim, index, source): a copy with source's slices written at index.
  Tensor index_copy(int dim, const Tensor& index, const Tensor& source) const;
  /// vnn::index_copy_(*this, dim, index, source), in place.
  Tensor& index_copy_(int dim, const Tensor& index, const Tensor& source);
  /// vnn::index_fill(*this, dim, index, value): a copy with the slices at index set to value.
  Tensor index_fill(int dim, const Tensor& index, double value) const;
  /// vnn::index_fill_(*this, dim, index, value), in place.
  Tensor& index_fill_(int dim, const Tensor& index, double value);
  /// vnn::select_scatter(*this, src, dim, index): a copy with src written at select(dim, index).
  Tensor select_scatter(const Tensor& src, int dim, int64_t index) const;
  /// vnn::slice_scatter(*this, src, dim, start, end, step): a copy with src written at slice(...).
  Tensor slice_scatter(const Tensor& src, int dim = 0, std::optional<int64_t> start = std::nullopt,
                       std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  /// vnn::diagonal_scatter(*this, src, offset, dim1, dim2): a copy with src written at diagonal(...).
  Tensor diagonal_scatter(const Tensor& src, int64_t offset = 0, int dim1 = 0, int dim2 = 1) const;

  // ---- random fills, in place (vnn/random.h) --------------------------------
  /// vnn::uniform_(*this, from, to, gen): uniform values in [from, to).
  Tensor& uniform_(double from = 0.0, double to = 1.0, Generator* gen = nullptr);
  /// vnn::normal_(*this, mean, std, gen): normal values.
  Tensor& normal_(double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
  /// vnn::multinomial(*this, num_samples, replacement, gen): int64 category draws from the rows of these weights.
  Tensor multinomial(int64_t num_samples, bool replacement = false, Generator* gen = nullptr) const;

  // ---- shape and type helpers -----------------------------------------------
  /// view(other.sizes()).
  Tensor view_as(const Tensor& other) const;
  /// reshape(other.sizes()).
  Tensor reshape_as(const Tensor& other) const;
  /// expand(other.sizes()).
  Tensor expand_as(const Tensor& other) const;
  /// to(other.dtype()) (torch's type_as).
  Tensor type_as(const Tensor& other) const;
  /// The dtype and device of this tensor as options: vnn::zeros({3}, t.options()).
  TensorOptions options() const;
  /// dtype() (torch's scalar_type()).
  DType scalar_type() const { return dtype(); }
  /// dim() (torch's ndimension()).
  int ndimension() const { return dim(); }
  /// Bytes per element (torch's element_size()).
  size_t element_size() const { return itemsize(dtype()); }
  /// Whether the dtype is floating (float16, bfloat16, float32, float64).
  bool is_floating_point() const { return is_floating(dtype()); }
  /// data<T>() (torch's data_ptr<T>()): a contiguous tensor on a host-accessible device.
  template <class T> T* data_ptr() { return data<T>(); }
  /// data<T>() read-only (torch's data_ptr<T>()).
  template <class T> const T* data_ptr() const { return data<T>(); }
  // ======== end of the method forms ==========================================

  /// The values as text, laid out like PyTorch's printout.
  std::string str() const;  // PyTorch-like printout
  /// The sizes as text, "[2, 3]".
  std::string shape_str() const { return sizes().str(); }

  /// The implementation object (for the core and ops; not stable API).
  detail::TensorImpl* impl() const { return impl_.get(); }
  /// The implementation object's shared pointer (for the core and ops; not stable API).
  const std::shared_ptr<detail::TensorImpl>& impl_ptr() const { return impl_; }

 private:
  friend struct detail::RegisteredTensor;
  static constexpr std::uintptr_t kPendingRegistration = 1;
  // Binds this object to other's registration (other is a fresh registration
  // result); keep_pending: this object is a fresh result in turn (moved into
  // a return value or a container), not yet a member.
  void take_registration(Tensor& other, bool keep_pending) noexcept;
  // Unbinds this object; the registration keeps the tensor it holds now.
  void end_registration() noexcept;

  std::shared_ptr<detail::TensorImpl> impl_;
  // Non-zero on a module member bound to a registered parameter or buffer:
  // the detail::RegisteredTensor's address, | kPendingRegistration while it
  // is the fresh result of the registration, not yet assigned to a member.
  std::uintptr_t registration_ = 0;
};

/// Prints t.str().
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Creation.
/// An uninitialised tensor of `shape` (contents unspecified).
Tensor empty(const Shape& shape, const TensorOptions& opt = {});
/// A tensor of `shape` filled with zeros.
Tensor zeros(const Shape& shape, const TensorOptions& opt = {});
/// A tensor of `shape` filled with ones.
Tensor ones(const Shape& shape, const TensorOptions& opt = {});
/// A tensor of `shape` filled with `value`.
Tensor full(const Shape& shape, double value, const TensorOptions& opt = {});
/// A 0-dim tensor holding `value` (torch::scalar_tensor; float32 unless opt says).
Tensor scalar_tensor(double value, const TensorOptions& opt = {});
/// An uninitialised tensor with t's shape, dtype and device.
Tensor empty_like(const Tensor& t);
/// Zeros with t's shape, dtype and device.
Tensor zeros_like(const Tensor& t);
/// Ones with t's shape, dtype and device.
Tensor ones_like(const Tensor& t);
/// `value` everywhere, with t's shape, dtype and device.
Tensor full_like(const Tensor& t, double value);
// Values start, start + step, ... below end. Floating bounds give float32
// (or opt's dtype); integer bounds (start, end and step all integers) give
// int64 unless opt names a dtype, as PyTorch: arange(0, 10, 1, device) is
// int64 on device.
/// start, start + step, ... below end; float32 for floating bounds (or opt's dtype).
Tensor arange(double start, double end, double step = 1.0, const TensorOptions& opt = {});
template <class A, class B, class C = int64_t,
          std::enable_if_t<std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>, int> = 0>
/// start, start + step, ... below end, int64 for integer bounds unless opt names a dtype.
Tensor arange(A start, B end, C step = 1, const TensorOptions& opt = {}) {
  return arange(double(start), double(end), double(step), opt.with(opt.dtype_or(kInt64)));
}
// arange(end): 0 .. end-1 (int64 for an integer end).
template <class A, std::enable_if_t<std::is_integral_v<A>, int> = 0>
/// 0, 1, ..., end - 1 (int64 for an integer end).
Tensor arange(A end, const TensorOptions& opt = {}) {
  return arange(int64_t(0), end, int64_t(1), opt);
}
/// 0, 1, ... below end, float32 unless opt names a dtype.
Tensor arange(double end, const TensorOptions& opt = {});
// Copies host data (any shape whose numel matches) to the device.
template <class T>
/// Copies host values (numel must match `shape`) into a new tensor on `device`.
Tensor from_vector(const std::vector<T>& values, const Shape& shape, Device device = Device());
/// Copies numel(shape) elements of `dtype` from host memory at `data` into a new tensor on `device`.
Tensor from_blob(const void* data, const Shape& shape, DType dtype, Device device = Device());
// Wraps memory the caller owns (a host pointer for cpu, a device handle
// elsewhere); the tensor never frees it.
/// A tensor over memory the caller owns (host pointer for cpu, device handle elsewhere); never freed by vnn.
Tensor wrap_external(void* handle, const Shape& shape, DType dtype, Device device = Device());

// Elementwise (NumPy broadcasting, type promotion).
/// a + alpha * b, broadcast and promoted.
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);
/// a - alpha * b, broadcast and promoted.
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1.0);
/// a * b, broadcast and promoted.
Tensor mul(const Tensor& a, const Tensor& b);
/// a / b, broadcast and promoted (true division: integers give float32).
Tensor div(const Tensor& a, const Tensor& b);
/// The larger of a and b elementwise (NaN propagates).
Tensor maximum(const Tensor& a, const Tensor& b);
/// The smaller of a and b elementwise (NaN propagates).
Tensor minimum(const Tensor& a, const Tensor& b);
/// a + b with a scalar b (scalar promotion rule).
Tensor add(const Tensor& a, double b);
/// a * b with a scalar b (scalar promotion rule).
Tensor mul(const Tensor& a, double b);
/// -a elementwise.
Tensor neg(const Tensor& a);
/// The absolute value elementwise.
Tensor abs(const Tensor& a);
/// e to the power a, elementwise (integers compute in float32).
Tensor exp(const Tensor& a);
/// The natural log elementwise (integers compute in float32).
Tensor log(const Tensor& a);
/// The square root elementwise (integers compute in float32).
Tensor sqrt(const Tensor& a);
/// max(a, 0) elementwise.
Tensor relu(const Tensor& a);
/// 1 / (1 + exp(-a)) elementwise.
Tensor sigmoid(const Tensor& a);
/// The hyperbolic tangent elementwise.
Tensor tanh(const Tensor& a);
// Every op of the unary op table with a plain signature, f(a) (vnn/ops/unary.def;
// the line's brief says what it computes; docs/ops.md lists them).
/// \cond VNN_OP_TABLE
#define VNN_UNARY_FREE_PLAIN(NAME) Tensor NAME(const Tensor& a);
#define VNN_UNARY_FREE_FP32(NAME) VNN_UNARY_FREE_PLAIN(NAME)
#define VNN_UNARY_FREE_CUSTOM(NAME)
#define VNN_UNARY_OP(ID, NAME, SIG, ...) VNN_UNARY_FREE_##SIG(NAME)
#ifndef VNN_DOXYGEN
#include "vnn/ops/unary.def"
#endif
#undef VNN_UNARY_OP
#undef VNN_UNARY_FREE_PLAIN
#undef VNN_UNARY_FREE_FP32
#undef VNN_UNARY_FREE_CUSTOM
// Every op of the binary op table with a plain signature, f(a, b) and f(a, scalar) (vnn/ops/binary.def).
#define VNN_BINARY_FREE_PLAIN(NAME)              \
  Tensor NAME(const Tensor& a, const Tensor& b); \
  Tensor NAME(const Tensor& a, double b);
#define VNN_BINARY_FREE_CUSTOM(NAME)
#define VNN_BINARY_OP(ID, NAME, SIG, ...) VNN_BINARY_FREE_##SIG(NAME)
#ifndef VNN_DOXYGEN
#include "vnn/ops/binary.def"
#endif
#undef VNN_BINARY_OP
#undef VNN_BINARY_FREE_PLAIN
#undef VNN_BINARY_FREE_CUSTOM
/// \endcond
/// The NumPy broadcast of two shapes; ShapeError naming `op` when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

/// add(a, b).
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
/// sub(a, b).
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
/// mul(a, b).
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
/// div(a, b).
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
/// add(a, b) with a scalar.
inline Tensor operator+(const Tensor& a, double b) { return add(a, b); }
/// mul(a, b) with a scalar.
inline Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
/// neg(a).
inline Tensor operator-(const Tensor& a) { return neg(a); }

}  // namespace vnn
