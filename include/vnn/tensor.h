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
#include <type_traits>
#include <vector>

#include "vnn/device.h"
#include "vnn/dtype.h"
#include "vnn/shape.h"

namespace vnn {

namespace detail { struct TensorImpl; struct DeviceContext; }

struct TensorOptions {
  DType dtype = kFloat32;
  Device device = Device("cpu", 0);
  bool pinned = false;  // page-locked host memory (cpu tensors only)
  bool requires_grad = false;  // the new tensor is a leaf that requires grad
  // Whether a dtype was given (a DType or with(DType)): creation functions
  // whose natural dtype is not float32 (randint, randperm, integer arange)
  // keep theirs when only a device is passed.
  bool has_dtype = false;
  TensorOptions() = default;
  TensorOptions(DType t) : dtype(t), has_dtype(true) {}
  TensorOptions(Device d) : device(std::move(d)) {}
  TensorOptions(const char* d) : device(d) {}
  TensorOptions(const std::string& d) : device(d) {}
  TensorOptions with(DType t) const { auto o = *this; o.dtype = t; o.has_dtype = true; return o; }
  // The dtype given, else `fallback`.
  DType dtype_or(DType fallback) const { return has_dtype ? dtype : fallback; }
  TensorOptions with(Device d) const { auto o = *this; o.device = std::move(d); return o; }
  TensorOptions with_requires_grad(bool r = true) const { auto o = *this; o.requires_grad = r; return o; }
};

// torch::indexing's forms for Tensor::index:
//   using namespace vnn::indexing;
//   x.index({Slice(0, 10), 1});   x.index({"...", None, Slice(None, None, 2)});
namespace indexing {
// A new dimension of size 1 (NumPy's newaxis); also "no bound" in a Slice.
inline constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};
// start:stop:step; a missing bound is the whole range, negative bounds
// count from the end and are clamped, as Python's. step must be positive.
struct Slice {
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop, step;
};
class TensorIndex {
 public:
  enum class Kind { integer, slice, none, ellipsis };
  TensorIndex(int64_t i) : kind_(Kind::integer), integer_(i) {}
  TensorIndex(int i) : kind_(Kind::integer), integer_(i) {}
  TensorIndex(Slice s) : kind_(Kind::slice), slice_(s) {}
  TensorIndex(std::nullopt_t) : kind_(Kind::none) {}
  TensorIndex(EllipsisIndexType) : kind_(Kind::ellipsis) {}
  TensorIndex(const char* ellipsis);  // "..." only (ValueError otherwise)
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
};
}  // namespace indexing

class Tensor {
 public:
  Tensor();  // undefined tensor
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl);

  bool defined() const { return impl_ != nullptr; }
  const Shape& sizes() const;
  const Shape& strides() const;
  int64_t size(int dim) const;      // negative dims count from the end
  int64_t stride(int dim) const;
  int dim() const;
  int64_t numel() const;
  int64_t storage_offset() const;
  DType dtype() const;
  Device device() const;
  bool is_contiguous() const;
  bool is_pinned() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(dtype()); }

  // Moving between devices and dtypes. Returns *this when nothing changes.
  // non_blocking: the copy is queued; the source must stay alive until the
  // destination device is synchronised (vnn keeps it alive for you).
  Tensor to(const Device& device, bool non_blocking = false) const;
  Tensor to(DType dtype) const;
  Tensor to(const Device& device, DType dtype, bool non_blocking = false) const;
  Tensor cpu() const { return to(Device("cpu", 0)); }
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor pin_memory() const;

  // Views (share storage).
  Tensor view(const Shape& shape) const;     // one size may be -1
  Tensor reshape(const Shape& shape) const;  // view if possible, else copy
  Tensor transpose(int dim0, int dim1) const;
  Tensor permute(const Shape& dims) const;
  Tensor expand(const Shape& shape) const;
  Tensor narrow(int dim, int64_t start, int64_t length) const;
  Tensor select(int dim, int64_t index) const;
  // A view with explicit sizes, strides and storage offset (in elements), as
  // torch.as_strided. ValueError when it would reach outside the storage.
  // Not differentiable: a tensor that requires grad is refused.
  Tensor as_strided(const Shape& sizes, const Shape& strides, int64_t storage_offset) const;
  Tensor flatten() const;
  // Shape views (src/ops/shape.cpp; free forms in vnn/indexing.h).
  // flatten(start, end) merges dims start..end (a view where their strides
  // allow, else a copy); squeeze(dim) leaves a dim whose size is not 1.
  Tensor flatten(int start_dim, int end_dim = -1) const;
  Tensor unflatten(int dim, const Shape& sizes) const;  // one size may be -1
  Tensor squeeze() const;
  Tensor squeeze(int dim) const;
  Tensor unsqueeze(int dim) const;  // dim in [-(ndim+1), ndim]
  Tensor broadcast_to(const Shape& shape) const;
  // Views of consecutive pieces along dim: of split_size each (the last may
  // be shorter), of the given sizes (summing to size(dim)), or n chunks of
  // ceil(size / n) (fewer when the size runs out, as in PyTorch).
  std::vector<Tensor> split(int64_t split_size, int dim = 0) const;
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int dim = 0) const;
  // Indexing views (src/tensor/tensor_index.cpp), as LibTorch's: t[i] is
  // select(0, i) (negative i counts from the end), so t[i][j] works;
  // slice(dim, start, end, step) is Python's start:end:step on one dim;
  // index({...}) takes integers, Slice, None and Ellipsis. Out-of-range
  // integers throw IndexError naming the dim and its size; a step <= 0
  // throws ValueError.
  Tensor operator[](int64_t index) const;
  Tensor slice(int dim, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  // Writes value into the indexed view (broadcast to its shape).
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, double value);
  // t(): the transpose of a matrix (0-D and 1-D tensors unchanged, more
  // dims: ShapeError); mT(): the last two dims swapped (2 dims or more).
  Tensor t() const;
  Tensor mT() const;

  // In-place.
  Tensor& fill_(double value);
  Tensor& zero_() { return fill_(0.0); }
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& add_(double other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double other);
  // More in-place elementwise ops (vnn/elementwise.h). They keep self's
  // dtype: a result needing a wider category throws DTypeError.
  Tensor& sub_(const Tensor& other, double alpha = 1.0);
  Tensor& sub_(double other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(double other);
  Tensor& pow_(const Tensor& exponent);
  Tensor& pow_(double exponent);
  Tensor& clamp_(double min, double max);  // NaN: no bound
  Tensor& clamp_min_(double min);
  Tensor& clamp_max_(double max);
  Tensor& relu_();
  Tensor& masked_fill_(const Tensor& mask, double value);  // mask broadcasts to self
  // Compound assignment: the in-place ops above (recorded by autograd as
  // those are); self keeps its dtype and shape. Members, so a view such as
  // t[0] += 1 writes through.
  Tensor& operator+=(const Tensor& other) { return add_(other); }
  Tensor& operator+=(double other) { return add_(other); }
  Tensor& operator-=(const Tensor& other) { return sub_(other); }
  Tensor& operator-=(double other) { return sub_(other); }
  Tensor& operator*=(const Tensor& other) { return mul_(other); }
  Tensor& operator*=(double other) { return mul_(other); }
  Tensor& operator/=(const Tensor& other) { return div_(other); }
  Tensor& operator/=(double other) { return div_(other); }

  // Host access. item() and to_vector() synchronise and copy as needed;
  // data<T>() needs a contiguous tensor on a host-accessible device.
  double item() const;
  template <class T> T item() const { return static_cast<T>(item()); }
  template <class T> std::vector<T> to_vector() const;
  template <class T> T* data();
  template <class T> const T* data() const;
  void* raw_data() const;  // device handle (cl_mem on OpenCL)

  // Autograd (see vnn/autograd.h).
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires = true);  // leaves only
  Tensor grad() const;                           // undefined until backward
  void set_grad(const Tensor& g);                // undefined tensor clears it
  bool is_leaf() const;
  std::string grad_fn_name() const;              // "" for leaves
  // gradient: d root / d self, needed unless self has one element.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  Tensor detach() const;                         // shares storage, no history
  Tensor& retain_grad();                         // keep .grad() of a non-leaf
  // Called with the gradient flowing into this tensor; may return a
  // replacement (or an undefined tensor to keep it).
  void register_hook(std::function<Tensor(const Tensor&)> hook);
  uint64_t version() const;

  std::string str() const;  // PyTorch-like printout
  std::string shape_str() const { return sizes().str(); }

  detail::TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<detail::TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<detail::TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Creation.
Tensor empty(const Shape& shape, const TensorOptions& opt = {});
Tensor zeros(const Shape& shape, const TensorOptions& opt = {});
Tensor ones(const Shape& shape, const TensorOptions& opt = {});
Tensor full(const Shape& shape, double value, const TensorOptions& opt = {});
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
// Values start, start + step, ... below end. Floating bounds give float32
// (or opt's dtype); integer bounds (start, end and step all integers) give
// int64 unless opt names a dtype, as PyTorch: arange(0, 10, 1, device) is
// int64 on device.
Tensor arange(double start, double end, double step = 1.0, const TensorOptions& opt = {});
template <class A, class B, class C = int64_t,
          std::enable_if_t<std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>, int> = 0>
Tensor arange(A start, B end, C step = 1, const TensorOptions& opt = {}) {
  return arange(double(start), double(end), double(step), opt.with(opt.dtype_or(kInt64)));
}
// arange(end): 0 .. end-1 (int64 for an integer end).
template <class A, std::enable_if_t<std::is_integral_v<A>, int> = 0>
Tensor arange(A end, const TensorOptions& opt = {}) {
  return arange(int64_t(0), end, int64_t(1), opt);
}
Tensor arange(double end, const TensorOptions& opt = {});
// Copies host data (any shape whose numel matches) to the device.
template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, Device device = Device());
Tensor from_blob(const void* data, const Shape& shape, DType dtype, Device device = Device());
// Wraps memory the caller owns (a host pointer for cpu, a device handle
// elsewhere); the tensor never frees it.
Tensor wrap_external(void* handle, const Shape& shape, DType dtype, Device device = Device());

// Elementwise (NumPy broadcasting, type promotion).
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1.0);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor tanh(const Tensor& a);
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, double b) { return add(a, b); }
inline Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }

}  // namespace vnn
