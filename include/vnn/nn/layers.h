// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Basic layers: Linear, Identity, Flatten, Unflatten, Functional, Dropout, Embedding and the
// activations, as torch.nn's. Each is a module class (LinearImpl) and a
// holder (Linear) used as LibTorch's:
//   vnn::nn::Linear fc(vnn::nn::LinearOptions(784, 128).bias(false));
//   vnn::Tensor y = fc(x);   fc->weight;   fc.ptr() is the shared_ptr<LinearImpl>.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

/// Options of Linear: in_features, out_features, bias (default true).
struct LinearOptions {
  /// A layer mapping `in_features` inputs to `out_features` outputs, with a bias.
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  /// Size of each input sample (the last dim of x).
  VNN_ARG(int64_t, in_features);
  /// Size of each output sample.
  VNN_ARG(int64_t, out_features);
  /// Whether the layer adds a learned bias (default true).
  VNN_ARG(bool, bias) = true;
};

/// y = x W^T + b; W [out, in] and b [out] initialised as PyTorch does
/// (kaiming_uniform(a = sqrt 5), bias uniform in +-1/sqrt(in)). gen: the
/// generator of the initial values (the default one when null).
class LinearImpl : public Cloneable<LinearImpl> {
 public:
  /// A Linear layer from options; `gen` draws the initial values (the default generator when null).
  explicit LinearImpl(const LinearOptions& options, Generator* gen = nullptr);
  /// Linear(in_features, out_features, bias) from sizes directly.
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr)
      : LinearImpl(LinearOptions(in_features, out_features).bias(bias), gen) {}
  void reset() override { build(nullptr); }
  /// x W^T + b over the last dim of x (any leading dims).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  LinearOptions options;
  /// The parameters: W [out, in] and b [out] (undefined without bias).
  ///@{
  Tensor weight, bias;
  ///@}
  /// The sizes the layer maps between (copies of the options).
  ///@{
  int64_t in_features, out_features;
  ///@}

 private:
  void build(Generator* gen);
};
/// The holder of LinearImpl: `Linear fc(784, 128); y = fc(x);`.
VNN_MODULE(Linear);

/// Returns its input unchanged (a placeholder in a Sequential).
class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  /// An Identity layer.
  IdentityImpl() : Cloneable("Identity") {}
  void reset() override {}
  /// x itself.
  Tensor forward(const Tensor& x) { return x; }
};
/// The holder of IdentityImpl.
VNN_MODULE(Identity);

/// Options of Flatten: the range of dims merged.
struct FlattenOptions {
  /// First dim merged (default 1: keeps the batch dim).
  VNN_ARG(int, start_dim) = 1;
  /// Last dim merged (default -1: the last dim).
  VNN_ARG(int, end_dim) = -1;
};

/// Flattens dims start_dim..end_dim (default: all but the batch dim).
class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  /// A Flatten layer from options.
  explicit FlattenImpl(const FlattenOptions& options = {}) : Cloneable("Flatten"), options(options) {}
  /// Flatten(start_dim, end_dim).
  FlattenImpl(int start_dim, int end_dim = -1) : FlattenImpl(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
  void reset() override {}
  /// x.flatten(start_dim, end_dim).
  Tensor forward(const Tensor& x);
  /// The options the layer was built with.
  FlattenOptions options;
};
/// The holder of FlattenImpl.
VNN_MODULE(Flatten);

/// Options of Unflatten: the dim split and the sizes it is split into.
struct UnflattenOptions {
  /// Split `dim` into `sizes` (their product is its size; one may be -1).
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  /// The dim split (negative counts from the end).
  VNN_ARG(int64_t, dim);
  /// The sizes it is split into.
  VNN_ARG(std::vector<int64_t>, sizes);
};
/// Splits one dim into several (torch.nn.Unflatten), the inverse of Flatten.
class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  /// An Unflatten from options.
  explicit UnflattenImpl(const UnflattenOptions& options) : Cloneable("Unflatten"), options(options) {}
  /// Unflatten(dim, sizes).
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  void reset() override {}
  /// x.unflatten(dim, sizes) (ShapeError when the sizes do not multiply to the dim's size).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  UnflattenOptions options;
};
/// The holder of UnflattenImpl.
VNN_MODULE(Unflatten);

/// A module that calls a function (torch::nn::Functional): wraps a
/// `Tensor(Tensor)` callable, or a function with its extra arguments bound
/// after the input: `Functional(F::elu, F::ELUFuncOptions().alpha(2))`.
/// It has no state; clone() shares the callable.
class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  /// The callable type wrapped.
  using Function = std::function<Tensor(Tensor)>;
  /// Wraps `function` (ValueError when it is empty).
  explicit FunctionalImpl(Function function);
  /// Wraps f(input, args...).
  template <class F, class A, class... As>
  FunctionalImpl(F f, A&& arg, As&&... args)  // NOLINT: LibTorch's variadic form
      : FunctionalImpl(Function(std::bind(f, std::placeholders::_1, std::forward<A>(arg), std::forward<As>(args)...))) {}
  void reset() override {}
  /// The function applied to x.
  Tensor forward(const Tensor& x) { return function_(x); }

 private:
  Function function_;
};
/// The holder of FunctionalImpl.
VNN_MODULE(Functional);

/// Options of Dropout: the drop probability p.
struct DropoutOptions {
  /// Drop probability `p` (default 0.5); implicit, as LibTorch's.
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as LibTorch's
  /// Probability of zeroing an element, in [0, 1].
  VNN_ARG(double, p);
  /// Write the result into the input (computed out of place, then copied in).
  VNN_ARG(bool, inplace) = false;
};

/// Zeroes elements with probability p in training (scaling the rest by
/// 1/(1-p)); the identity in eval. Draws from vnn's default generator.
class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  /// A Dropout layer from options (ValueError for p outside [0, 1]).
  explicit DropoutImpl(const DropoutOptions& options = {});
  /// Dropout(p).
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  void reset() override {}
  /// In training, x with each element zeroed with probability p and the rest scaled by 1/(1-p); x itself in eval.
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  DropoutOptions options;

 private:
  Tensor drop(const Tensor& x) const;
};
/// The holder of DropoutImpl.
VNN_MODULE(Dropout);

/// Options of Embedding: the table's size.
struct EmbeddingOptions {
  /// A table of `num_embeddings` vectors of `embedding_dim` values.
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  /// Number of rows (valid indices are 0 .. num_embeddings-1).
  VNN_ARG(int64_t, num_embeddings);
  /// Length of each vector.
  VNN_ARG(int64_t, embedding_dim);
  /// A row (negative counts from the end) that starts at zero and gets no gradient, as PyTorch's padding_idx.
  VNN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// A lookup table [num_embeddings, dim]; forward takes int64 indices. With
/// padding_idx that row is zero at construction and its gradient from
/// forward stays zero (it may still be assigned or loaded).
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  /// An Embedding table from options, initialised from N(0, 1) drawn with `gen` (the default generator when null).
  explicit EmbeddingImpl(const EmbeddingOptions& options, Generator* gen = nullptr);
  /// Embedding(num_embeddings, embedding_dim) from sizes directly.
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim, Generator* gen = nullptr)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim), gen) {}
  void reset() override { build(nullptr); }
  /// The rows of the table at `indices` (int64; IndexError when out of range): shape indices.sizes() + [dim].
  Tensor forward(const Tensor& indices);
  std::string describe() const override;
  /// The options the layer was built with.
  EmbeddingOptions options;
  /// The table, [num_embeddings, embedding_dim].
  Tensor weight;

 private:
  void build(Generator* gen);
};
VNN_MODULE(Embedding);

/// Options of ReLU: inplace.
struct ReLUOptions {
  /// ReLUOptions(inplace), implicit as LibTorch's.
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  /// Write the result into the input (computed out of place, then copied in).
  VNN_ARG(bool, inplace);
};
/// max(x, 0) elementwise (torch.nn.ReLU).
class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  /// A ReLU layer from options.
  explicit ReLUImpl(const ReLUOptions& options = {}) : Cloneable("ReLU"), options(options) {}
  void reset() override {}
  /// ReLU applied to x (torch::nn::ReLU's forward).
  Tensor forward(const Tensor& x);
  /// The options the layer was built with.
  ReLUOptions options;
};
/// The holder of ReLUImpl.
VNN_MODULE(ReLU);
/// Options of GELU: which formula.
struct GELUOptions {
  /// "none": the exact x * (1 + erf(x / sqrt 2)) / 2; "tanh": x * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2.
  VNN_ARG(std::string, approximate) = "none";
};
/// GELU, exact or tanh-approximated (torch.nn.GELU(approximate=...)).
class GELUImpl : public Cloneable<GELUImpl> {
 public:
  /// A GELU layer (ValueError for an approximate other than "none" or "tanh").
  explicit GELUImpl(const GELUOptions& options = {});
  void reset() override {}
  /// vnn::gelu(x, options.approximate()).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  GELUOptions options;
};
/// The holder of GELUImpl.
VNN_MODULE(GELU);
/// x * sigmoid(x) (torch.nn.SiLU).
class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  /// A SiLU layer.
  SiLUImpl() : Cloneable("SiLU") {}
  void reset() override {}
  /// SiLU applied to x (torch::nn::SiLU's forward).
  Tensor forward(const Tensor& x);
};
/// The holder of SiLUImpl.
VNN_MODULE(SiLU);
/// 1 / (1 + exp(-x)) elementwise (torch.nn.Sigmoid).
class SigmoidImpl : public Cloneable<SigmoidImpl> {
 public:
  /// A Sigmoid layer.
  SigmoidImpl() : Cloneable("Sigmoid") {}
  void reset() override {}
  /// Sigmoid applied to x (torch::nn::Sigmoid's forward).
  Tensor forward(const Tensor& x);
};
/// The holder of SigmoidImpl.
VNN_MODULE(Sigmoid);
/// tanh(x) elementwise (torch.nn.Tanh).
class TanhImpl : public Cloneable<TanhImpl> {
 public:
  /// A Tanh layer.
  TanhImpl() : Cloneable("Tanh") {}
  void reset() override {}
  /// Tanh applied to x (torch::nn::Tanh's forward).
  Tensor forward(const Tensor& x);
};
/// The holder of TanhImpl.
VNN_MODULE(Tanh);

/// Options of LeakyReLU: the slope for negative inputs.
struct LeakyReLUOptions {
  /// Slope applied to negative inputs (default 0.01).
  VNN_ARG(double, negative_slope) = 0.01;
  /// Write the result into the input (computed out of place, then copied in).
  VNN_ARG(bool, inplace) = false;
};
/// x for x >= 0, negative_slope * x below (torch.nn.LeakyReLU).
class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  /// A LeakyReLU layer from options.
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Cloneable("LeakyReLU"), options(options) {}
  /// LeakyReLU(negative_slope).
  explicit LeakyReLUImpl(double negative_slope) : LeakyReLUImpl(LeakyReLUOptions().negative_slope(negative_slope)) {}
  void reset() override {}
  /// LeakyReLU applied to x (torch::nn::LeakyReLU's forward).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  LeakyReLUOptions options;
};
/// The holder of LeakyReLUImpl.
VNN_MODULE(LeakyReLU);

/// Options of Softmax and LogSoftmax: the dim normalised over.
struct SoftmaxOptions {
  /// Softmax over `dim`; implicit, as LibTorch's.
  SoftmaxOptions(int dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  /// The dim normalised over (negative counts from the end).
  VNN_ARG(int, dim);
};
/// softmax(x, dim): exp(x) normalised to sum 1 along dim (torch.nn.Softmax).
class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  /// A Softmax layer over options.dim().
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Cloneable("Softmax"), options(options) {}
  void reset() override {}
  /// Softmax applied to x (torch::nn::Softmax's forward).
  Tensor forward(const Tensor& x);
  /// The options the layer was built with.
  SoftmaxOptions options;
};
/// The holder of SoftmaxImpl.
VNN_MODULE(Softmax);
/// Options of LogSoftmax (the same as Softmax's).
using LogSoftmaxOptions = SoftmaxOptions;
/// log_softmax(x, dim), computed stably (torch.nn.LogSoftmax).
class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  /// A LogSoftmax layer over options.dim().
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Cloneable("LogSoftmax"), options(options) {}
  void reset() override {}
  /// LogSoftmax applied to x (torch::nn::LogSoftmax's forward).
  Tensor forward(const Tensor& x);
  /// The options the layer was built with.
  LogSoftmaxOptions options;
};
/// The holder of LogSoftmaxImpl.
VNN_MODULE(LogSoftmax);

}  // namespace vnn::nn
