// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// nn::utils::rnn of include/vnn/nn/rnn.h: PackedSequence and the padding /
// packing functions, PyTorch's layout (data holds step 0 of every sequence,
// then step 1 of those long enough, ...; batch_sizes on the CPU). Built from
// narrow / cat / stack / index_select, so gradients flow through them.
#include <algorithm>
#include <numeric>
#include <string>

#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/nn/rnn.h"

namespace vnn::nn::utils::rnn {

namespace {

Tensor index_tensor(const std::vector<int64_t>& v) { return from_vector<int64_t>(v, {int64_t(v.size())}); }

// The inverse of a permutation given as a tensor.
Tensor invert(const Tensor& perm) {
  std::vector<int64_t> p = perm.to_vector<int64_t>(), inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    VNN_CHECK(ValueError, p[i] >= 0 && p[i] < int64_t(p.size()), "PackedSequence: sorted_indices ", perm.sizes(),
              " is not a permutation (entry ", p[i], ")");
    inv[size_t(p[i])] = int64_t(i);
  }
  return index_tensor(inv).to(perm.device());
}

// `rows` rows of padding shaped like a row of t.
Tensor pad_rows(const Tensor& t, int64_t rows, double value) {
  Shape s = t.sizes();
  s[0] = rows;
  return full(s, value, TensorOptions().dtype(t.dtype()).device(t.device()));
}

}  // namespace

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  VNN_CHECK(ValueError, batch_sizes_.defined() && batch_sizes_.dim() == 1 && batch_sizes_.dtype() == kInt64,
            "PackedSequence: batch_sizes must be a 1-D int64 tensor");
  if (sorted_indices_.defined() && !unsorted_indices_.defined()) unsorted_indices_ = invert(sorted_indices_);
}

PackedSequence PackedSequence::to(const Device& device) const {
  auto move = [&](const Tensor& t) { return t.defined() ? t.to(device) : t; };
  return PackedSequence(move(data_), batch_sizes_, move(sorted_indices_), move(unsorted_indices_));
}

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first, bool enforce_sorted) {
  const char* op = "pack_padded_sequence";
  VNN_CHECK(ValueError, input.defined() && lengths.defined(), op, ": input and lengths must be defined");
  VNN_CHECK(ShapeError, input.dim() >= 2, op, ": input must be [L, B, *] ([B, L, *] with batch_first), got ",
            input.sizes());
  VNN_CHECK(DTypeError, !is_floating(lengths.dtype()) && lengths.dtype() != kBool, op,
            ": lengths must be an integer tensor, got ", name(lengths.dtype()));
  const int batch_dim = batch_first ? 0 : 1;
  const int64_t B = input.size(batch_dim), T = input.size(1 - batch_dim);
  std::vector<int64_t> len = lengths.to(kInt64).to_vector<int64_t>();
  VNN_CHECK(ShapeError, lengths.dim() == 1 && int64_t(len.size()) == B, op, ": lengths ", lengths.sizes(),
            " must have one entry per sequence (", B, ") of input ", input.sizes());
  for (size_t b = 0; b < len.size(); ++b)
    VNN_CHECK(ValueError, len[b] >= 1 && len[b] <= T, op, ": lengths[", b, "] = ", len[b],
              " must be in [1, ", T, "] (every sequence needs a step, and at most the padded length)");
  Tensor sorted, unsorted;
  if (enforce_sorted) {
    for (size_t b = 1; b < len.size(); ++b)
      VNN_CHECK(ValueError, len[b] <= len[b - 1], op, ": lengths must be sorted in decreasing order (lengths[", b - 1,
                "] = ", len[b - 1], " < lengths[", b, "] = ", len[b], "); pass enforce_sorted=false to sort here");
  } else {
    std::vector<int64_t> order(len.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return len[size_t(a)] > len[size_t(b)]; });
    std::vector<int64_t> sorted_len(len.size());
    for (size_t i = 0; i < order.size(); ++i) sorted_len[i] = len[size_t(order[i])];
    len = sorted_len;
    sorted = index_tensor(order).to(input.device());
    unsorted = invert(sorted);
    input = input.index_select(batch_dim, sorted);
  }
  Tensor x = batch_first ? input.transpose(0, 1) : input;  // [T, B, *]
  std::vector<int64_t> bs;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < len[0]; ++t) {
    int64_t n = 0;
    while (n < B && len[size_t(n)] > t) ++n;
    bs.push_back(n);
    steps.push_back(x.select(0, t).narrow(0, 0, n));
  }
  return PackedSequence(cat(steps, 0), index_tensor(bs), sorted, unsorted);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  const char* op = "pad_packed_sequence";
  VNN_CHECK(ValueError, sequence.is_defined(), op, ": the PackedSequence is empty");
  const std::vector<int64_t> bs = sequence.batch_sizes().to_vector<int64_t>();
  VNN_CHECK(ValueError, !bs.empty(), op, ": the PackedSequence has no steps");
  const int64_t T = int64_t(bs.size()), B = bs[0];
  const int64_t steps = total_length ? *total_length : T;
  VNN_CHECK(ValueError, steps >= T, op, ": total_length (", steps, ") must be at least the longest sequence (", T,
            ")");
  const Tensor& data = sequence.data();
  std::vector<Tensor> rows;
  int64_t off = 0;
  for (int64_t t = 0; t < T; ++t) {
    Tensor r = data.narrow(0, off, bs[size_t(t)]);
    off += bs[size_t(t)];
    rows.push_back(bs[size_t(t)] < B ? cat({r, pad_rows(r, B - bs[size_t(t)], padding_value)}, 0) : r);
  }
  for (int64_t t = T; t < steps; ++t) rows.push_back(pad_rows(data.narrow(0, 0, 1), B, padding_value));
  Tensor out = stack(rows, 0);  // [steps, B, *]
  std::vector<int64_t> len(size_t(B), 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T && bs[size_t(t)] > b; ++t) ++len[size_t(b)];
  if (sequence.unsorted_indices().defined()) {
    const Tensor& back = sequence.unsorted_indices();
    out = out.index_select(1, back.to(out.device()));
    std::vector<int64_t> idx = back.to_vector<int64_t>(), orig(len.size());
    for (size_t i = 0; i < idx.size(); ++i) orig[i] = len[size_t(idx[i])];
    len = orig;
  }
  return {batch_first ? out.transpose(0, 1) : out, index_tensor(len)};
}

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  const char* op = "pad_sequence";
  VNN_CHECK(ValueError, !sequences.empty(), op, ": needs at least one sequence");
  int64_t longest = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    VNN_CHECK(ShapeError, s.defined() && s.dim() >= 1, op, ": sequence ", i, " must be [L, *]");
    bool same = s.dim() == sequences[0].dim();
    for (int d = 1; same && d < s.dim(); ++d) same = s.size(d) == sequences[0].size(d);
    VNN_CHECK(ShapeError, same, op, ": sequence ", i, " ", s.sizes(), " does not match sequence 0 ",
              sequences[0].sizes(), " after its first dim");
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences)
    padded.push_back(s.size(0) < longest ? cat({s, pad_rows(s, longest - s.size(0), padding_value)}, 0) : s);
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  std::vector<int64_t> len;
  for (const Tensor& s : sequences) len.push_back(s.defined() && s.dim() >= 1 ? s.size(0) : 0);
  return pack_padded_sequence(pad_sequence(sequences), index_tensor(len), false, enforce_sorted);
}

std::vector<Tensor> unpad_sequence(const Tensor& padded, const Tensor& lengths, bool batch_first) {
  const char* op = "unpad_sequence";
  VNN_CHECK(ValueError, padded.defined() && lengths.defined(), op, ": padded and lengths must be defined");
  VNN_CHECK(ShapeError, padded.dim() >= 2, op, ": padded must be [T, B, *] ([B, T, *] with batch_first), got ",
            padded.sizes());
  Tensor x = batch_first ? padded : padded.transpose(0, 1);  // [B, T, *]
  const std::vector<int64_t> len = lengths.to(kInt64).to_vector<int64_t>();
  VNN_CHECK(ShapeError, lengths.dim() == 1 && int64_t(len.size()) == x.size(0), op, ": lengths ", lengths.sizes(),
            " must have one entry per sequence (", x.size(0), ") of padded ", padded.sizes());
  std::vector<Tensor> out;
  for (size_t b = 0; b < len.size(); ++b) {
    VNN_CHECK(ValueError, len[b] >= 0 && len[b] <= x.size(1), op, ": lengths[", b, "] = ", len[b],
              " must be in [0, ", x.size(1), "]");
    out.push_back(x.select(0, int64_t(b)).narrow(0, 0, len[b]));
  }
  return out;
}

std::vector<Tensor> unpack_sequence(const PackedSequence& sequence) {
  auto [padded, lengths] = pad_packed_sequence(sequence, /*batch_first=*/true);
  return unpad_sequence(padded, lengths, /*batch_first=*/true);
}

}  // namespace vnn::nn::utils::rnn
