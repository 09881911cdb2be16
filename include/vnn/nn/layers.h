// Basic layers: Linear, Identity, Flatten, Dropout, Embedding and the
// activations, as torch.nn's.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/random.h"

namespace vnn::nn {

// y = x W^T + b; W [out, in] and b [out] initialised as PyTorch does
// (kaiming_uniform(a = sqrt 5), bias uniform in +-1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  Tensor weight, bias;
  int64_t in_features, out_features;
};

class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& x) override { return x; }
};

// Flattens dims start_dim..end_dim (default: all but the batch dim).
class Flatten : public Module {
 public:
  explicit Flatten(int start_dim = 1, int end_dim = -1)
      : Module("Flatten"), start_dim_(start_dim), end_dim_(end_dim) {}
  Tensor forward(const Tensor& x) override;

 private:
  int start_dim_, end_dim_;
};

// Zeroes elements with probability p in training (scaling the rest by
// 1/(1-p)); the identity in eval. Draws from vnn's default generator.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;

 private:
  double p_;
};

// A lookup table [num_embeddings, dim]; forward takes int64 indices.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator* gen = nullptr);
  Tensor forward(const Tensor& indices) override;
  std::string describe() const override;
  Tensor weight;
};

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) override;
};
class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : Module("LeakyReLU"), slope_(negative_slope) {}
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;

 private:
  double slope_;
};
class GELU : public Module {
 public:
  GELU() : Module("GELU") {}
  Tensor forward(const Tensor& x) override;
};
class SiLU : public Module {
 public:
  SiLU() : Module("SiLU") {}
  Tensor forward(const Tensor& x) override;
};
class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) override;
};
class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) override;
};
class Softmax : public Module {
 public:
  explicit Softmax(int dim) : Module("Softmax"), dim_(dim) {}
  Tensor forward(const Tensor& x) override;

 private:
  int dim_;
};
class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int dim) : Module("LogSoftmax"), dim_(dim) {}
  Tensor forward(const Tensor& x) override;

 private:
  int dim_;
};

}  // namespace vnn::nn
