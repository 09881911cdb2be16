// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// module_db mappings of the convolutions, pools and padding layers.
// Positions follow torch.nn's constructors.
#include <type_traits>

#include "moddb.hpp"

namespace vnn::moddb {
namespace {

// An n-D size: an int (every dim) or n ints; `dflt` where absent or None,
// a None inside is a gap (PyTorch: keep the input's size there).
std::vector<int64_t> dims(Call& c, size_t i, const char* name, size_t n, int64_t dflt) {
  const Arg* a = c.get(i, name);
  if (!a) return std::vector<int64_t>(n, dflt);
  if (a->kind == Arg::Kind::list)
    for (const auto& x : a->items)
      if (x.none()) gap(std::string(name) + " with None (keep the input's size)");
  auto v = a->ints();
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n)
    throw std::invalid_argument(std::string("module_db: ") + name + " has " + std::to_string(v.size()) + " values");
  return v;
}
// The same as vnn's size type S: int64_t, Size2 or Size3.
template <class S>
S size_of(Call& c, size_t i, const char* name, int64_t dflt) {
  if constexpr (std::is_same_v<S, int64_t>) {
    return dims(c, i, name, 1, dflt)[0];
  } else if constexpr (std::is_same_v<S, Size2>) {
    auto v = dims(c, i, name, 2, dflt);
    return Size2(v[0], v[1]);
  } else {
    auto v = dims(c, i, name, 3, dflt);
    return Size3(v[0], v[1], v[2]);
  }
}
int64_t size1(Call& c, size_t i, const char* name, int64_t dflt) { return size_of<int64_t>(c, i, name, dflt); }
Size2 size2(Call& c, size_t i, const char* name, int64_t dflt) { return size_of<Size2>(c, i, name, dflt); }

// A pool's stride: None (or absent) means the kernel size.
template <class S>
S pool_stride(const S& stride, Call& c, size_t i, const S& kernel) {
  return c.has(i, "stride") ? stride : kernel;
}

PadMode pad_mode(const std::string& s) {
  if (s == "zeros") return kZeros;
  if (s == "reflect") return kReflect;
  if (s == "replicate") return kReplicate;
  if (s == "circular") return kCircular;
  throw std::invalid_argument("module_db: padding_mode " + s);
}

// ---- convolutions ----------------------------------------------------------------------
MODDB("nn.Conv1d") {
  nn::Conv1dOptions o(c.integer(0, "in_channels"), c.integer(1, "out_channels"), size1(c, 2, "kernel_size", 0));
  o.stride(size1(c, 3, "stride", 1));
  const Arg* pad = c.get(4, "padding");
  if (pad && pad->kind == Arg::Kind::string)
    o.padding(nn::Conv1dPadding(pad->s));
  else
    o.padding(size1(c, 4, "padding", 0));
  o.dilation(size1(c, 5, "dilation", 1)).groups(c.integer(6, "groups", 1)).bias(c.boolean(7, "bias", true));
  return unary(nn::Conv1d(o.padding_mode(pad_mode(c.str(8, "padding_mode", "zeros")))));
};
MODDB("nn.Conv2d") {
  nn::Conv2dOptions o(c.integer(0, "in_channels"), c.integer(1, "out_channels"), size2(c, 2, "kernel_size", 0));
  const Arg* pad = c.get(4, "padding");
  if (pad && pad->kind == Arg::Kind::string) gap("Conv2d(padding=\"" + pad->s + "\")");
  if (c.str(8, "padding_mode", "zeros") != "zeros") gap("Conv2d(padding_mode) other than zeros");
  o.stride(size2(c, 3, "stride", 1)).padding(size2(c, 4, "padding", 0)).dilation(size2(c, 5, "dilation", 1));
  return unary(nn::Conv2d(o.groups(c.integer(6, "groups", 1)).bias(c.boolean(7, "bias", true))));
};

MODDB("nn.Conv3d") {
  nn::Conv3dOptions o(c.integer(0, "in_channels"), c.integer(1, "out_channels"),
                      size_of<Size3>(c, 2, "kernel_size", 0));
  o.stride(size_of<Size3>(c, 3, "stride", 1));
  const Arg* pad = c.get(4, "padding");
  if (pad && pad->kind == Arg::Kind::string)
    o.padding(nn::Conv3dPadding(pad->s));
  else
    o.padding(size_of<Size3>(c, 4, "padding", 0));
  o.dilation(size_of<Size3>(c, 5, "dilation", 1)).groups(c.integer(6, "groups", 1)).bias(c.boolean(7, "bias", true));
  return unary(nn::Conv3d(o.padding_mode(pad_mode(c.str(8, "padding_mode", "zeros")))));
};
// ConvTranspose1d/2d/3d(in, out, kernel_size, stride, padding, output_padding, groups, bias, dilation,
// padding_mode); forward(input, output_size=None).
template <class Holder, class S>
Built conv_transpose(Call& c) {
  nn::ConvTransposeOptions<S> o(c.integer(0, "in_channels"), c.integer(1, "out_channels"),
                                size_of<S>(c, 2, "kernel_size", 0));
  o.stride(size_of<S>(c, 3, "stride", 1)).padding(size_of<S>(c, 4, "padding", 0));
  o.output_padding(size_of<S>(c, 5, "output_padding", 0)).groups(c.integer(6, "groups", 1));
  o.bias(c.boolean(7, "bias", true)).dilation(size_of<S>(c, 8, "dilation", 1));
  auto p = Holder(o.padding_mode(pad_mode(c.str(9, "padding_mode", "zeros")))).ptr();
  return {p, [p](Call& f) -> Arg {
            if (!f.has(1, "output_size")) return p->forward(f.tensor(0, "input"));
            return p->forward(f.tensor(0, "input"), f.ints(1, "output_size", {}));
          }};
}
MODDB("nn.ConvTranspose1d") { return conv_transpose<nn::ConvTranspose1d, int64_t>(c); };
MODDB("nn.ConvTranspose2d") { return conv_transpose<nn::ConvTranspose2d, Size2>(c); };
MODDB("nn.ConvTranspose3d") { return conv_transpose<nn::ConvTranspose3d, Size3>(c); };

// ---- pools -----------------------------------------------------------------------------
// A max pool whose forward returns (values, indices) with return_indices=True.
template <class Holder>
Built max_pool(Holder m, bool return_indices) {
  if (!return_indices) return unary(m);
  auto p = m.ptr();
  return {p, [p](Call& f) -> Arg { return p->forward_with_indices(f.tensor(0, "input")); }};
}
MODDB("nn.MaxPool1d") {
  const int64_t k = size1(c, 0, "kernel_size", 0);
  nn::MaxPool1dOptions o(k);
  o.stride(pool_stride(size1(c, 1, "stride", 0), c, 1, k)).padding(size1(c, 2, "padding", 0));
  o.dilation(size1(c, 3, "dilation", 1));
  if (c.boolean(5, "ceil_mode", false)) gap("MaxPool1d(ceil_mode=True)");
  return max_pool(nn::MaxPool1d(o), c.boolean(4, "return_indices", false));
};
MODDB("nn.MaxPool2d") {
  const Size2 k = size2(c, 0, "kernel_size", 0);
  nn::MaxPool2dOptions o(k);
  o.stride(pool_stride(size2(c, 1, "stride", 0), c, 1, k)).padding(size2(c, 2, "padding", 0));
  o.dilation(size2(c, 3, "dilation", 1));
  if (c.boolean(4, "return_indices", false)) gap("MaxPool2d(return_indices=True)");
  if (c.boolean(5, "ceil_mode", false)) gap("MaxPool2d(ceil_mode=True)");
  return unary(nn::MaxPool2d(o));
};
MODDB("nn.AvgPool1d") {
  const int64_t k = size1(c, 0, "kernel_size", 0);
  nn::AvgPool1dOptions o(k);
  o.stride(pool_stride(size1(c, 1, "stride", 0), c, 1, k)).padding(size1(c, 2, "padding", 0));
  if (c.boolean(3, "ceil_mode", false)) gap("AvgPool1d(ceil_mode=True)");
  return unary(nn::AvgPool1d(o.count_include_pad(c.boolean(4, "count_include_pad", true))));
};
MODDB("nn.AvgPool2d") {
  const Size2 k = size2(c, 0, "kernel_size", 0);
  nn::AvgPool2dOptions o(k);
  o.stride(pool_stride(size2(c, 1, "stride", 0), c, 1, k)).padding(size2(c, 2, "padding", 0));
  if (c.boolean(3, "ceil_mode", false)) gap("AvgPool2d(ceil_mode=True)");
  if (c.has(5, "divisor_override")) gap("AvgPool2d(divisor_override=...)");
  return unary(nn::AvgPool2d(o.count_include_pad(c.boolean(4, "count_include_pad", true))));
};
MODDB("nn.AdaptiveAvgPool1d") {
  return unary(nn::AdaptiveAvgPool1d(nn::AdaptiveAvgPool1dOptions(size1(c, 0, "output_size", 0))));
};
MODDB("nn.AdaptiveAvgPool2d") {
  return unary(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(size2(c, 0, "output_size", 0))));
};
MODDB("nn.AdaptiveMaxPool1d") {
  nn::AdaptiveMaxPool1dOptions o(size1(c, 0, "output_size", 0));
  return max_pool(nn::AdaptiveMaxPool1d(o), c.boolean(1, "return_indices", false));
};
MODDB("nn.AdaptiveMaxPool2d") {
  nn::AdaptiveMaxPool2dOptions o(size2(c, 0, "output_size", 0));
  return max_pool(nn::AdaptiveMaxPool2d(o), c.boolean(1, "return_indices", false));
};

MODDB("nn.MaxPool3d") {
  const Size3 k = size_of<Size3>(c, 0, "kernel_size", 0);
  nn::MaxPool3dOptions o(k);
  o.stride(pool_stride(size_of<Size3>(c, 1, "stride", 0), c, 1, k)).padding(size_of<Size3>(c, 2, "padding", 0));
  o.dilation(size_of<Size3>(c, 3, "dilation", 1)).ceil_mode(c.boolean(5, "ceil_mode", false));
  return max_pool(nn::MaxPool3d(o), c.boolean(4, "return_indices", false));
};
MODDB("nn.AvgPool3d") {
  const Size3 k = size_of<Size3>(c, 0, "kernel_size", 0);
  nn::AvgPool3dOptions o(k);
  o.stride(pool_stride(size_of<Size3>(c, 1, "stride", 0), c, 1, k)).padding(size_of<Size3>(c, 2, "padding", 0));
  o.ceil_mode(c.boolean(3, "ceil_mode", false)).count_include_pad(c.boolean(4, "count_include_pad", true));
  if (c.has(5, "divisor_override")) o.divisor_override(c.integer(5, "divisor_override"));
  return unary(nn::AvgPool3d(o));
};
MODDB("nn.AdaptiveAvgPool3d") {
  return unary(nn::AdaptiveAvgPool3d(nn::AdaptiveAvgPool3dOptions(size_of<Size3>(c, 0, "output_size", 0))));
};
MODDB("nn.AdaptiveMaxPool3d") {
  nn::AdaptiveMaxPool3dOptions o(size_of<Size3>(c, 0, "output_size", 0));
  return max_pool(nn::AdaptiveMaxPool3d(o), c.boolean(1, "return_indices", false));
};
// LPPool1d/2d/3d(norm_type, kernel_size, stride=None, ceil_mode=False).
template <class Holder, class S>
Built lp_pool(Call& c) {
  const S k = size_of<S>(c, 1, "kernel_size", 0);
  nn::LPPoolOptions<S> o(c.number(0, "norm_type"), k);
  o.stride(pool_stride(size_of<S>(c, 2, "stride", 0), c, 2, k)).ceil_mode(c.boolean(3, "ceil_mode", false));
  return unary(Holder(o));
}
MODDB("nn.LPPool1d") { return lp_pool<nn::LPPool1d, int64_t>(c); };
MODDB("nn.LPPool2d") { return lp_pool<nn::LPPool2d, Size2>(c); };
MODDB("nn.LPPool3d") { return lp_pool<nn::LPPool3d, Size3>(c); };

// FractionalMaxPool2d/3d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
// _random_samples=None): module_db always passes _random_samples, so the regions are PyTorch's.
template <class Holder, class S>
Built fractional_max_pool(Call& c, size_t n) {
  nn::FractionalMaxPoolOptions<S> o(size_of<S>(c, 0, "kernel_size", 0));
  if (c.has(1, "output_size")) o.output_size(size_of<S>(c, 1, "output_size", 0));
  if (const Arg* r = c.get(2, "output_ratio")) {
    std::vector<double> ratio;
    if (r->kind == Arg::Kind::list)
      for (const auto& x : r->items) ratio.push_back(x.number());
    else
      ratio.assign(n, r->number());
    o.output_ratio(ratio);
  }
  if (c.has(4, "_random_samples")) o._random_samples(c.tensor(4, "_random_samples"));
  return max_pool(Holder(o), c.boolean(3, "return_indices", false));
}
MODDB("nn.FractionalMaxPool2d") { return fractional_max_pool<nn::FractionalMaxPool2d, Size2>(c, 2); };
MODDB("nn.FractionalMaxPool3d") { return fractional_max_pool<nn::FractionalMaxPool3d, Size3>(c, 3); };

// ---- padding ---------------------------------------------------------------------------
// padding: one int for every side, or the 2 * D pads.
template <size_t D>
nn::PadArray<D> pads(Call& c) {
  auto v = c.ints(0, "padding", {});
  return c.get(0, "padding")->kind == Arg::Kind::integer ? nn::PadArray<D>(v.at(0)) : nn::PadArray<D>(v);
}
template <class Holder, size_t D>
Built pad_layer(Call& c) {
  return unary(Holder(pads<D>(c)));
}
template <class Holder, size_t D>
Built constant_pad(Call& c) {
  return unary(Holder(pads<D>(c), c.number(1, "value")));
}
MODDB("nn.ZeroPad1d") { return pad_layer<nn::ZeroPad1d, 1>(c); };
MODDB("nn.ZeroPad2d") { return pad_layer<nn::ZeroPad2d, 2>(c); };
MODDB("nn.ZeroPad3d") { return pad_layer<nn::ZeroPad3d, 3>(c); };
MODDB("nn.ReflectionPad1d") { return pad_layer<nn::ReflectionPad1d, 1>(c); };
MODDB("nn.ReflectionPad2d") { return pad_layer<nn::ReflectionPad2d, 2>(c); };
MODDB("nn.ReflectionPad3d") { return pad_layer<nn::ReflectionPad3d, 3>(c); };
MODDB("nn.ReplicationPad1d") { return pad_layer<nn::ReplicationPad1d, 1>(c); };
MODDB("nn.ReplicationPad2d") { return pad_layer<nn::ReplicationPad2d, 2>(c); };
MODDB("nn.ReplicationPad3d") { return pad_layer<nn::ReplicationPad3d, 3>(c); };
MODDB("nn.CircularPad1d") { return pad_layer<nn::CircularPad1d, 1>(c); };
MODDB("nn.CircularPad2d") { return pad_layer<nn::CircularPad2d, 2>(c); };
MODDB("nn.CircularPad3d") { return pad_layer<nn::CircularPad3d, 3>(c); };
MODDB("nn.ConstantPad1d") { return constant_pad<nn::ConstantPad1d, 1>(c); };
MODDB("nn.ConstantPad2d") { return constant_pad<nn::ConstantPad2d, 2>(c); };
MODDB("nn.ConstantPad3d") { return constant_pad<nn::ConstantPad3d, 3>(c); };

}  // namespace
}  // namespace vnn::moddb
