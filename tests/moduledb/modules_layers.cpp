// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// module_db mappings of the activations, Linear, Embedding and the
// normalization layers. Positions follow torch.nn's constructors.
#include "moddb.hpp"

namespace vnn::moddb {
namespace {

// inplace=True for a module whose vnn form has no inplace option.
void no_inplace(Call& c, size_t i) {
  if (c.boolean(i, "inplace", false)) gap("inplace=True (vnn's module has no inplace option)");
}
// A dim that PyTorch lets be None (legacy implicit dim): vnn takes none.
int64_t softmax_dim(Call& c) {
  if (!c.has(0, "dim")) gap("dim=None (PyTorch's deprecated implicit dim)");
  return c.integer(0, "dim");
}

// ---- activations -----------------------------------------------------------------
MODDB("nn.ReLU") { return unary(nn::ReLU(nn::ReLUOptions(c.boolean(0, "inplace", false)))); };
MODDB("nn.ReLU6") { return unary(nn::ReLU6(nn::ReLU6Options(c.boolean(0, "inplace", false)))); };
MODDB("nn.SELU") { return unary(nn::SELU(nn::SELUOptions(c.boolean(0, "inplace", false)))); };
MODDB("nn.ELU") {
  nn::ELUOptions o;
  o.alpha(c.number(0, "alpha", 1.0)).inplace(c.boolean(1, "inplace", false));
  return unary(nn::ELU(o));
};
MODDB("nn.CELU") {
  nn::CELUOptions o;
  o.alpha(c.number(0, "alpha", 1.0)).inplace(c.boolean(1, "inplace", false));
  return unary(nn::CELU(o));
};
MODDB("nn.GLU") { return unary(nn::GLU(nn::GLUOptions(c.integer(0, "dim", -1)))); };
MODDB("nn.Hardtanh") {
  if (c.has(3, "min_value") || c.has(4, "max_value")) gap("Hardtanh's deprecated min_value / max_value");
  nn::HardtanhOptions o;
  o.min_val(c.number(0, "min_val", -1.0)).max_val(c.number(1, "max_val", 1.0)).inplace(c.boolean(2, "inplace", false));
  return unary(nn::Hardtanh(o));
};
MODDB("nn.Hardswish") {
  no_inplace(c, 0);
  return unary(nn::Hardswish());
};
MODDB("nn.Hardshrink") { return unary(nn::Hardshrink(nn::HardshrinkOptions(c.number(0, "lambd", 0.5)))); };
MODDB("nn.Softshrink") { return unary(nn::Softshrink(nn::SoftshrinkOptions(c.number(0, "lambd", 0.5)))); };
MODDB("nn.Threshold") {
  nn::ThresholdOptions o(c.number(0, "threshold"), c.number(1, "value"));
  return unary(nn::Threshold(o.inplace(c.boolean(2, "inplace", false))));
};
MODDB("nn.Softplus") {
  nn::SoftplusOptions o;
  o.beta(c.number(0, "beta", 1.0)).threshold(c.number(1, "threshold", 20.0));
  return unary(nn::Softplus(o));
};
MODDB("nn.LeakyReLU") {
  nn::LeakyReLUOptions o;
  o.negative_slope(c.number(0, "negative_slope", 0.01)).inplace(c.boolean(1, "inplace", false));
  return unary(nn::LeakyReLU(o));
};
MODDB("nn.PReLU") {
  nn::PReLUOptions o;
  o.num_parameters(c.integer(0, "num_parameters", 1)).init(c.number(1, "init", 0.25));
  return unary(nn::PReLU(o));
};
MODDB("nn.GELU") { return unary(nn::GELU(nn::GELUOptions().approximate(c.str(0, "approximate", "none")))); };
MODDB("nn.SiLU") {
  no_inplace(c, 0);
  return unary(nn::SiLU());
};
MODDB("nn.Mish") {
  no_inplace(c, 0);
  return unary(nn::Mish());
};
MODDB("nn.Sigmoid") { return unary(nn::Sigmoid()); };
MODDB("nn.Tanh") { return unary(nn::Tanh()); };
MODDB("nn.Tanhshrink") { return unary(nn::Tanhshrink()); };
MODDB("nn.Softsign") { return unary(nn::Softsign()); };
MODDB("nn.LogSigmoid") { return unary(nn::LogSigmoid()); };
MODDB("nn.Softmax") { return unary(nn::Softmax(nn::SoftmaxOptions(int(softmax_dim(c))))); };
MODDB("nn.LogSoftmax") { return unary(nn::LogSoftmax(nn::LogSoftmaxOptions(int(softmax_dim(c))))); };
MODDB("nn.Softmin") { return unary(nn::Softmin(nn::SoftminOptions(softmax_dim(c)))); };
MODDB("nn.Softmax2d") { return unary(nn::Softmax2d()); };

// ---- Linear, Embedding -------------------------------------------------------------------
MODDB("nn.Linear") {
  nn::LinearOptions o(c.integer(0, "in_features"), c.integer(1, "out_features"));
  return unary(nn::Linear(o.bias(c.boolean(2, "bias", true))));
};
MODDB("nn.Bilinear") {
  nn::BilinearOptions o(c.integer(0, "in1_features"), c.integer(1, "in2_features"), c.integer(2, "out_features"));
  return binary(nn::Bilinear(o.bias(c.boolean(3, "bias", true))), "input1", "input2");
};
MODDB("nn.Embedding") {
  nn::EmbeddingOptions o(c.integer(0, "num_embeddings"), c.integer(1, "embedding_dim"));
  if (c.has(2, "padding_idx")) o.padding_idx(c.integer(2, "padding_idx"));
  if (c.has(3, "max_norm")) gap("Embedding(max_norm=...)");
  if (c.number(4, "norm_type", 2.0) != 2.0) gap("Embedding(norm_type=...)");
  if (c.boolean(5, "scale_grad_by_freq", false)) gap("Embedding(scale_grad_by_freq=True)");
  if (c.boolean(6, "sparse", false)) gap("Embedding(sparse=True)");
  if (c.has(7, "_weight") || c.boolean(8, "_freeze", false)) gap("Embedding(_weight / _freeze)");
  return unary(nn::Embedding(o));
};

// ---- normalization -------------------------------------------------------------------
nn::BatchNormOptions batch_norm_options(Call& c) {
  nn::BatchNormOptions o(c.integer(0, "num_features"));
  if (c.given(2, "momentum") && !c.has(2, "momentum")) gap("BatchNorm(momentum=None): cumulative average");
  o.eps(c.number(1, "eps", 1e-5)).momentum(c.number(2, "momentum", 0.1));
  return o.affine(c.boolean(3, "affine", true)).track_running_stats(c.boolean(4, "track_running_stats", true));
}
MODDB("nn.BatchNorm1d") { return unary(nn::BatchNorm1d(batch_norm_options(c))); };
MODDB("nn.BatchNorm2d") { return unary(nn::BatchNorm2d(batch_norm_options(c))); };
MODDB("nn.BatchNorm3d") { return unary(nn::BatchNorm3d(batch_norm_options(c))); };
// InstanceNorm1d/2d/3d(num_features, eps, momentum, affine=False, track_running_stats=False).
template <class Holder>
Built instance_norm(Call& c) {
  nn::InstanceNormOptions o(c.integer(0, "num_features"));
  if (c.given(2, "momentum") && !c.has(2, "momentum")) gap("InstanceNorm(momentum=None): cumulative average");
  o.eps(c.number(1, "eps", 1e-5)).momentum(c.number(2, "momentum", 0.1)).affine(c.boolean(3, "affine", false));
  return unary(Holder(o.track_running_stats(c.boolean(4, "track_running_stats", false))));
}
MODDB("nn.InstanceNorm1d") { return instance_norm<nn::InstanceNorm1d>(c); };
MODDB("nn.InstanceNorm2d") { return instance_norm<nn::InstanceNorm2d>(c); };
MODDB("nn.InstanceNorm3d") { return instance_norm<nn::InstanceNorm3d>(c); };
MODDB("nn.LocalResponseNorm") {
  nn::LocalResponseNormOptions o(c.integer(0, "size"));
  o.alpha(c.number(1, "alpha", 1e-4)).beta(c.number(2, "beta", 0.75)).k(c.number(3, "k", 1.0));
  return unary(nn::LocalResponseNorm(o));
};
MODDB("nn.GroupNorm") {
  nn::GroupNormOptions o(c.integer(0, "num_groups"), c.integer(1, "num_channels"));
  return unary(nn::GroupNorm(o.eps(c.number(2, "eps", 1e-5)).affine(c.boolean(3, "affine", true))));
};
MODDB("nn.LayerNorm") {
  nn::LayerNormOptions o(Shape(c.ints(0, "normalized_shape", {})));
  o.eps(c.number(1, "eps", 1e-5)).elementwise_affine(c.boolean(2, "elementwise_affine", true));
  if (!c.boolean(3, "bias", true)) gap("LayerNorm(bias=False)");
  return unary(nn::LayerNorm(o));
};
MODDB("nn.RMSNorm") {
  nn::RMSNormOptions o(Shape(c.ints(0, "normalized_shape", {})));
  if (c.has(1, "eps")) o.eps(c.number(1, "eps"));
  return unary(nn::RMSNorm(o.elementwise_affine(c.boolean(2, "elementwise_affine", true))));
};

}  // namespace
}  // namespace vnn::moddb
