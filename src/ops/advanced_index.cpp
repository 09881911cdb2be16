// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Advanced indexing (vnn/advanced_index.h): the index tensors become one
// flat position per indexed element of self's leading dims, and the op is
// an INDEX_SELECT / INDEX_ADD / index_copy along dim 0 of self viewed as
// [leading positions, rest...].
#include "vnn/advanced_index.h"

#include "autograd/elementwise_grad.hpp"
#include "ops/shape_common.hpp"
#include "vnn/elementwise.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"
#include "vnn/scan.h"
#include "vnn/shape_ops.h"

namespace vnn {

namespace {

struct FlatIndex {
  Tensor positions;     // int64 [N]: flat positions over the k leading dims
  Shape index_shape;    // the broadcast shape of the indices
  int k = 0;            // leading dims indexed
};

// Wraps negative indices and checks the range [-size, size) on the host.
Tensor checked(const Tensor& idx, int64_t size, int dim, const char* op) {
  Tensor i = idx.to(kInt64);
  if (i.numel() > 0) {
    const double lo = amin(i).item(), hi = amax(i).item();
    VNN_CHECK(IndexError, lo >= -double(size) && hi < double(size), op, ": index ", (lo < -double(size) ? lo : hi),
              " is out of bounds for dim ", dim, " with size ", size, "; indices must lie in [", -size, ", ", size,
              ")");
  }
  return where(lt(i, 0.0), add(i, double(size)), i);
}

FlatIndex flatten_indices(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const char* op) {
  detail::require_arg(self, op, "self");
  VNN_CHECK(IndexError, !indices.empty() && int(indices.size()) <= std::max(self.dim(), 1), op, ": ",
            indices.size(), " index tensors for a tensor of shape ", self.sizes());
  std::vector<Tensor> idx;
  for (size_t j = 0; j < indices.size(); ++j) {
    VNN_CHECK(IndexError, indices[j].has_value() && indices[j]->defined(), op,
              ": a None index (a whole dim between indexed dims) is not supported; index the leading dims, or "
              "permute the dims first");
    const Tensor& t = *indices[j];
    detail::check_same_device(self, t, op, "indices");
    if (t.dtype() == kBool || t.dtype() == kUInt8) {
      VNN_CHECK(IndexError, indices.size() == 1, op, ": a bool mask must be the only index");
      VNN_CHECK(IndexError, t.dim() >= 1 && t.dim() <= self.dim(), op, ": mask of shape ", t.sizes(),
                " for a tensor of shape ", self.sizes(), "; a mask covers 1 to ", self.dim(), " leading dims");
      for (int d = 0; d < t.dim(); ++d)
        VNN_CHECK(IndexError, t.size(d) == self.size(d), op, ": mask of shape ", t.sizes(),
                  " does not match self's shape ", self.sizes(), " at dim ", d);
      for (Tensor& c : nonzero_numpy(t.to(kBool))) idx.push_back(c);
    } else {
      VNN_CHECK(DTypeError, t.dtype() == kInt64 || t.dtype() == kInt32, op,
                ": index tensors must be int64, int32 or bool, got ", name(t.dtype()));
      idx.push_back(t);
    }
  }
  FlatIndex f;
  f.k = int(idx.size());
  std::vector<Shape> shapes;
  for (const auto& t : idx) shapes.push_back(t.sizes());
  f.index_shape = broadcast_shapes(shapes);
  Tensor pos;
  for (int d = 0; d < f.k; ++d) {
    Tensor i = checked(idx[size_t(d)], self.size(d), d, op).broadcast_to(f.index_shape);
    pos = pos.defined() ? add(mul(pos, double(self.size(d))), i) : i;
  }
  f.positions = pos.reshape({-1}).contiguous();
  return f;
}

// self as [positions of the k leading dims, rest...].
Shape flat_shape(const Tensor& self, int k) {
  int64_t lead = 1;
  Shape s{1};
  for (int d = 0; d < k; ++d) lead *= self.size(d);
  s[0] = lead;
  for (int d = k; d < self.dim(); ++d) s.push_back(self.size(d));
  return s;
}

Shape rest_after(const Shape& first, const Tensor& self, int k) {
  Shape s = first;
  for (int d = k; d < self.dim(); ++d) s.push_back(self.size(d));
  return s;
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  FlatIndex f = flatten_indices(self, indices, "index");
  Tensor flat = self.reshape(flat_shape(self, f.k));
  return index_select(flat, 0, f.positions).reshape(rest_after(f.index_shape, self, f.k));
}

Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate) {
  FlatIndex f = flatten_indices(self, indices, "index_put");
  detail::require_arg(values, "index_put", "values");
  detail::check_same_device(self, values, "index_put", "values");
  const Shape target = rest_after(f.index_shape, self, f.k);
  // values broadcast to the indexed shape (trailing dims aligned).
  bool fits = values.dim() <= int(target.size());
  for (int i = 1; fits && i <= values.dim(); ++i) {
    const int64_t v = values.size(-i), t = target[target.size() - size_t(i)];
    fits = v == t || v == 1;
  }
  VNN_CHECK(ShapeError, fits, "index_put: values of shape ", values.sizes(), " do not broadcast to the indexed shape ",
            target);
  Tensor flat = self.reshape(flat_shape(self, f.k));
  Shape vshape = flat.sizes();
  vshape[0] = f.positions.numel();
  Tensor vals = values.to(self.dtype()).broadcast_to(target).reshape(vshape);
  Tensor out = accumulate ? index_add(flat, 0, f.positions, vals) : index_copy(flat, 0, f.positions, vals);
  return out.reshape(self.sizes());
}

Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate) {
  Tensor result = index_put(self, indices, values, accumulate);
  return detail::inplace_with_grad(self, "index_put_", [&](const Tensor&) { return result; });
}

}  // namespace vnn
