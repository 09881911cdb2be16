// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Layers of two inputs: Bilinear, CosineSimilarity and PairwiseDistance,
// with LibTorch's options and functional forms:
//   vnn::nn::Bilinear bl(vnn::nn::BilinearOptions(20, 30, 40));   auto y = bl(x1, x2);
//   auto c = F::cosine_similarity(a, b, F::CosineSimilarityFuncOptions().dim(1));
// Composed of existing ops (bilinear: one GEMM, a product and a sum), so
// they run on every device and backpropagate.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

/// Options of Bilinear: in1_features, in2_features, out_features, bias.
struct BilinearOptions {
  /// y = x1^T A x2 + b with A [out_features, in1_features, in2_features].
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  /// Size of the last dim of the first input.
  VNN_ARG(int64_t, in1_features);
  /// Size of the last dim of the second input.
  VNN_ARG(int64_t, in2_features);
  /// Size of the last dim of the output.
  VNN_ARG(int64_t, out_features);
  /// Whether a learned bias [out_features] is added (default true).
  VNN_ARG(bool, bias) = true;
};
/// Options of CosineSimilarity: dim, eps.
struct CosineSimilarityOptions {
  /// The dim the vectors lie along (default 1).
  VNN_ARG(int64_t, dim) = 1;
  /// Lower bound of each norm (default 1e-8).
  VNN_ARG(double, eps) = 1e-8;
};
/// Options of PairwiseDistance: p, eps, keepdim.
struct PairwiseDistanceOptions {
  /// The norm degree (default 2).
  VNN_ARG(double, norm_degree) = 2.0;
  /// Added to the difference before the norm (default 1e-6).
  VNN_ARG(double, eps) = 1e-6;
  /// Keep the reduced last dim with size 1.
  VNN_ARG(bool, keepdim) = false;
};

namespace functional {
/// Options of cosine_similarity.
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
/// Options of pairwise_distance.
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
/// x1[..., i] weight[o, i, j] x2[..., j] + bias[o]: inputs [*, in1] and [*, in2]
/// with equal leading dims, weight [out, in1, in2], bias [out] or undefined.
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = Tensor());
/// sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along dim, the inputs broadcast (PyTorch 2.x's formula).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});
/// The p-norm of x1 - x2 + eps along the last dim, the inputs broadcast.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options = {});
}  // namespace functional

/// A bilinear map of two inputs (torch.nn.Bilinear); keys "weight"
/// [out, in1, in2] and "bias" [out], both U(-1/sqrt(in1), 1/sqrt(in1)).
class BilinearImpl : public Cloneable<BilinearImpl> {
 public:
  /// A Bilinear from options (ValueError for a size below 1); gen draws the initial values.
  explicit BilinearImpl(const BilinearOptions& options, Generator* gen = nullptr);
  /// Bilinear(in1_features, in2_features, out_features, bias).
  BilinearImpl(int64_t in1, int64_t in2, int64_t out, bool bias = true)
      : BilinearImpl(BilinearOptions(in1, in2, out).bias(bias)) {}
  /// Re-creates weight and bias with fresh initial values.
  void reset() override;
  /// functional::bilinear(input1, input2, weight, bias).
  Tensor forward(const Tensor& input1, const Tensor& input2);
  std::string describe() const override;
  /// The options the layer was built with.
  BilinearOptions options;
  /// [out_features, in1_features, in2_features].
  Tensor weight;
  /// [out_features] (undefined without bias).
  Tensor bias;

 private:
  Generator* gen_ = nullptr;
};
/// The holder of BilinearImpl.
VNN_MODULE(Bilinear);

/// Cosine similarity of two inputs along a dim (torch.nn.CosineSimilarity).
class CosineSimilarityImpl : public Cloneable<CosineSimilarityImpl> {
 public:
  /// A CosineSimilarity from options.
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {})
      : Cloneable("CosineSimilarity"), options(options) {}
  void reset() override {}
  /// functional::cosine_similarity(x1, x2, options).
  Tensor forward(const Tensor& x1, const Tensor& x2) { return functional::cosine_similarity(x1, x2, options); }
  /// The options the layer was built with.
  CosineSimilarityOptions options;
};
/// The holder of CosineSimilarityImpl.
VNN_MODULE(CosineSimilarity);

/// The p-norm distance of two inputs along the last dim (torch.nn.PairwiseDistance).
class PairwiseDistanceImpl : public Cloneable<PairwiseDistanceImpl> {
 public:
  /// A PairwiseDistance from options.
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {})
      : Cloneable("PairwiseDistance"), options(options) {}
  void reset() override {}
  /// functional::pairwise_distance(x1, x2, options).
  Tensor forward(const Tensor& x1, const Tensor& x2) { return functional::pairwise_distance(x1, x2, options); }
  /// The options the layer was built with.
  PairwiseDistanceOptions options;
};
/// The holder of PairwiseDistanceImpl.
VNN_MODULE(PairwiseDistance);

}  // namespace vnn::nn
