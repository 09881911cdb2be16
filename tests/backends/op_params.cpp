// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The named op parameters of the plugin ABI (vnn/backend_abi.h) and their
// one decoder (backends/common/op_params.hpp): pack then unpack gives the
// same values in the positional order docs/ops.md documents (the wire
// format of ABI 1), too few values or out-of-range ones are refused.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "common/grid_sample_params.hpp"
#include "common/op_params.hpp"
#include "vnn/backend_abi.h"

using namespace vnn::kernels;

namespace {

vnn_op op_with(const std::vector<int64_t>& ints, const std::vector<double>& scalars = {}, int32_t outputs = 1) {
  vnn_op op{};
  op.struct_size = sizeof(vnn_op);
  op.ints = ints.empty() ? nullptr : ints.data();
  op.num_ints = int32_t(ints.size());
  op.scalars = scalars.empty() ? nullptr : scalars.data();
  op.num_scalars = int32_t(scalars.size());
  static vnn_tensor_desc descs[4] = {};  // only counted, never read
  op.outputs = descs;
  op.num_outputs = outputs;
  return op;
}

}  // namespace

TEST_CASE("pool2d params: packed in the documented order, decoded back, bad ones refused") {
  vnn_pool2d_params p{VNN_POOL_AVG, 3, 2, 2, 1, 1, 0, 1, 2, 0, 5};
  std::vector<int64_t> ints(VNN_POOL2D_NUM_INTS);
  vnn_pool2d_pack(&p, ints.data());
  // docs/ops.md: {mode, kh, kw, sh, sw, ph, pw, dh, dw, count_include_pad, divisor_override}
  CHECK(ints == std::vector<int64_t>{VNN_POOL_AVG, 3, 2, 2, 1, 1, 0, 1, 2, 0, 5});
  vnn_pool2d_params q{};
  REQUIRE(decode_pool2d(op_with(ints), &q));
  CHECK(q.mode == VNN_POOL_AVG);
  CHECK(q.kernel_h == 3);
  CHECK(q.kernel_w == 2);
  CHECK(q.stride_h == 2);
  CHECK(q.stride_w == 1);
  CHECK(q.pad_h == 1);
  CHECK(q.pad_w == 0);
  CHECK(q.dilation_h == 1);
  CHECK(q.dilation_w == 2);
  CHECK(q.count_include_pad == 0);
  CHECK(q.divisor_override == 5);

  CHECK_FALSE(decode_pool2d(op_with({ints.begin(), ints.end() - 1}), &q));  // 10 ints
  for (size_t field : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(7), size_t(8)}) {
    std::vector<int64_t> bad = ints;
    bad[field] = 0;  // kernel, stride, dilation must be positive
    CHECK_FALSE(decode_pool2d(op_with(bad), &q));
  }
  std::vector<int64_t> bad = ints;
  bad[5] = -1;  // padding
  CHECK_FALSE(decode_pool2d(op_with(bad), &q));
  bad = ints;
  bad[0] = VNN_POOL_COUNT_;  // no such mode
  CHECK_FALSE(decode_pool2d(op_with(bad), &q));
  bad[0] = -1;
  CHECK_FALSE(decode_pool2d(op_with(bad), &q));
}

TEST_CASE("pool modes: max modes have indices, adaptive modes size windows from the output") {
  CHECK(vnn_pool_is_max(VNN_POOL_MAX));
  CHECK(vnn_pool_is_max(VNN_POOL_ADAPTIVE_MAX));
  CHECK_FALSE(vnn_pool_is_max(VNN_POOL_AVG));
  CHECK_FALSE(vnn_pool_is_max(VNN_POOL_ADAPTIVE_AVG));
  CHECK(vnn_pool_is_adaptive(VNN_POOL_ADAPTIVE_AVG));
  CHECK(vnn_pool_is_adaptive(VNN_POOL_ADAPTIVE_MAX));
  CHECK_FALSE(vnn_pool_is_adaptive(VNN_POOL_MAX));
  CHECK_FALSE(vnn_pool_is_adaptive(VNN_POOL_AVG));
}

TEST_CASE("conv2d params: IM2COL's 8 ints default groups to 1, the CONV2D kinds carry 9") {
  vnn_conv2d_params p{3, 5, 1, 2, 1, 2, 1, 1, 4};
  std::vector<int64_t> ints(VNN_CONV2D_NUM_INTS);
  vnn_conv2d_pack(&p, ints.data());
  CHECK(ints == std::vector<int64_t>{3, 5, 1, 2, 1, 2, 1, 1, 4});  // {kh, kw, sh, sw, ph, pw, dh, dw, groups}
  vnn_conv2d_params q{};
  REQUIRE(decode_conv2d(op_with(ints), &q));
  CHECK(q.groups == 4);
  CHECK(q.kernel_w == 5);
  CHECK(q.pad_w == 2);
  REQUIRE(decode_conv2d(op_with({ints.begin(), ints.begin() + VNN_IM2COL_NUM_INTS}), &q));
  CHECK(q.groups == 1);
  CHECK_FALSE(decode_conv2d(op_with({ints.begin(), ints.begin() + 7}), &q));
  std::vector<int64_t> bad = ints;
  bad[8] = 0;
  CHECK_FALSE(decode_conv2d(op_with(bad), &q));
  bad = ints;
  bad[4] = -1;
  CHECK_FALSE(decode_conv2d(op_with(bad), &q));
}

TEST_CASE("optimizer params: each rule's scalars and ints in the documented order, state counted") {
  double s[VNN_OPTIM_MAX_SCALARS];
  int64_t i[VNN_OPTIM_MAX_INTS];
  int32_t ns = 0, ni = 0;

  vnn_optimizer_params sgd{};
  sgd.fn = VNN_OPTIM_SGD;
  sgd.u.sgd = {0.1, 0.9, 0.0, 1e-4, 1, 0, 1, 1};
  REQUIRE(vnn_optimizer_pack(&sgd, s, &ns, i, &ni));
  CHECK(std::vector<double>(s, s + ns) == std::vector<double>{0.1, 0.9, 0.0, 1e-4});
  CHECK(std::vector<int64_t>(i, i + ni) == std::vector<int64_t>{VNN_OPTIM_SGD, 1, 0, 1, 1});
  CHECK(vnn_optimizer_num_state(&sgd) == 1);
  vnn_optimizer_params q{};
  CHECK_FALSE(decode_optimizer(op_with({i, i + ni}, {s, s + ns}, 1), &q));  // the momentum buffer is missing
  REQUIRE(decode_optimizer(op_with({i, i + ni}, {s, s + ns}, 2), &q));
  CHECK(q.fn == VNN_OPTIM_SGD);
  CHECK(q.u.sgd.momentum == 0.9);
  CHECK(q.u.sgd.nesterov == 1);
  CHECK(q.u.sgd.first == 1);
  CHECK_FALSE(decode_optimizer(op_with({i, i + ni - 1}, {s, s + ns}, 2), &q));
  CHECK_FALSE(decode_optimizer(op_with({i, i + ni}, {s, s + ns - 1}, 2), &q));

  vnn_optimizer_params adam{};
  adam.fn = VNN_OPTIM_ADAM;
  adam.u.adam = {1e-3, 0.9, 0.999, 1e-8, 0.01, 0.01, 0.5, 1, 1, 0};
  REQUIRE(vnn_optimizer_pack(&adam, s, &ns, i, &ni));
  CHECK(std::vector<double>(s, s + ns) == std::vector<double>{1e-3, 0.9, 0.999, 1e-8, 0.01, 0.01, 0.5});
  CHECK(std::vector<int64_t>(i, i + ni) == std::vector<int64_t>{VNN_OPTIM_ADAM, 1, 1, 0});
  CHECK(vnn_optimizer_num_state(&adam) == 3);  // amsgrad: max_exp_avg_sq too
  CHECK_FALSE(decode_optimizer(op_with({i, i + ni}, {s, s + ns}, 3), &q));
  REQUIRE(decode_optimizer(op_with({i, i + ni}, {s, s + ns}, 4), &q));
  CHECK(q.u.adam.bias_correction2_sqrt == 0.5);
  CHECK(q.u.adam.decoupled == 1);

  vnn_optimizer_params rms{};
  rms.fn = VNN_OPTIM_RMSPROP;
  rms.u.rmsprop = {0.01, 0.99, 1e-8, 0.0, 0.5, 1, 1, 0};
  REQUIRE(vnn_optimizer_pack(&rms, s, &ns, i, &ni));
  CHECK(std::vector<double>(s, s + ns) == std::vector<double>{0.01, 0.99, 1e-8, 0.0, 0.5});
  CHECK(std::vector<int64_t>(i, i + ni) == std::vector<int64_t>{VNN_OPTIM_RMSPROP, 1, 1, 0});
  CHECK(vnn_optimizer_num_state(&rms) == 3);  // fixed slots

  vnn_optimizer_params ada{};
  ada.fn = VNN_OPTIM_ADAGRAD;
  ada.u.adagrad = {0.05, 1e-10, 0.0, 1};
  REQUIRE(vnn_optimizer_pack(&ada, s, &ns, i, &ni));
  CHECK(std::vector<double>(s, s + ns) == std::vector<double>{0.05, 1e-10, 0.0});
  CHECK(std::vector<int64_t>(i, i + ni) == std::vector<int64_t>{VNN_OPTIM_ADAGRAD, 1});
  REQUIRE(decode_optimizer(op_with({i, i + ni}, {s, s + ns}, 2), &q));
  CHECK(q.u.adagrad.maximize == 1);

  vnn_optimizer_params unknown{};
  unknown.fn = VNN_OPTIM_COUNT_;
  CHECK_FALSE(vnn_optimizer_pack(&unknown, s, &ns, i, &ni));
  CHECK_FALSE(decode_optimizer(op_with({VNN_OPTIM_COUNT_, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1, 1}, 4), &q));
}

namespace {

vnn_tensor_desc desc_of(std::vector<int64_t> sizes, int32_t dtype = VNN_FLOAT32) {
  vnn_tensor_desc d{};
  d.dtype = dtype;
  d.ndim = int32_t(sizes.size());
  int64_t stride = 1;
  for (int k = d.ndim - 1; k >= 0; --k) d.sizes[k] = sizes[size_t(k)], d.strides[k] = stride, stride *= sizes[size_t(k)];
  return d;
}

}  // namespace

TEST_CASE("grid_sample params: packed {mode, padding_mode, align_corners}; the decoder checks every shape") {
  vnn_grid_sample_params p{VNN_GRID_BICUBIC, VNN_GRID_PAD_REFLECTION, 1};
  std::vector<int64_t> ints(VNN_GRID_SAMPLE_NUM_INTS);
  vnn_grid_sample_pack(&p, ints.data());
  CHECK(ints == std::vector<int64_t>{VNN_GRID_BICUBIC, VNN_GRID_PAD_REFLECTION, 1});
  // x [2, 3, 4, 5] at grid [2, 6, 7, 2] -> out [2, 3, 6, 7].
  vnn_tensor_desc in[2] = {desc_of({2, 3, 4, 5}), desc_of({2, 6, 7, 2})};
  vnn_tensor_desc out[1] = {desc_of({2, 3, 6, 7})};
  auto decode = [&](const std::vector<int64_t>& iv, GridSampleOperands* r) {
    vnn_op op = op_with(iv);
    op.kind = VNN_OP_GRID_SAMPLE;
    op.inputs = in, op.num_inputs = 2, op.outputs = out, op.num_outputs = 1;
    std::string why;
    const bool ok = decode_grid_sample(op, r, &why);
    INFO(why);
    CHECK(ok == why.empty());
    return ok;
  };
  GridSampleOperands r;
  REQUIRE(decode(ints, &r));
  CHECK(r.dims == 2);
  CHECK(r.points == 2 * 6 * 7);
  CHECK((r.in[0] == 5 && r.in[1] == 4 && r.out[0] == 7 && r.out[1] == 6));
  CHECK_FALSE(decode({ints.begin(), ints.end() - 1}, &r));
  for (auto bad : {std::vector<int64_t>{VNN_GRID_MODE_COUNT_, 0, 0}, std::vector<int64_t>{0, VNN_GRID_PAD_COUNT_, 0},
                   std::vector<int64_t>{-1, 0, 0}, std::vector<int64_t>{0, 0, 2}})
    CHECK_FALSE(decode(bad, &r));
  out[0] = desc_of({2, 3, 6, 6});  // not the grid's spatial size
  CHECK_FALSE(decode(ints, &r));
  out[0] = desc_of({2, 3, 6, 7});
  in[1] = desc_of({2, 6, 7, 3});  // 3 coordinates for a 4-D x
  CHECK_FALSE(decode(ints, &r));
  in[1] = desc_of({1, 6, 7, 2});  // another batch
  CHECK_FALSE(decode(ints, &r));
  in[1] = desc_of({2, 6, 7, 2}, VNN_FLOAT64);  // another dtype
  CHECK_FALSE(decode(ints, &r));
  in[1] = desc_of({2, 6, 7, 2});
  in[0] = desc_of({2, 3, 1, 4, 5});  // bicubic is 2-D only (and the grid is 4-D)
  CHECK_FALSE(decode(ints, &r));
  in[0] = desc_of({2, 3, 4, 5}, VNN_FLOAT16);
  in[1] = desc_of({2, 6, 7, 2}, VNN_FLOAT16);
  out[0] = desc_of({2, 3, 6, 7}, VNN_FLOAT16);
  CHECK_FALSE(decode(ints, &r));  // 16-bit floats are the core's to convert
}
