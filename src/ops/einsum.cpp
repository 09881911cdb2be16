// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch.einsum's string form (vnn/products.h), lowered as PyTorch lowers it:
// repeated labels within an operand become diagonal views, every operand is
// permuted and unsqueezed onto one shared dim order, and the operands are
// folded left to right, each pair contracted by one bmm over the labels no
// later operand uses (a broadcast mul when none), dims used by one side
// only summed before the product. No kernel of its own.
#include <algorithm>
#include <string>

#include "ops/shape_common.hpp"
#include "vnn/elementwise.h"
#include "vnn/linalg.h"
#include "vnn/products.h"
#include "vnn/reduction.h"
#include "vnn/shape_ops.h"

namespace vnn {

namespace {

constexpr int kLabels = 52;  // A-Z then a-z, the order of the implicit output
constexpr int kEllipsisItem = -1;

int label_of(char c, const std::string& eq) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  VNN_THROW(ValueError, "einsum: invalid subscript '", std::string(1, c), "' in \"", eq,
            "\"; subscripts are letters A-Z and a-z, \"...\" marks broadcast dims");
}

// One operand's (or the output's) subscript: labels and kEllipsisItem.
std::vector<int> parse_term(const std::string& term, const std::string& eq) {
  std::vector<int> items;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      VNN_CHECK(ValueError, term.compare(i, 3, "...") == 0 && !ellipsis, "einsum: \"", eq,
                "\" has a '.' that is not part of one \"...\" per subscript");
      ellipsis = true;
      items.push_back(kEllipsisItem);
      i += 2;
      continue;
    }
    items.push_back(label_of(term[i], eq));
  }
  return items;
}

// left and right have one dim per slot; `summed` marks the slots no later
// operand uses. Returns the product with those slots summed (kept as size 1).
Tensor contract_pair(Tensor left, Tensor right, const std::vector<bool>& summed) {
  int n = left.dim();
  // A summed slot that only one side spans is summed on that side first.
  for (int d = 0; d < n; ++d) {
    if (!summed[size_t(d)]) continue;
    if (left.size(d) != 1 && right.size(d) == 1) left = sum(left, d, true);
    else if (right.size(d) != 1 && left.size(d) == 1) right = sum(right, d, true);
  }
  std::vector<int64_t> batch, lonly, ronly, contracted, ones;
  int64_t b = 1, lo = 1, ro = 1, k = 1;
  for (int d = 0; d < n; ++d) {
    int64_t l = left.size(d), r = right.size(d);
    if (summed[size_t(d)] && l != 1) {
      contracted.push_back(d);
      k *= l;
    } else if (l != 1 && r != 1) {
      batch.push_back(d);
      b *= l;
    } else if (l != 1) {
      lonly.push_back(d);
      lo *= l;
    } else if (r != 1) {
      ronly.push_back(d);
      ro *= r;
    } else {
      ones.push_back(d);
    }
  }
  if (contracted.empty() || k == 0) {
    // Nothing to contract (or an empty sum): a broadcast mul.
    if (!contracted.empty()) {
      left = sum(left, contracted, true);
      right = sum(right, contracted, true);
    }
    return mul(left, right);
  }
  auto join = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> out;
    for (auto* p : parts) out.insert(out.end(), p->begin(), p->end());
    return Shape(out);
  };
  // Each side's size-1 dims (the other side's own dims and the common ones) go last.
  Tensor l3 = left.permute(join({&batch, &lonly, &contracted, &ronly, &ones})).reshape({b, lo, k});
  Tensor r3 = right.permute(join({&batch, &contracted, &ronly, &lonly, &ones})).reshape({b, k, ro});
  Shape order = join({&batch, &lonly, &ronly, &contracted, &ones});
  Shape sizes;
  for (int i = 0; i < n; ++i) {
    int d = int(order[i]);
    bool from_right = std::find(ronly.begin(), ronly.end(), d) != ronly.end();
    bool is_summed = std::find(contracted.begin(), contracted.end(), d) != contracted.end();
    sizes.push_back(is_summed ? 1 : (from_right ? right.size(d) : left.size(d)));
  }
  Shape inverse;
  inverse.resize(n);
  for (int i = 0; i < n; ++i) inverse[int(order[i])] = i;
  // Integer sums give int64 (as PyTorch's), so the sides may differ; bmm
  // takes neither uint8 nor bool: those multiply in int64, cast back.
  DType dt = promote_types(l3.dtype(), r3.dtype()), work = detail::product_dtype(dt);
  return bmm(l3.to(work), r3.to(work)).to(dt).reshape(sizes).permute(inverse);
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start), eq));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  VNN_CHECK(ValueError, terms.size() == operands.size(), "einsum: \"", equation, "\" has ", int64_t(terms.size()),
            " operand subscripts but ", int64_t(operands.size()), " operands were given");
  int count[kLabels] = {};
  int max_ellipsis = 0;
  DType dt = operands.empty() ? kFloat32 : operands[0].dtype();
  for (size_t i = 0; i < terms.size(); ++i) {
    detail::require_arg(operands[i], "einsum", "operands");
    detail::check_same_device(operands[0], operands[i], "einsum", "operands");
    dt = promote_types(dt, operands[i].dtype());
    int labels = 0;
    bool ellipsis = false;
    for (int item : terms[i]) {
      if (item == kEllipsisItem) ellipsis = true;
      else {
        ++labels;
        ++count[item];
      }
    }
    int dims = operands[i].dim();
    VNN_CHECK(ShapeError, ellipsis ? dims >= labels : dims == labels, "einsum: operand ", int64_t(i), " of shape ",
              operands[i].sizes(), " has ", dims, " dims but its subscript in \"", equation, "\" names ", labels,
              ellipsis ? " or more" : "");
    if (ellipsis) max_ellipsis = std::max(max_ellipsis, dims - labels);
  }
  // The output: explicit after "->", else the broadcast dims then the labels used once, in A-Z, a-z order.
  std::vector<int> output;
  if (arrow != std::string::npos) {
    output = parse_term(eq.substr(arrow + 2), eq);
    for (int item : output) {
      if (item == kEllipsisItem) continue;
      VNN_CHECK(ValueError, count[item] > 0, "einsum: output subscript in \"", equation,
                "\" names a label no operand has");
      VNN_CHECK(ValueError, std::count(output.begin(), output.end(), item) == 1, "einsum: output subscript in \"",
                equation, "\" repeats a label");
    }
  } else {
    output.push_back(kEllipsisItem);
    for (int l = 0; l < kLabels; ++l)
      if (count[l] == 1) output.push_back(l);
  }
  bool ellipsis_out = std::find(output.begin(), output.end(), kEllipsisItem) != output.end();
  // Slots: the broadcast dims, then the output labels, then the summed labels.
  int slot_of[kLabels];
  std::fill(slot_of, slot_of + kLabels, -1);
  int slots = max_ellipsis;
  for (int item : output)
    if (item != kEllipsisItem) slot_of[item] = slots++;
  int first_summed = slots;
  for (int l = 0; l < kLabels; ++l)
    if (count[l] > 0 && slot_of[l] < 0) slot_of[l] = slots++;
  VNN_CHECK(ShapeError, slots <= kMaxDims, "einsum: \"", equation, "\" spans ", slots, " distinct dims, more than the ",
            kMaxDims, " a vnn tensor can have");
  auto is_summed_slot = [&](int s) { return s >= first_summed || (s < max_ellipsis && !ellipsis_out); };
  // Each operand on the shared slots: diagonals for repeated labels, then a
  // permute and size-1 dims where it lacks a slot (views only).
  std::vector<Tensor> aligned;
  std::vector<int> last_use(size_t(slots), 0);
  std::vector<int64_t> slot_size(size_t(slots), 1);
  for (size_t i = 0; i < operands.size(); ++i) {
    Tensor t = operands[i].to(dt);
    std::vector<int> at;  // the slot of each dim of t
    int ell = t.dim() - int(std::count_if(terms[i].begin(), terms[i].end(), [](int x) { return x != kEllipsisItem; }));
    for (int item : terms[i]) {
      if (item != kEllipsisItem) at.push_back(slot_of[item]);
      else
        for (int e = 0; e < ell; ++e) at.push_back(max_ellipsis - ell + e);
    }
    for (size_t p = 0; p < at.size(); ++p)
      for (size_t q = p + 1; q < at.size(); ++q) {
        if (at[p] != at[q]) continue;
        VNN_CHECK(ShapeError, t.size(int(p)) == t.size(int(q)), "einsum: a label repeats in operand ", int64_t(i),
                  " (shape ", operands[i].sizes(), ") over dims of sizes ", t.size(int(p)), " and ", t.size(int(q)));
        int slot = at[p];
        t = diagonal(t, 0, int(p), int(q));
        at.erase(at.begin() + int64_t(q));
        at.erase(at.begin() + int64_t(p));
        at.push_back(slot);
        p = size_t(-1);  // rescan from the start
        break;
      }
    std::vector<int64_t> perm;
    for (int s = 0; s < slots; ++s) {
      auto it = std::find(at.begin(), at.end(), s);
      if (it == at.end()) continue;
      int d = int(it - at.begin());
      perm.push_back(d);
      int64_t size = t.size(d);
      VNN_CHECK(ShapeError, size == 1 || slot_size[size_t(s)] == 1 || slot_size[size_t(s)] == size,
                "einsum: operand ", int64_t(i), " of shape ", operands[i].sizes(), " has size ", size,
                " for a dim that other operands give size ", slot_size[size_t(s)], " in \"", equation, "\"");
      if (size != 1) slot_size[size_t(s)] = size;
      last_use[size_t(s)] = int(i);
    }
    t = t.permute(Shape(perm));
    for (int s = 0; s < slots; ++s)
      if (std::find(at.begin(), at.end(), s) == at.end()) t = t.unsqueeze(s);
    aligned.push_back(t);
  }
  VNN_CHECK(ValueError, !operands.empty(), "einsum: expected at least one operand");
  auto summed_at = [&](size_t step) {
    std::vector<bool> m(size_t(slots), false);
    for (int s = 0; s < slots; ++s) m[size_t(s)] = is_summed_slot(s) && size_t(last_use[size_t(s)]) == step;
    return m;
  };
  Tensor result = aligned[0];
  {
    std::vector<bool> first = summed_at(0);
    std::vector<int64_t> dims;
    for (int s = 0; s < slots; ++s)
      if (first[size_t(s)] && result.size(s) != 1) dims.push_back(s);
    if (!dims.empty()) result = sum(result, dims, true);
  }
  for (size_t i = 1; i < aligned.size(); ++i) result = contract_pair(result, aligned[i], summed_at(i));
  // Summed slots are size 1 now: order the rest as the output says and drop them.
  std::vector<int64_t> perm;
  Shape out_sizes;
  for (int item : output) {
    if (item == kEllipsisItem) {
      for (int e = 0; e < max_ellipsis; ++e) perm.push_back(e);
    } else {
      perm.push_back(slot_of[item]);
    }
  }
  for (int64_t s : perm) out_sizes.push_back(result.size(int(s)));
  for (int s = 0; s < slots; ++s)
    if (std::find(perm.begin(), perm.end(), s) == perm.end()) perm.push_back(s);
  return result.permute(Shape(perm)).reshape(out_sizes);
}

}  // namespace vnn
