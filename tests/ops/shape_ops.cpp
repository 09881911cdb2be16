// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn/shape_ops.h on the device under test: reordering, repetition, dim
// moves, diagonals, index grids, joins and splits, and scatter by position,
// each checked against plain host loops; bad input (each error type, its
// message naming the op); float64 finite-difference gradients.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::check_error;
using vnn::test::check_grad;
using vnn::test::max_abs_diff;

namespace {

// 0, 1, 2, ... in the given shape and dtype on the device under test.
Tensor iota(const Shape& shape, DType dt = kFloat32) {
  return arange(0, double(shape.numel())).view(shape).to(device_under_test(), dt);
}
std::vector<double> host(const Tensor& t) { return t.to_vector<double>(); }
Tensor longs(const std::vector<int64_t>& v) { return from_vector(v, {int64_t(v.size())}, device_under_test()); }
Tensor doubles(const std::vector<double>& v, const Shape& s) { return from_vector(v, s, device_under_test()); }

Tensor grad_input(const Shape& shape, uint64_t seed = 7) {
  Generator gen(seed);
  return add(mul(rand(shape, TensorOptions(device_under_test()).with(kFloat64), &gen), 2.0), -1.0).requires_grad_();
}

}  // namespace

TEST_CASE("flip, fliplr, flipud, roll and rot90 against host loops") {
  Tensor x = iota({2, 3, 4});
  std::vector<double> v = host(x);
  auto at = [&](int64_t i, int64_t j, int64_t k) { return v[size_t(i * 12 + j * 4 + k)]; };
  std::vector<double> f = host(flip(x, {0, 2}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) CHECK(f[size_t(i * 12 + j * 4 + k)] == at(1 - i, j, 3 - k));
  CHECK(max_abs_diff(x.flip(-1), flip(x, 2)) == 0);
  Tensor m = iota({3, 4});
  CHECK(host(fliplr(m))[0] == 3);
  CHECK(host(m.flipud())[0] == 8);
  Tensor same = flip(x, {});
  CHECK(same.raw_data() != x.raw_data());  // a copy even with nothing to flip
  CHECK(max_abs_diff(same, x) == 0);
  CHECK(flip(iota({}), 0).item() == 0);

  std::vector<double> mv = host(m), r = host(roll(m, {1, -1}, {0, 1}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) CHECK(r[size_t(i * 4 + j)] == mv[size_t(((i + 2) % 3) * 4 + (j + 1) % 4)]);
  std::vector<double> flat = host(m.roll(2));
  CHECK(m.roll(2).sizes() == m.sizes());
  for (int64_t n = 0; n < 12; ++n) CHECK(flat[size_t(n)] == mv[size_t((n + 10) % 12)]);
  CHECK(max_abs_diff(roll(m, 25, 1), roll(m, 1, 1)) == 0);
  CHECK(roll(iota({0, 3}), 1, 0).sizes() == Shape{0, 3});

  Tensor a = iota({2, 3});
  std::vector<double> av = host(a), q = host(rot90(a));
  CHECK(rot90(a).sizes() == Shape{3, 2});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) CHECK(q[size_t(i * 2 + j)] == av[size_t(j * 3 + (2 - i))]);
  std::vector<double> h = host(rot90(a, 2));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) CHECK(h[size_t(i * 3 + j)] == av[size_t((1 - i) * 3 + (2 - j))]);
  CHECK(max_abs_diff(rot90(a, -1), a.rot90(3)) == 0);
  CHECK(max_abs_diff(rot90(rot90(a, 1), 3), a) == 0);
  CHECK(max_abs_diff(rot90(a, 4), a) == 0);

  check_error<IndexError>([&] { flip(x, 3); }, "flip");
  check_error<ValueError>([&] { flip(x, {0, -3}); }, "flip");
  check_error<ShapeError>([&] { fliplr(iota({3})); }, "fliplr");
  check_error<ShapeError>([&] { flipud(iota({})); }, "flipud");
  check_error<ValueError>([&] { roll(m, {1, 2}); }, "roll");
  check_error<ValueError>([&] { roll(m, {1, 2}, {0}); }, "roll");
  check_error<IndexError>([&] { roll(m, 1, 2); }, "roll");
  check_error<ShapeError>([&] { rot90(iota({3})); }, "rot90");
  check_error<ValueError>([&] { rot90(a, 1, {0, 0}); }, "rot90");
  check_error<ValueError>([&] { rot90(a, 1, {0}); }, "rot90");
}

TEST_CASE("repeat, tile and repeat_interleave against host loops") {
  Tensor x = iota({2, 3});
  std::vector<double> v = host(x);
  Tensor r = repeat(x, {2, 1, 2});
  REQUIRE(r.sizes() == Shape{2, 2, 6});
  std::vector<double> rv = host(r);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 6; ++j) CHECK(rv[size_t(a * 12 + i * 6 + j)] == v[size_t(i * 3 + j % 3)]);
  // Five repeated dims need ten view dims: the two-pass path.
  Tensor y = iota({1, 2, 1, 2, 1});
  Tensor big = y.repeat({2, 2, 2, 2, 2});
  REQUIRE(big.sizes() == Shape{2, 4, 2, 4, 2});
  std::vector<double> bv = host(big);
  for (int64_t n = 0; n < big.numel(); ++n) {
    int64_t d = (n / 2) % 4, b = (n / 16) % 4;
    CHECK(bv[size_t(n)] == double((b % 2) * 2 + d % 2));
  }
  CHECK(repeat(x, {0, 2}).sizes() == Shape{0, 6});
  CHECK(max_abs_diff(repeat(x, {1, 1}), x) == 0);
  CHECK(repeat(iota({}), {3}).sizes() == Shape{3});
  Tensor t = tile(x, {2});
  REQUIRE(t.sizes() == Shape{2, 6});
  std::vector<double> tv = host(t);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 6; ++j) CHECK(tv[size_t(i * 6 + j)] == v[size_t(i * 3 + j % 3)]);
  CHECK(x.tile({2, 1, 1}).sizes() == Shape{2, 2, 3});

  std::vector<double> ri = host(repeat_interleave(x, 2));
  REQUIRE(ri.size() == 12);
  for (size_t n = 0; n < 12; ++n) CHECK(ri[n] == v[n / 2]);
  Tensor rd = x.repeat_interleave(2, 1);
  REQUIRE(rd.sizes() == Shape{2, 6});
  std::vector<double> rdv = host(rd);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 6; ++j) CHECK(rdv[size_t(i * 6 + j)] == v[size_t(i * 3 + j / 2)]);
  Tensor counts = longs({1, 0, 2});
  Tensor rt = repeat_interleave(x, counts, 1);
  REQUIRE(rt.sizes() == Shape{2, 3});
  CHECK(host(rt) == std::vector<double>{0, 2, 2, 3, 5, 5});
  CHECK(host(repeat_interleave(longs({2, 0, 1}))) == std::vector<double>{0, 0, 2});
  CHECK(repeat_interleave(longs({2, 0, 1})).dtype() == kInt64);
  CHECK(host(repeat_interleave(iota({2}), longs({3}))) == std::vector<double>{0, 0, 0, 1, 1, 1});

  check_error<ValueError>([&] { repeat(x, {-1, 2}); }, "repeat");
  check_error<ShapeError>([&] { repeat(x, {2}); }, "repeat");
  check_error<ValueError>([&] { repeat(x, {std::numeric_limits<int64_t>::max(), 2}); }, "repeat");
  check_error<ValueError>([&] { tile(x, {-2}); }, "tile");
  CHECK(repeat_interleave(x, counts, 1, 3).sizes() == Shape{2, 3});
  CHECK(repeat_interleave(x, 2, 0, 4).sizes() == Shape{4, 3});
  check_error<ValueError>([&] { repeat_interleave(x, 2, 0, 5); }, "repeat_interleave");
  check_error<ValueError>([&] { repeat_interleave(x, counts, 1, 2); }, "repeat_interleave");
  check_error<ValueError>([&] { repeat_interleave(x, -1); }, "repeat_interleave");
  check_error<ValueError>([&] { repeat_interleave(x, std::numeric_limits<int64_t>::max(), 1); }, "repeat_interleave");
  check_error<ValueError>([&] { repeat_interleave(x, longs({1, -1, 1}), 1); }, "repeat_interleave");
  check_error<ShapeError>([&] { repeat_interleave(x, longs({1, 1}), 1); }, "repeat_interleave");
  check_error<DTypeError>([&] { repeat_interleave(x, ones({3}, device_under_test()), 1); }, "repeat_interleave");
  check_error<IndexError>([&] { repeat_interleave(x, 2, 2); }, "repeat_interleave");
}

TEST_CASE("unbind, movedim, swapaxes, ravel, narrow_copy, atleast_nd and broadcasting") {
  Tensor x = iota({2, 3, 4});
  std::vector<double> v = host(x);
  std::vector<Tensor> parts = unbind(x, 1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].sizes() == Shape{2, 4});
  CHECK(parts[2].raw_data() == x.raw_data());
  CHECK(host(parts[2])[0] == 8);
  CHECK(x.unbind().size() == 2);

  Tensor m = movedim(x, {0, 2}, {1, 0});
  REQUIRE(m.sizes() == Shape{4, 2, 3});
  CHECK(m.raw_data() == x.raw_data());
  std::vector<double> mv = host(m);
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) CHECK(mv[size_t(k * 6 + i * 3 + j)] == v[size_t(i * 12 + j * 4 + k)]);
  CHECK(x.movedim(0, -1).sizes() == Shape{3, 4, 2});
  CHECK(moveaxis(x, -1, 0).sizes() == Shape{4, 2, 3});
  CHECK(max_abs_diff(swapaxes(x, 0, 2), x.transpose(0, 2)) == 0);
  CHECK(x.swapdims(1, 2).sizes() == Shape{2, 4, 3});

  Tensor tr = x.transpose(0, 2);
  Tensor rv = ravel(tr);
  CHECK(rv.sizes() == Shape{24});
  CHECK(max_abs_diff(rv, tr.contiguous().view({-1})) == 0);
  CHECK(x.ravel().raw_data() == x.raw_data());
  Tensor nc = narrow_copy(x, 2, 1, 2);
  CHECK(nc.raw_data() != x.raw_data());
  CHECK(max_abs_diff(nc, x.narrow(2, 1, 2)) == 0);

  Tensor ones3 = iota({1, 3, 1, 1});
  CHECK(squeeze(ones3, {0, -1}).sizes() == Shape{3, 1});
  CHECK(squeeze(ones3, {0, 1, 2, 3}).sizes() == Shape{3});
  CHECK(squeeze(ones3, std::vector<int64_t>{}).sizes() == ones3.sizes());
  CHECK(squeeze(ones3, {2, 0}).raw_data() == ones3.raw_data());
  CHECK(squeeze(iota({}), {0}).sizes() == Shape{});
  check_error<ValueError>([&] { squeeze(ones3, {0, -4}); }, "squeeze");
  check_error<IndexError>([&] { squeeze(ones3, {0, 4}); }, "squeeze");
  CHECK(atleast_1d(iota({})).sizes() == Shape{1});
  CHECK(atleast_2d(iota({3})).sizes() == Shape{1, 3});
  CHECK(atleast_3d(iota({3})).sizes() == Shape{1, 3, 1});
  CHECK(atleast_3d(iota({2, 3})).sizes() == Shape{2, 3, 1});
  CHECK(atleast_3d(x).raw_data() == x.raw_data());
  std::vector<Tensor> many = atleast_2d(std::vector<Tensor>{iota({}), iota({2})});
  CHECK(many[0].sizes() == Shape{1, 1});
  CHECK(many[1].sizes() == Shape{1, 2});

  CHECK(broadcast_shapes(std::vector<Shape>{{2, 1}, {3}, {1, 1, 1}}) == Shape{1, 2, 3});
  std::vector<Tensor> b = broadcast_tensors({iota({2, 1}), iota({3})});
  CHECK(b[0].sizes() == Shape{2, 3});
  CHECK(host(b[1]) == std::vector<double>{0, 1, 2, 0, 1, 2});
  CHECK(host(b[0]) == std::vector<double>{0, 0, 0, 1, 1, 1});

  check_error<IndexError>([&] { unbind(iota({}), 0); }, "unbind");
  check_error<ValueError>([&] { movedim(x, {0, 1}, {1}); }, "movedim");
  check_error<ValueError>([&] { movedim(x, {0, 0}, {1, 2}); }, "movedim");
  check_error<IndexError>([&] { movedim(x, 3, 0); }, "movedim");
  check_error<IndexError>([&] { narrow_copy(x, 0, 1, 5); }, "narrow");
  check_error<ShapeError>([&] { broadcast_shapes(std::vector<Shape>{{2}, {3}}); }, "broadcast_shapes");
  check_error<ShapeError>([&] { broadcast_tensors({iota({2}), iota({3})}); }, "broadcast");
}

TEST_CASE("the *_copy forms equal their views in new contiguous storage") {
  Tensor x = iota({2, 3, 4});
  auto same = [&](const Tensor& copy, const Tensor& view) {
    CHECK(copy.raw_data() != x.raw_data());
    CHECK(copy.is_contiguous());
    CHECK(copy.sizes() == view.sizes());
    CHECK(max_abs_diff(copy, view) == 0);
  };
  same(alias_copy(x), x);
  same(detach_copy(x), x);
  same(view_copy(x, {6, 4}), x.view({6, 4}));
  same(permute_copy(x, {2, 0, 1}), x.permute({2, 0, 1}));
  same(expand_copy(iota({3, 1}), {2, 3, 5}), iota({3, 1}).expand({2, 3, 5}));
  same(as_strided_copy(x, {2, 2}, {1, 4}), x.as_strided({2, 2}, {1, 4}, 0));
  same(as_strided_copy(x, {3}, {2}, 5), x.as_strided({3}, {2}, 5));
  same(diagonal_copy(x, 1, 1, 2), diagonal(x, 1, 1, 2));
  same(select_copy(x, 1, -1), x.select(1, -1));
  same(slice_copy(x, 2, 1, std::nullopt, 2), x.slice(2, 1, std::nullopt, 2));
  same(t_copy(iota({2, 3})), iota({2, 3}).t());
  same(transpose_copy(x, 0, 2), x.transpose(0, 2));
  same(squeeze_copy(iota({1, 3, 1})), iota({3}));
  same(squeeze_copy(iota({1, 3, 1}), 0), iota({3, 1}));
  same(unsqueeze_copy(x, -1), x.unsqueeze(-1));
  same(unfold_copy(x, 2, 2, 1), unfold(x, 2, 2, 1));
  std::vector<Tensor> ub = unbind_copy(x, 2), sp = split_copy(x, 3, 2), sw = split_with_sizes_copy(x, {1, 3}, 2);
  REQUIRE(ub.size() == 4);
  REQUIRE(sp.size() == 2);
  REQUIRE(sw.size() == 2);
  same(ub[3], x.select(2, 3));
  same(sp[1], x.narrow(2, 3, 1));
  same(sw[1], x.narrow(2, 1, 3));
  Tensor leaf = iota({2, 3}, kFloat64).requires_grad_();
  CHECK_FALSE(detach_copy(leaf).requires_grad());
  check_grad("permute_copy", [](auto& v) { return permute_copy(v[0], {1, 0}) * 2.0; }, {grad_input({2, 3})});
  check_grad("diagonal_copy", [](auto& v) { return diagonal_copy(v[0], -1); }, {grad_input({3, 3})});

  check_error<ShapeError>([&] { view_copy(x, {5, 5}); }, "view");
  check_error<IndexError>([&] { select_copy(x, 0, 2); }, "select");
  check_error<ValueError>([&] { alias_copy(Tensor()); }, "alias_copy");
  check_error<ValueError>([&] { as_strided_copy(x, {100000}, {1}); }, "as_strided");
}

TEST_CASE("unfold: sliding windows as a view") {
  Tensor x = iota({2, 7});
  Tensor w = unfold(x, 1, 3, 2);
  REQUIRE(w.sizes() == Shape{2, 3, 3});
  CHECK(w.raw_data() == x.raw_data());
  std::vector<double> wv = host(w);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 3; ++k) CHECK(wv[size_t(r * 9 + i * 3 + k)] == double(r * 7 + i * 2 + k));
  CHECK(unfold(x, 0, 2, 1).sizes() == Shape{1, 7, 2});
  CHECK(unfold(x, -1, 7, 5).sizes() == Shape{2, 1, 7});
  CHECK(unfold(x, 1, 0, 3).sizes() == Shape{2, 3, 0});
  CHECK(host(unfold(iota({}), 0, 1, 1)) == std::vector<double>{0});
  check_grad("unfold overlapping", [](auto& v) { return unfold(v[0], 1, 3, 1) * 2.0; }, {grad_input({2, 5})});
  check_grad("unfold strided", [](auto& v) { return unfold(v[0], 0, 2, 3); }, {grad_input({8, 2}, 9)});
  check_error<ValueError>([&] { unfold(x, 1, 3, 0); }, "unfold");
  check_error<ShapeError>([&] { unfold(x, 1, 8, 1); }, "unfold");
  check_error<IndexError>([&] { unfold(x, 2, 1, 1); }, "unfold");
}

TEST_CASE("diagonal, diag, diag_embed, diagflat and trace") {
  Tensor x = iota({3, 4});
  CHECK(host(diagonal(x, 1)) == std::vector<double>{1, 6, 11});
  CHECK(host(x.diagonal(-1)) == std::vector<double>{4, 9});
  CHECK(diagonal(x, 4).sizes() == Shape{0});
  CHECK(diagonal(x, -3).sizes() == Shape{0});
  CHECK(diagonal(x).raw_data() == x.raw_data());  // a view
  Tensor y = iota({2, 3, 3});
  Tensor dy = diagonal(y, 0, 1, 2);
  REQUIRE(dy.sizes() == Shape{2, 3});
  CHECK(host(dy) == std::vector<double>{0, 4, 8, 9, 13, 17});
  CHECK(host(diagonal(y, 0, -1, 0)) == std::vector<double>{0, 10, 3, 13, 6, 16});

  Tensor v = doubles({1, 2, 3}, {3});
  Tensor d = diag(v, 1);
  REQUIRE(d.sizes() == Shape{4, 4});
  std::vector<double> dv = host(d);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) CHECK(dv[size_t(i * 4 + j)] == (j == i + 1 ? double(i + 1) : 0.0));
  CHECK(host(diag(v, -2))[size_t(2 * 5 + 0)] == 1);
  CHECK(host(x.diag(-1)) == std::vector<double>{4, 9});
  CHECK(diag(x).raw_data() != x.raw_data());

  Tensor t = iota({2, 3});
  Tensor e = diag_embed(t);
  REQUIRE(e.sizes() == Shape{2, 3, 3});
  std::vector<double> ev = host(e);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) CHECK(ev[size_t(b * 9 + i * 3 + j)] == (i == j ? double(b * 3 + i) : 0.0));
  Tensor e2 = t.diag_embed(1, 0, 2);
  REQUIRE(e2.sizes() == Shape{4, 2, 4});
  std::vector<double> e2v = host(e2);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 4; ++j)
        CHECK(e2v[size_t(i * 8 + b * 4 + j)] == (j == i + 1 ? double(b * 3 + i) : 0.0));
  CHECK(max_abs_diff(diagonal(e2, 1, 0, 2), t) == 0);
  Tensor df = diagflat(iota({2, 2}));
  REQUIRE(df.sizes() == Shape{4, 4});
  CHECK(max_abs_diff(diagonal(df), iota({4})) == 0);

  CHECK(trace(iota({3, 3})).item() == 12);
  CHECK(iota({3, 3}, kInt32).trace().dtype() == kInt64);
  CHECK(trace(iota({2, 3})).item() == 4);

  check_error<ShapeError>([&] { diagonal(iota({3})); }, "diagonal");
  check_error<ValueError>([&] { diagonal(x, 0, 1, -1); }, "diagonal");
  check_error<IndexError>([&] { diagonal(x, 0, 0, 2); }, "diagonal");
  check_error<ShapeError>([&] { diag(iota({2, 2, 2})); }, "diag");
  check_error<ShapeError>([&] { diag_embed(iota({})); }, "diag_embed");
  check_error<ValueError>([&] { diag_embed(t, 0, 1, 1); }, "diag_embed");
  check_error<ShapeError>([&] { trace(iota({3})); }, "trace");
}

TEST_CASE("tril_indices, triu_indices, block_diag, cartesian_prod, combinations and meshgrid") {
  Device dev = device_under_test();
  for (int64_t row : {0, 1, 3, 4})
    for (int64_t col : {0, 2, 3, 5})
      for (int64_t off : {-5, -1, 0, 1, 2, 9}) {
        std::vector<double> lo, up;
        for (int64_t i = 0; i < row; ++i)
          for (int64_t j = 0; j < col; ++j) {
            if (j - i <= off) lo.push_back(double(i * 100 + j));
            if (j - i >= off) up.push_back(double(i * 100 + j));
          }
        Tensor l = tril_indices(row, col, off, TensorOptions(dev).with(kInt64));
        Tensor u = triu_indices(row, col, off, TensorOptions(dev).with(kInt64));
        REQUIRE(l.sizes() == Shape{2, int64_t(lo.size())});
        REQUIRE(u.sizes() == Shape{2, int64_t(up.size())});
        CHECK(l.device() == dev);
        CHECK(host(add(mul(l[0], 100.0), l[1])) == lo);
        CHECK(host(add(mul(u[0], 100.0), u[1])) == up);
      }
  CHECK(tril_indices(3, 3).dtype() == kInt64);
  CHECK(triu_indices(3, 3, 0, TensorOptions(kInt32)).dtype() == kInt32);

  Tensor a = doubles({1, 2, 3, 4}, {2, 2});
  Tensor bd = block_diag({a, doubles({5}, {}), doubles({6, 7}, {2})});
  REQUIRE(bd.sizes() == Shape{4, 5});
  CHECK(host(bd) == std::vector<double>{1, 2, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 6, 7});
  CHECK(block_diag({}).sizes() == Shape{1, 0});
  CHECK(block_diag({iota({2, 2}, kInt32), a}).dtype() == kFloat64);

  Tensor cp = cartesian_prod({doubles({1, 2}, {2}), doubles({3, 4, 5}, {3})});
  REQUIRE(cp.sizes() == Shape{6, 2});
  CHECK(host(cp) == std::vector<double>{1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5});
  CHECK(cartesian_prod({iota({3})}).sizes() == Shape{3});

  Tensor c = combinations(doubles({1, 2, 3, 4}, {4}));
  REQUIRE(c.sizes() == Shape{6, 2});
  CHECK(host(c) == std::vector<double>{1, 2, 1, 3, 1, 4, 2, 3, 2, 4, 3, 4});
  Tensor cr = combinations(doubles({1, 2, 3}, {3}), 2, true);
  REQUIRE(cr.sizes() == Shape{6, 2});
  CHECK(host(cr) == std::vector<double>{1, 1, 1, 2, 1, 3, 2, 2, 2, 3, 3, 3});
  CHECK(host(combinations(doubles({1, 2, 3}, {3}), 3)) == std::vector<double>{1, 2, 3});
  CHECK(combinations(iota({2}), 3).sizes() == Shape{0, 3});
  CHECK(combinations(iota({2}), 0).sizes() == Shape{0});
  // Empty results stay in the graph, as PyTorch's.
  Tensor leaf = iota({2}, kFloat64).requires_grad_();
  CHECK(combinations(leaf, 3).requires_grad());
  CHECK(combinations(leaf, 0).requires_grad());
  CHECK(repeat(leaf, {0}).requires_grad());
  CHECK(tile(leaf, {2, 0}).sizes() == Shape{2, 0});
  CHECK(tile(leaf, {2, 0}).requires_grad());

  Tensor gx = doubles({1, 2, 3}, {3}), gy = doubles({10, 20}, {2});
  std::vector<Tensor> ij = meshgrid({gx, gy});
  REQUIRE(ij[0].sizes() == Shape{3, 2});
  CHECK(host(ij[0]) == std::vector<double>{1, 1, 2, 2, 3, 3});
  CHECK(host(ij[1]) == std::vector<double>{10, 20, 10, 20, 10, 20});
  std::vector<Tensor> xy = meshgrid({gx, gy}, "xy");
  REQUIRE(xy[0].sizes() == Shape{2, 3});
  CHECK(host(xy[0]) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(host(xy[1]) == std::vector<double>{10, 10, 10, 20, 20, 20});
  CHECK(meshgrid({gx, doubles({5}, {})})[1].sizes() == Shape{3, 1});

  check_error<ValueError>([&] { tril_indices(-1, 3); }, "tril_indices");
  check_error<ValueError>([&] { triu_indices(3, -2); }, "triu_indices");
  check_error<ShapeError>([&] { block_diag({iota({1, 1, 1})}); }, "block_diag");
  check_error<ShapeError>([&] { cartesian_prod({iota({2, 2}), iota({2})}); }, "cartesian_prod");
  check_error<ShapeError>([&] { combinations(iota({2, 2})); }, "combinations");
  check_error<ValueError>([&] { combinations(iota({2}), -1); }, "combinations");
  check_error<ValueError>([&] { combinations(iota({200}), 100); }, "combinations");
  check_error<ValueError>([&] { repeat(iota({2, 2}), {int64_t(1) << 40, int64_t(1) << 40}); }, "repeat");
  check_error<ValueError>([&] { meshgrid({gx}, "yx"); }, "meshgrid");
  check_error<DTypeError>([&] { meshgrid({gx, iota({2})}); }, "meshgrid");
  check_error<ShapeError>([&] { meshgrid({iota({2, 2})}); }, "meshgrid");
  check_error<ValueError>([&] { meshgrid({}); }, "meshgrid");
}

TEST_CASE("hstack, vstack, dstack, column_stack and the split forms") {
  Tensor a = doubles({1, 2, 3}, {3}), b = doubles({4, 5, 6}, {3});
  CHECK(host(hstack({a, b})) == std::vector<double>{1, 2, 3, 4, 5, 6});
  Tensor m = iota({2, 2});
  CHECK(hstack({m, m}).sizes() == Shape{2, 4});
  Tensor vs = vstack({a, b});
  REQUIRE(vs.sizes() == Shape{2, 3});
  CHECK(host(vs) == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(max_abs_diff(row_stack({a, b}), vs) == 0);
  Tensor ds = dstack({a, b});
  REQUIRE(ds.sizes() == Shape{1, 3, 2});
  CHECK(host(ds) == std::vector<double>{1, 4, 2, 5, 3, 6});
  Tensor cs = column_stack({a, b, doubles({7, 8, 9, 10, 11, 12}, {3, 2})});
  REQUIRE(cs.sizes() == Shape{3, 4});
  CHECK(host(cs) == std::vector<double>{1, 4, 7, 8, 2, 5, 9, 10, 3, 6, 11, 12});
  CHECK(hstack({doubles({1}, {}), doubles({2}, {})}).sizes() == Shape{2});

  Tensor x = iota({7});
  std::vector<Tensor> s = tensor_split(x, 3);
  REQUIRE(s.size() == 3);
  CHECK(host(s[0]) == std::vector<double>{0, 1, 2});
  CHECK(host(s[2]) == std::vector<double>{5, 6});
  CHECK(s[1].raw_data() == x.raw_data());
  std::vector<Tensor> si = x.tensor_split({1, 5});
  REQUIRE(si.size() == 3);
  CHECK(si[1].numel() == 4);
  CHECK(host(si[2]) == std::vector<double>{5, 6});
  std::vector<Tensor> clamp = tensor_split(x, {2, 10, -1});
  REQUIRE(clamp.size() == 4);
  CHECK(clamp[1].numel() == 5);
  CHECK(clamp[2].numel() == 0);
  CHECK(host(clamp[3]) == std::vector<double>{6});
  CHECK(tensor_split(x, 9).size() == 9);
  Tensor g = iota({2, 4, 6});
  CHECK(hsplit(g, 2)[1].sizes() == Shape{2, 2, 6});
  CHECK(hsplit(iota({6}), 3)[2].sizes() == Shape{2});
  CHECK(vsplit(g, std::vector<int64_t>{1})[1].sizes() == Shape{1, 4, 6});
  CHECK(g.dsplit(3)[0].sizes() == Shape{2, 4, 2});
  CHECK(g.dsplit({1, 4})[1].sizes() == Shape{2, 4, 3});

  check_error<ValueError>([&] { hstack({}); }, "hstack");
  check_error<ShapeError>([&] { vstack({a, iota({4}, kFloat64)}); }, "cat");
  check_error<ShapeError>([&] { tensor_split(iota({}), 2); }, "tensor_split");
  check_error<ValueError>([&] { tensor_split(x, 0); }, "tensor_split");
  check_error<IndexError>([&] { tensor_split(x, 2, 1); }, "tensor_split");
  check_error<ValueError>([&] { hsplit(g, 3); }, "hsplit");
  check_error<ShapeError>([&] { vsplit(iota({4}), 2); }, "vsplit");
  check_error<ShapeError>([&] { dsplit(iota({2, 2}), 2); }, "dsplit");
}

TEST_CASE("take, take_along_dim, index_copy, index_fill and the scatter-by-view ops") {
  Device dev = device_under_test();
  Tensor x = iota({2, 3});
  Tensor idx = from_vector(std::vector<int64_t>{0, 5, -1, 2}, {2, 2}, dev);
  Tensor tk = take(x, idx);
  REQUIRE(tk.sizes() == Shape{2, 2});
  CHECK(host(tk) == std::vector<double>{0, 5, 5, 2});
  CHECK(x.take(longs({})).sizes() == Shape{0});

  Tensor pv = put(x, longs({0, -1, 2}), doubles({7, 8, 9}, {3}).to(kFloat32));
  CHECK(host(pv) == std::vector<double>{7, 1, 9, 3, 4, 8});
  CHECK(host(x.view({-1})) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(host(put(x, longs({1, 1}), doubles({2, 3}, {2}).to(kFloat32), true)) ==
        std::vector<double>{0, 6, 2, 3, 4, 5});
  Tensor xp = iota({2, 3});
  put_(xp, from_vector(std::vector<int64_t>{5}, {1, 1}, dev), doubles({-1}, {1}).to(kFloat32));
  CHECK(host(xp) == std::vector<double>{0, 1, 2, 3, 4, -1});
  std::vector<Tensor> coords = unravel_index(from_vector(std::vector<int64_t>{0, 5, -1, 7}, {2, 2}, dev), {2, 4});
  REQUIRE(coords.size() == 2);
  CHECK(coords[0].sizes() == Shape{2, 2});
  CHECK(host(coords[0]) == std::vector<double>{0, 1, 1, 1});
  CHECK(host(coords[1]) == std::vector<double>{0, 1, 3, 3});
  check_error<IndexError>([&] { put(x, longs({6}), doubles({1}, {1}).to(kFloat32)); }, "put");
  check_error<ShapeError>([&] { put(x, longs({0, 1}), doubles({1}, {1}).to(kFloat32)); }, "put");
  check_error<DTypeError>([&] { put(x, longs({0}), doubles({1}, {1})); }, "put");
  check_error<IndexError>([&] { unravel_index(longs({8}), {2, 4}); }, "unravel_index");
  check_error<ValueError>([&] { unravel_index(longs({0}), {2, -4}); }, "unravel_index");
  check_error<DTypeError>([&] { unravel_index(ones({1}, dev), {2}); }, "unravel_index");

  Tensor s = doubles({10, 30, 20, 60, 40, 50}, {2, 3});
  Tensor pick = from_vector(std::vector<int64_t>{1, 0}, {2, 1}, dev);
  CHECK(host(take_along_dim(s, pick, 1)) == std::vector<double>{30, 60});
  Tensor row = from_vector(std::vector<int64_t>{2, 0}, {1, 2}, dev);  // broadcast over dim 0
  Tensor tb = s.take_along_dim(row, 1);
  REQUIRE(tb.sizes() == Shape{2, 2});
  CHECK(host(tb) == std::vector<double>{20, 10, 50, 60});
  CHECK(host(take_along_dim(s, longs({5, 0}))) == std::vector<double>{50, 10});
  // Negative indices count from the end, as PyTorch's.
  CHECK(host(take_along_dim(s, from_vector(std::vector<int64_t>{-1, -3}, {2, 1}, dev), 1)) ==
        std::vector<double>{20, 60});
  CHECK(host(take_along_dim(s, longs({-1}))) == std::vector<double>{50});

  Tensor src = doubles({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor ic = index_copy(zeros({4, 3}, TensorOptions(dev).with(kFloat64)), 0, longs({3, 0}), src);
  CHECK(host(ic) == std::vector<double>{4, 5, 6, 0, 0, 0, 0, 0, 0, 1, 2, 3});
  Tensor ic1 = index_copy(zeros({2, 4}, TensorOptions(dev).with(kFloat64)), 1, longs({1, 3, 0}), src);
  CHECK(host(ic1) == std::vector<double>{3, 1, 0, 2, 6, 4, 0, 5});
  Tensor self = zeros({4, 3}, TensorOptions(dev).with(kFloat64));
  Tensor& same = self.index_copy_(0, longs({1, 2}), src);
  CHECK(&same == &self);
  CHECK(host(self) == std::vector<double>{0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0});

  Tensor f = index_fill(iota({3, 4}), 1, longs({0, -1}), -5);
  CHECK(host(f) == std::vector<double>{-5, 1, 2, -5, -5, 5, 6, -5, -5, 9, 10, -5});
  Tensor g = iota({3, 2});
  g.index_fill_(0, longs({1}), 7);
  CHECK(host(g) == std::vector<double>{0, 1, 7, 7, 4, 5});
  Tensor seven = full({}, 7.0, TensorOptions(dev).with(kFloat64));
  CHECK(max_abs_diff(index_fill(iota({3, 4}), 1, longs({0, -1}), seven), index_fill(iota({3, 4}), 1, longs({0, -1}), 7)) == 0);
  CHECK(index_fill(iota({3, 4}), 1, longs({0}), seven).dtype() == kFloat32);
  Tensor g2 = iota({3, 2});
  index_fill_(g2, 0, longs({2}), seven);
  CHECK(host(g2) == std::vector<double>{0, 1, 2, 3, 7, 7});
  check_error<ShapeError>([&] { index_fill(x, 1, longs({0}), doubles({1, 2}, {2})); }, "index_fill");

  Tensor z = zeros({2, 3}, TensorOptions(dev).with(kFloat64));
  CHECK(host(select_scatter(z, doubles({1, 2, 3}, {3}), 0, 1)) == std::vector<double>{0, 0, 0, 1, 2, 3});
  CHECK(host(z.select_scatter(doubles({1, 2}, {2}), 1, -1)) == std::vector<double>{0, 0, 1, 0, 0, 2});
  Tensor sq = zeros({4, 4}, TensorOptions(dev).with(kFloat64));
  Tensor sl = slice_scatter(sq, ones({4, 2}, TensorOptions(dev).with(kFloat64)), 1, 0, std::nullopt, 2);
  std::vector<double> slv = host(sl);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) CHECK(slv[size_t(i * 4 + j)] == (j % 2 == 0 ? 1.0 : 0.0));
  CHECK(max_abs_diff(sq.slice_scatter(ones({1, 4}, TensorOptions(dev).with(kFloat64)), 0, 3), sq) == 1);
  Tensor dsc = diagonal_scatter(zeros({3, 3}, TensorOptions(dev).with(kFloat64)), doubles({1, 2}, {2}), 1);
  CHECK(host(dsc) == std::vector<double>{0, 1, 0, 0, 0, 2, 0, 0, 0});
  // A non-contiguous self keeps its values outside the written part.
  Tensor tt = iota({3, 3}, kFloat64).t();
  CHECK(host(diagonal_scatter(tt, doubles({-1, -1, -1}, {3}))) == std::vector<double>{-1, 3, 6, 1, -1, 7, 2, 5, -1});

  check_error<IndexError>([&] { take(x, longs({6})); }, "take");
  check_error<IndexError>([&] { take(x, longs({-7})); }, "take");
  check_error<DTypeError>([&] { take(x, ones({2}, dev)); }, "take");
  check_error<ShapeError>([&] { take_along_dim(s, longs({1}), 1); }, "take_along_dim");
  check_error<IndexError>([&] { take_along_dim(s, from_vector(std::vector<int64_t>{3, 0}, {2, 1}, dev), 1); }, "take_along_dim");
  check_error<IndexError>([&] { take_along_dim(s, from_vector(std::vector<int64_t>{-4, 0}, {2, 1}, dev), 1); }, "take_along_dim");
  check_error<DTypeError>([&] { take_along_dim(s, ones({2, 1}, dev), 1); }, "take_along_dim");
  check_error<IndexError>([&] { index_copy(z, 0, longs({2, 0}), src); }, "index_copy");
  check_error<ShapeError>([&] { index_copy(z, 0, longs({1}), src); }, "index_copy");
  check_error<DTypeError>([&] { index_copy(z, 0, longs({0, 1}), src.to(kFloat32)); }, "index_copy");
  check_error<ShapeError>([&] { index_copy(z, 0, from_vector(std::vector<int64_t>{0, 1}, {1, 2}, dev), src); },
                          "index_copy");
  check_error<IndexError>([&] { index_fill(x, 1, longs({3}), 1); }, "index_fill");
  check_error<IndexError>([&] { index_fill(x, 2, longs({0}), 1); }, "index_fill");
  check_error<IndexError>([&] { select_scatter(z, doubles({1, 2, 3}, {3}), 0, 2); }, "select_scatter");
  check_error<ShapeError>([&] { select_scatter(z, doubles({1, 2}, {2}), 0, 0); }, "select_scatter");
  check_error<ValueError>([&] { slice_scatter(z, z, 0, 0, 2, 0); }, "slice_scatter");
  check_error<ShapeError>([&] { diagonal_scatter(z, doubles({1, 2, 3}, {3})); }, "diagonal_scatter");
  Tensor leaf = zeros({2, 3}, TensorOptions(dev).with(kFloat64)).requires_grad_();
  check_error<ValueError>([&] { leaf.index_copy_(0, longs({0}), doubles({1, 2, 3}, {1, 3})); }, "index_copy_");
}

TEST_CASE("gradients of the composed shape ops (float64 finite differences)") {
  Tensor a = grad_input({2, 3}), b = grad_input({3, 4}, 9), v = grad_input({3}, 11), c = grad_input({2, 3, 3}, 13);
  check_grad("flip", [](auto& x) { return flip(x[0], {0, 1}); }, {a});
  check_grad("roll", [](auto& x) { return roll(x[0], {1, 2}, {0, 1}); }, {a});
  check_grad("roll flattened", [](auto& x) { return roll(x[0], -2); }, {a});
  check_grad("rot90", [](auto& x) { return rot90(x[0], 1); }, {a});
  check_grad("repeat", [](auto& x) { return repeat(x[0], {2, 1, 2}); }, {a});
  check_grad("tile", [](auto& x) { return tile(x[0], {2}); }, {a});
  check_grad("repeat_interleave", [](auto& x) { return repeat_interleave(x[0], 2, 0); }, {a});
  check_grad("repeat_interleave innermost", [](auto& x) { return repeat_interleave(x[0], 3, -1); }, {a});
  check_grad("repeat_interleave flattened", [](auto& x) { return repeat_interleave(x[0], 2); }, {a});
  check_grad("repeat_interleave tensor", [](auto& x) {
    return repeat_interleave(x[0], from_vector(std::vector<int64_t>{2, 0, 1}, {3}, x[0].device()), 1);
  }, {a});
  check_grad("movedim", [](auto& x) { return movedim(x[0], 0, 2).contiguous(); }, {c});
  check_grad("unbind", [](auto& x) { auto u = unbind(x[0], 1); return u[0] * u[2]; }, {a});
  check_grad("diagonal", [](auto& x) { return diagonal(x[0], 1) * 2.0; }, {b});
  check_grad("diagonal 3-D", [](auto& x) { return diagonal(x[0], 0, 1, 2); }, {c});
  check_grad("diag 1-D", [](auto& x) { return diag(x[0], -1); }, {v});
  check_grad("diag 2-D", [](auto& x) { return diag(x[0], 1); }, {b});
  check_grad("diag_embed", [](auto& x) { return diag_embed(x[0], 1, 0, 2); }, {a});
  check_grad("diagflat", [](auto& x) { return diagflat(x[0]); }, {a});
  check_grad("trace", [](auto& x) { return trace(x[0]); }, {b});
  check_grad("block_diag", [](auto& x) { return block_diag({x[0], x[1]}); }, {a, v});
  check_grad("cartesian_prod", [](auto& x) { return cartesian_prod({x[0], x[0] * 2.0}); }, {v});
  check_grad("combinations", [](auto& x) { return combinations(x[0], 2, true); }, {v});
  check_grad("meshgrid", [](auto& x) { auto g = meshgrid({x[0], x[0]}, "xy"); return g[0] * g[1]; }, {v});
  check_grad("stacks", [](auto& x) { return hstack({x[0], x[0]}) + vstack({x[0], x[0]}).reshape({6}); }, {v});
  check_grad("tensor_split", [](auto& x) { auto p = tensor_split(x[0], std::vector<int64_t>{1}, 1); return p[1] * 3.0 + p[0]; }, {a});
  check_grad("take", [](auto& x) {
    return take(x[0], from_vector(std::vector<int64_t>{0, -1, 3, 3}, {2, 2}, x[0].device()));
  }, {a});
  check_grad("put", [](auto& x) {
    return put(x[0], from_vector(std::vector<int64_t>{4, -1}, {2}, x[0].device()), x[1]);
  }, {a, grad_input({2}, 41)});
  check_grad("put accumulate", [](auto& x) {
    return put(x[0], from_vector(std::vector<int64_t>{1, 1}, {2}, x[0].device()), x[1], true);
  }, {a, grad_input({2}, 43)});
  check_grad("take_along_dim", [](auto& x) {
    return take_along_dim(x[0], from_vector(std::vector<int64_t>{2, 0}, {1, 2}, x[0].device()), 1);
  }, {a});
  check_grad("index_copy", [](auto& x) {
    return index_copy(x[0], 1, from_vector(std::vector<int64_t>{2, 0}, {2}, x[0].device()), x[1]);
  }, {a, grad_input({2, 2}, 17)});
  check_grad("index_copy_", [](auto& x) {
    Tensor t = x[0] * 1.0;
    t.index_copy_(0, from_vector(std::vector<int64_t>{1}, {1}, x[0].device()), x[1]);
    return t;
  }, {a, grad_input({1, 3}, 19)});
  check_grad("index_fill", [](auto& x) {
    return index_fill(x[0], 1, from_vector(std::vector<int64_t>{1}, {1}, x[0].device()), 0.5);
  }, {a});
  check_grad("index_fill tensor value", [](auto& x) {
    return index_fill(x[0], 1, from_vector(std::vector<int64_t>{0, 2}, {2}, x[0].device()), x[1]);
  }, {a, grad_input({}, 37)});
  check_grad("select_scatter", [](auto& x) { return select_scatter(x[0], x[1], 1, 2); }, {a, grad_input({2}, 23)});
  check_grad("slice_scatter", [](auto& x) { return slice_scatter(x[0], x[1], 1, 0, 3, 2); },
             {a, grad_input({2, 2}, 29)});
  check_grad("diagonal_scatter", [](auto& x) { return diagonal_scatter(x[0], x[1], -1); }, {b, grad_input({2}, 31)});
}
