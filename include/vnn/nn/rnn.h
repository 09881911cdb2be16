// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Recurrent layers, LibTorch's spelling and PyTorch's state-dict keys:
// RNN (tanh / relu), LSTM (with proj_size), GRU, their cells, the cell
// functions (vnn::lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell) and
// nn::utils::rnn (PackedSequence, pack_padded_sequence, pad_packed_sequence,
// pad_sequence):
//   vnn::nn::LSTM lstm(vnn::nn::LSTMOptions(32, 64).num_layers(2).batch_first(true));
//   auto [out, state] = lstm(x);             // out [N, L, 64]; state = (h_n, c_n)
//   auto [h_n, c_n] = state;
// A layer runs the input projection of the whole sequence as one GEMM
// (x W_ih^T), then per step one GEMM h W_hh^T and one fused cell kernel
// (RNN_CELL: biases, gates and state update in one pass; its backward
// RNN_CELL_BACKWARD likewise). Where a backend declines the kernel the core
// composes the step from elementwise ops (the same equations).
//
// Each layer declares forward(input, hx = {}) returning a tuple, as
// LibTorch's, so lstm(x), lstm->forward(x) and lstm(x, hx) work; called
// through a Module reference ((*ptr)(x), a Sequential's child) it throws
// Unsupported, since its forward does not return one Tensor.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/nn/transformer.h"
#include "vnn/random.h"

namespace vnn {

/// One LSTM step (torch::lstm_cell): input [B, I] (or [I]), hx = (h [B, H], c [B, H]), w_ih [4H, I],
/// w_hh [4H, H], optional biases [4H]; returns (h', c'). Gate order i, f, g, o.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::tuple<Tensor, Tensor>& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// One GRU step (torch::gru_cell): w_ih [3H, I], w_hh [3H, H]; gate order r, z, n; returns h'.
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// One Elman step h' = tanh(x w_ih^T + b_ih + h w_hh^T + b_hh) (torch::rnn_tanh_cell).
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// The same with relu (torch::rnn_relu_cell).
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

}  // namespace vnn

namespace vnn::nn {

/// The nonlinearity of RNN and RNNCell: tanh or relu.
enum class RNNNonlinearityKind { tanh, relu };
/// LibTorch's torch::kTanh spelling for RNNOptions::nonlinearity.
inline constexpr RNNNonlinearityKind kTanh = RNNNonlinearityKind::tanh;

/// RNN's nonlinearity option: kTanh, kReLU, "tanh" or "relu" (ValueError otherwise).
struct RNNNonlinearity {
  /// kTanh.
  RNNNonlinearity(RNNNonlinearityKind k = kTanh) : kind(k) {}  // NOLINT: implicit, as LibTorch's
  /// kReLU (the Transformer's constant, as LibTorch's one torch::kReLU).
  RNNNonlinearity(TransformerActivationKind k);  // NOLINT: implicit, as LibTorch's
  /// "tanh" or "relu", as PyTorch's strings.
  RNNNonlinearity(const std::string& name);  // NOLINT: implicit, as PyTorch's strings
  /// "tanh" or "relu".
  RNNNonlinearity(const char* name) : RNNNonlinearity(std::string(name)) {}  // NOLINT: implicit
  /// The function.
  RNNNonlinearityKind kind;
};

/// Options of RNN (torch::nn::RNNOptions).
struct RNNOptions {
  /// A layer from `input_size` features to `hidden_size`.
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input.
  VNN_ARG(int64_t, input_size);
  /// Features of the hidden state.
  VNN_ARG(int64_t, hidden_size);
  /// Stacked layers (default 1).
  VNN_ARG(int64_t, num_layers) = 1;
  /// kTanh (default) or kReLU.
  VNN_ARG(RNNNonlinearity, nonlinearity) = kTanh;
  /// Whether the layers have b_ih and b_hh (default true).
  VNN_ARG(bool, bias) = true;
  /// Input and output as [N, L, *] instead of [L, N, *] (default false).
  VNN_ARG(bool, batch_first) = false;
  /// Dropout on the outputs of every layer but the last, in training mode (default 0).
  VNN_ARG(double, dropout) = 0.0;
  /// A second direction over the reversed sequence (default false).
  VNN_ARG(bool, bidirectional) = false;
};

/// Options of LSTM (torch::nn::LSTMOptions), with proj_size.
struct LSTMOptions {
  /// A layer from `input_size` features to `hidden_size`.
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input.
  VNN_ARG(int64_t, input_size);
  /// Features of the cell state (and of h without a projection).
  VNN_ARG(int64_t, hidden_size);
  /// Stacked layers (default 1).
  VNN_ARG(int64_t, num_layers) = 1;
  /// Whether the layers have b_ih and b_hh (default true).
  VNN_ARG(bool, bias) = true;
  /// Input and output as [N, L, *] instead of [L, N, *] (default false).
  VNN_ARG(bool, batch_first) = false;
  /// Dropout on the outputs of every layer but the last, in training mode (default 0).
  VNN_ARG(double, dropout) = 0.0;
  /// A second direction over the reversed sequence (default false).
  VNN_ARG(bool, bidirectional) = false;
  /// h = W_hr (o tanh(c)) of this size when > 0 (must be below hidden_size; default 0: none).
  VNN_ARG(int64_t, proj_size) = 0;
};

/// Options of GRU (torch::nn::GRUOptions).
struct GRUOptions {
  /// A layer from `input_size` features to `hidden_size`.
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input.
  VNN_ARG(int64_t, input_size);
  /// Features of the hidden state.
  VNN_ARG(int64_t, hidden_size);
  /// Stacked layers (default 1).
  VNN_ARG(int64_t, num_layers) = 1;
  /// Whether the layers have b_ih and b_hh (default true).
  VNN_ARG(bool, bias) = true;
  /// Input and output as [N, L, *] instead of [L, N, *] (default false).
  VNN_ARG(bool, batch_first) = false;
  /// Dropout on the outputs of every layer but the last, in training mode (default 0).
  VNN_ARG(double, dropout) = 0.0;
  /// A second direction over the reversed sequence (default false).
  VNN_ARG(bool, bidirectional) = false;
};

/// Options of RNNCell (torch::nn::RNNCellOptions).
struct RNNCellOptions {
  /// A cell from `input_size` features to `hidden_size`.
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input.
  VNN_ARG(int64_t, input_size);
  /// Features of the hidden state.
  VNN_ARG(int64_t, hidden_size);
  /// Whether the cell has b_ih and b_hh (default true).
  VNN_ARG(bool, bias) = true;
  /// kTanh (default) or kReLU.
  VNN_ARG(RNNNonlinearity, nonlinearity) = kTanh;
};

/// Options of LSTMCell and GRUCell (torch::nn::LSTMCellOptions, GRUCellOptions).
struct LSTMCellOptions {
  /// A cell from `input_size` features to `hidden_size`.
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input.
  VNN_ARG(int64_t, input_size);
  /// Features of the hidden state.
  VNN_ARG(int64_t, hidden_size);
  /// Whether the cell has b_ih and b_hh (default true).
  VNN_ARG(bool, bias) = true;
};
/// Options of GRUCell (those of LSTMCell).
using GRUCellOptions = LSTMCellOptions;

namespace utils::rnn {

/// A batch of sequences of unequal lengths, packed time step by time step
/// (torch::nn::utils::rnn::PackedSequence): data [sum of lengths, *] holds
/// step 0 of every sequence, then step 1 of those that are long enough, ...;
/// batch_sizes (int64, on the CPU) the count at each step; sorted_indices /
/// unsorted_indices the permutation to and from longest-first order
/// (undefined when the batch was given sorted).
class PackedSequence {
 public:
  PackedSequence() = default;
  /// From its parts; unsorted_indices is computed from sorted_indices when undefined.
  PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});
  /// The packed steps [sum of lengths, *].
  const Tensor& data() const { return data_; }
  /// The number of sequences at each step (int64, CPU, non-increasing).
  const Tensor& batch_sizes() const { return batch_sizes_; }
  /// Longest-first order of the original batch (undefined: the batch was sorted).
  const Tensor& sorted_indices() const { return sorted_indices_; }
  /// The inverse permutation (undefined: the batch was sorted).
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  /// Whether data is defined.
  bool is_defined() const { return data_.defined(); }
  /// The same sequences with data moved to `device`.
  PackedSequence to(const Device& device) const;

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

/// Packs `input` [L, B, *] ([B, L, *] with batch_first) whose sequence b has
/// lengths[b] valid steps (torch::nn::utils::rnn::pack_padded_sequence).
/// enforce_sorted: lengths must be non-increasing (ValueError otherwise);
/// false: the batch is sorted here and the permutation kept.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
/// Unpacks into (padded [T, B, *] or [B, T, *], lengths int64 [B]) in the
/// original batch order; T = max(longest, total_length), padding with
/// padding_value (torch::nn::utils::rnn::pad_packed_sequence).
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);
/// Stacks sequences [L_i, *] into [max L, B, *] ([B, max L, *] with
/// batch_first), padding with padding_value (torch::nn::utils::rnn::pad_sequence).
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0);
/// pad_sequence then pack_padded_sequence with the sequences' lengths.
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);
/// The sequences of a padded batch, each cut to its length (PyTorch 2.x's
/// torch.nn.utils.rnn.unpad_sequence): padded [T, B, *] ([B, T, *] with batch_first).
std::vector<Tensor> unpad_sequence(const Tensor& padded, const Tensor& lengths, bool batch_first = false);
/// The sequences of a PackedSequence in the original batch order (PyTorch 2.x's unpack_sequence).
std::vector<Tensor> unpack_sequence(const PackedSequence& sequence);

}  // namespace utils::rnn

namespace detail {
/// Whether the recurrent layers call the backends' fused RNN_CELL kernels
/// (default true); false composes every step from elementwise ops, the path
/// backends without the kernel take. For tests and benchmarks; process-wide.
void set_fused_rnn_cell(bool enabled);
/// The current setting of set_fused_rnn_cell.
bool fused_rnn_cell();

/// The layers, directions, gates and sizes shared by RNN, LSTM and GRU.
struct RNNShape {
  const char* name;  // "RNN", "LSTM", "GRU"
  int mode;          // vnn_rnn_cell_mode
  int64_t input_size, hidden_size, num_layers, proj_size;
  bool bias, batch_first, bidirectional;
  double dropout;
};
}  // namespace detail

/// The machinery of RNN, LSTM and GRU: parameters under PyTorch's names
/// (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0, each
/// with _reverse for the second direction), initialised uniform in
/// [-1/sqrt(hidden_size), 1/sqrt(hidden_size)] as PyTorch's.
class RNNImplBase : public Module {
 public:
  /// The flat parameter list in PyTorch's order (layer, direction: w_ih, w_hh, b_ih, b_hh, w_hr).
  std::vector<Tensor> all_weights() const;
  std::string describe() const override;
  /// Draws every parameter again from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
  void reset_parameters(Generator* gen = nullptr);
  /// LibTorch's cuDNN packing call: nothing to do here (the parameters are used where they are), kept so that
  /// ported code compiles.
  void flatten_parameters() {}

 protected:
  /// Registers the parameters of `shape`, drawn from U(-1/sqrt(H), 1/sqrt(H)) with `gen`.
  RNNImplBase(const detail::RNNShape& shape, Generator* gen);
  /// Runs every layer: input packed as data [N, I] with batch_sizes (one per step), h0 [L*D, B, Hout] and
  /// (LSTM) c0 [L*D, B, H], both defined; returns (output data [N, D*Hout], h_n, c_n).
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& data, const std::vector<int64_t>& batch_sizes,
                                         const Tensor& h0, const Tensor& c0);
  /// A padded input [L, B, I] / [B, L, I] / [L, I] through run(): (output, h_n, c_n), with hx checked.
  std::tuple<Tensor, Tensor, Tensor> run_padded(const Tensor& input, const Tensor& h0, const Tensor& c0);
  /// A packed input through run(): (output, h_n, c_n), hx given in the original batch order.
  std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> run_packed(const utils::rnn::PackedSequence& input,
                                                                     const Tensor& h0, const Tensor& c0);
  /// (Re)registers every layer's parameters under PyTorch's names and draws them.
  void build(Generator* gen);
  /// clone() of a derived layer: a copy of `self` rebuilt, then given this module's state.
  template <class Self>
  std::shared_ptr<Module> clone_as(const Self& self, const std::optional<Device>& device) const {
    auto copy = std::make_shared<Self>(self);
    RNNImplBase& c = *copy;
    return finish_clone(copy, [&c] { c.build(nullptr); }, device);
  }

  /// Mode, sizes, layers, directions and options.
  detail::RNNShape shape_;
  /// Parameters of layer l, direction d at index l * D + d: w_ih, w_hh, b_ih, b_hh, w_hr.
  std::vector<std::vector<Tensor>> weights_;
};

/// A multi-layer Elman RNN with tanh or relu (torch.nn.RNN).
class RNNImpl : public RNNImplBase {
 public:
  /// An RNN from options; `gen` draws the initial values (the default generator when null).
  explicit RNNImpl(const RNNOptions& options, Generator* gen = nullptr);
  /// RNN(input_size, hidden_size) with the default options.
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  /// (output [L, N, D*H] (or [N, L, D*H] with batch_first, [L, D*H] unbatched), h_n [num_layers*D, N, H]);
  /// hx: h_0 of h_n's shape (zeros when undefined).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  /// The same over packed sequences: (packed output, h_n).
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = {});
  /// A deep copy (parameters, gradients, training flag) on `device`, or where each tensor is now.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_as(*this, device);
  }
  /// The options the layer was built with.
  RNNOptions options;
};
/// The holder of RNNImpl.
VNN_MODULE(RNN);

/// A multi-layer LSTM (torch.nn.LSTM), with proj_size.
class LSTMImpl : public RNNImplBase {
 public:
  /// An LSTM from options; `gen` draws the initial values (the default generator when null).
  explicit LSTMImpl(const LSTMOptions& options, Generator* gen = nullptr);
  /// LSTM(input_size, hidden_size) with the default options.
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  /// (output [L, N, D*Hout], (h_n [num_layers*D, N, Hout], c_n [num_layers*D, N, H])), Hout = proj_size or
  /// hidden_size; hx: (h_0, c_0) of those shapes (zeros when not given).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
  /// The same over packed sequences.
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input,
      const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
  /// A deep copy (parameters, gradients, training flag) on `device`, or where each tensor is now.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_as(*this, device);
  }
  /// The options the layer was built with.
  LSTMOptions options;
};
/// The holder of LSTMImpl.
VNN_MODULE(LSTM);

/// A multi-layer GRU (torch.nn.GRU).
class GRUImpl : public RNNImplBase {
 public:
  /// A GRU from options; `gen` draws the initial values (the default generator when null).
  explicit GRUImpl(const GRUOptions& options, Generator* gen = nullptr);
  /// GRU(input_size, hidden_size) with the default options.
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  /// (output [L, N, D*H], h_n [num_layers*D, N, H]); hx: h_0 (zeros when undefined).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  /// The same over packed sequences.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, const Tensor& hx = {});
  /// A deep copy (parameters, gradients, training flag) on `device`, or where each tensor is now.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_as(*this, device);
  }
  /// The options the layer was built with.
  GRUOptions options;
};
/// The holder of GRUImpl.
VNN_MODULE(GRU);

/// The parameters of a cell (weight_ih, weight_hh, bias_ih, bias_hh), PyTorch's init.
class RNNCellImplBase : public Module {
 public:
  /// Parameters under PyTorch's names: weight_ih [G*H, I], weight_hh [G*H, H], bias_ih, bias_hh [G*H].
  ///@{
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;
  ///@}
  std::string describe() const override;
  /// Draws every parameter again from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
  void reset_parameters(Generator* gen = nullptr);

 protected:
  /// A cell named `name` of vnn_rnn_cell_mode `mode`, its parameters drawn with `gen`.
  RNNCellImplBase(const char* name, int mode, int64_t input_size, int64_t hidden_size, bool bias, Generator* gen);
  /// (Re)registers the parameters and draws them.
  void build(Generator* gen);
  /// clone() of a derived cell: a copy of `self` rebuilt, then given this module's state.
  template <class Self>
  std::shared_ptr<Module> clone_as(const Self& self, const std::optional<Device>& device) const {
    auto copy = std::make_shared<Self>(self);
    RNNCellImplBase& c = *copy;
    return finish_clone(copy, [&c] { c.build(nullptr); }, device);
  }
  /// input [B, I] or [I] and its state checked; returns (batched input, batched state, whether unbatched).
  std::tuple<Tensor, Tensor, bool> batched(const Tensor& input, const Tensor& hx, const char* state_name) const;
  /// The vnn_rnn_cell_mode of the cell.
  int mode_;
  /// Feature sizes of the input and of the hidden state.
  ///@{
  int64_t input_size_, hidden_size_;
  ///@}
  /// Whether the cell has bias_ih / bias_hh.
  bool bias_;
};

/// One Elman step (torch.nn.RNNCell).
class RNNCellImpl : public RNNCellImplBase {
 public:
  /// An RNNCell from options.
  explicit RNNCellImpl(const RNNCellOptions& options, Generator* gen = nullptr);
  /// RNNCell(input_size, hidden_size).
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  /// h' [B, H] (or [H]) from input [B, I] (or [I]) and hx (zeros when undefined).
  Tensor forward(const Tensor& input, const Tensor& hx = {});
  /// A deep copy (parameters, gradients, training flag) on `device`, or where each tensor is now.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_as(*this, device);
  }
  /// The options the cell was built with.
  RNNCellOptions options;
};
/// The holder of RNNCellImpl.
VNN_MODULE(RNNCell);

/// One LSTM step (torch.nn.LSTMCell).
class LSTMCellImpl : public RNNCellImplBase {
 public:
  /// An LSTMCell from options.
  explicit LSTMCellImpl(const LSTMCellOptions& options, Generator* gen = nullptr);
  /// LSTMCell(input_size, hidden_size).
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  /// (h', c') from input and hx = (h, c) (zeros when not given).
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
  /// A deep copy (parameters, gradients, training flag) on `device`, or where each tensor is now.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_as(*this, device);
  }
  /// The options the cell was built with.
  LSTMCellOptions options;
};
/// The holder of LSTMCellImpl.
VNN_MODULE(LSTMCell);

/// One GRU step (torch.nn.GRUCell).
class GRUCellImpl : public RNNCellImplBase {
 public:
  /// A GRUCell from options.
  explicit GRUCellImpl(const GRUCellOptions& options, Generator* gen = nullptr);
  /// GRUCell(input_size, hidden_size).
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  /// h' from input and hx (zeros when undefined).
  Tensor forward(const Tensor& input, const Tensor& hx = {});
  /// A deep copy (parameters, gradients, training flag) on `device`, or where each tensor is now.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    return clone_as(*this, device);
  }
  /// The options the cell was built with.
  GRUCellOptions options;
};
/// The holder of GRUCellImpl.
VNN_MODULE(GRUCell);

}  // namespace vnn::nn
