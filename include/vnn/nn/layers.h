// Basic layers: Linear, Identity, Flatten, Dropout, Embedding and the
// activations, as torch.nn's. Each is a module class (LinearImpl) and a
// holder (Linear) used as LibTorch's:
//   vnn::nn::Linear fc(vnn::nn::LinearOptions(784, 128).bias(false));
//   vnn::Tensor y = fc(x);   fc->weight;   fc.ptr() is the shared_ptr<LinearImpl>.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  VNN_ARG(int64_t, in_features);
  VNN_ARG(int64_t, out_features);
  VNN_ARG(bool, bias) = true;
};

// y = x W^T + b; W [out, in] and b [out] initialised as PyTorch does
// (kaiming_uniform(a = sqrt 5), bias uniform in +-1/sqrt(in)). gen: the
// generator of the initial values (the default one when null).
class LinearImpl : public Cloneable<LinearImpl> {
 public:
  explicit LinearImpl(const LinearOptions& options, Generator* gen = nullptr);
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr)
      : LinearImpl(LinearOptions(in_features, out_features).bias(bias), gen) {}
  void reset() override { build(nullptr); }
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  LinearOptions options;
  Tensor weight, bias;
  int64_t in_features, out_features;

 private:
  void build(Generator* gen);
};
VNN_MODULE(Linear);

class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  IdentityImpl() : Cloneable("Identity") {}
  void reset() override {}
  Tensor forward(const Tensor& x) override { return x; }
};
VNN_MODULE(Identity);

struct FlattenOptions {
  VNN_ARG(int, start_dim) = 1;
  VNN_ARG(int, end_dim) = -1;
};

// Flattens dims start_dim..end_dim (default: all but the batch dim).
class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : Cloneable("Flatten"), options(options) {}
  FlattenImpl(int start_dim, int end_dim = -1) : FlattenImpl(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  FlattenOptions options;
};
VNN_MODULE(Flatten);

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as LibTorch's
  VNN_ARG(double, p);
};

// Zeroes elements with probability p in training (scaling the rest by
// 1/(1-p)); the identity in eval. Draws from vnn's default generator.
class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  DropoutOptions options;
};
VNN_MODULE(Dropout);

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  VNN_ARG(int64_t, num_embeddings);
  VNN_ARG(int64_t, embedding_dim);
};

// A lookup table [num_embeddings, dim]; forward takes int64 indices.
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& options, Generator* gen = nullptr);
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim, Generator* gen = nullptr)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim), gen) {}
  void reset() override { build(nullptr); }
  Tensor forward(const Tensor& indices) override;
  std::string describe() const override;
  EmbeddingOptions options;
  Tensor weight;

 private:
  void build(Generator* gen);
};
VNN_MODULE(Embedding);

// Activations without options.
class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  ReLUImpl() : Cloneable("ReLU") {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
VNN_MODULE(ReLU);
class GELUImpl : public Cloneable<GELUImpl> {
 public:
  GELUImpl() : Cloneable("GELU") {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
VNN_MODULE(GELU);
class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  SiLUImpl() : Cloneable("SiLU") {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
VNN_MODULE(SiLU);
class SigmoidImpl : public Cloneable<SigmoidImpl> {
 public:
  SigmoidImpl() : Cloneable("Sigmoid") {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
VNN_MODULE(Sigmoid);
class TanhImpl : public Cloneable<TanhImpl> {
 public:
  TanhImpl() : Cloneable("Tanh") {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
VNN_MODULE(Tanh);

struct LeakyReLUOptions {
  VNN_ARG(double, negative_slope) = 0.01;
};
class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Cloneable("LeakyReLU"), options(options) {}
  explicit LeakyReLUImpl(double negative_slope) : LeakyReLUImpl(LeakyReLUOptions().negative_slope(negative_slope)) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  LeakyReLUOptions options;
};
VNN_MODULE(LeakyReLU);

struct SoftmaxOptions {
  SoftmaxOptions(int dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  VNN_ARG(int, dim);
};
class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Cloneable("Softmax"), options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  SoftmaxOptions options;
};
VNN_MODULE(Softmax);
using LogSoftmaxOptions = SoftmaxOptions;
class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Cloneable("LogSoftmax"), options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  LogSoftmaxOptions options;
};
VNN_MODULE(LogSoftmax);

}  // namespace vnn::nn
