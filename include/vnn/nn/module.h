// vnn::nn::Module: the base of every layer (torch::nn::Module's shape).
//
//   struct Net : vnn::nn::Module {
//     std::shared_ptr<vnn::nn::Linear> fc1, fc2;
//     Net() {
//       fc1 = register_module("fc1", std::make_shared<vnn::nn::Linear>(784, 128));
//       fc2 = register_module("fc2", std::make_shared<vnn::nn::Linear>(128, 10));
//     }
//     vnn::Tensor forward(const vnn::Tensor& x) override { return fc2->forward(vnn::relu(fc1->forward(x))); }
//   };
//   auto net = std::make_shared<Net>();
//   net->to(vnn::best_device());          // moves every parameter and buffer in place
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vnn/tensor.h"

namespace vnn::nn {

// Named tensors in registration order (parameters, then buffers, with
// dotted paths for submodules: "features.0.weight").
using StateDict = std::vector<std::pair<std::string, Tensor>>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string type_name = "Module") : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Single-tensor forward; modules with other signatures add their own.
  virtual Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }

  const std::string& type_name() const { return type_name_; }
  // The line printed for this module in the tree ("Linear(in=784, out=10)").
  virtual std::string describe() const { return type_name_; }

  std::vector<Tensor> parameters(bool recurse = true) const;
  StateDict named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  StateDict named_buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules(const std::string& prefix = "");
  int64_t num_parameters() const;

  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // In place: every parameter and buffer moves; Tensor handles held
  // elsewhere (in an optimizer, in the layer's members) see the move.
  void to(const Device& device, bool non_blocking = false);
  void to(DType dtype);  // floating parameters and buffers only
  void zero_grad(bool set_to_none = true);

  StateDict state_dict() const;
  // strict: missing and unexpected keys are errors; shapes must match in
  // any case. Values are copied onto each parameter's device and dtype.
  void load_state_dict(const StateDict& state, bool strict = true);

  std::string str() const;  // the module tree with parameter counts

 protected:
  // Returns a handle sharing the registered tensor: to() and
  // load_state_dict() change that tensor in place, so the handle follows.
  Tensor register_parameter(const std::string& name, Tensor value, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor value);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  // Registers other's parameters, buffers and submodules here under the same
  // names, sharing the tensors (no copy, no detach): a wrapper whose
  // state_dict() and parameters() are the wrapped module's (DistributedDataParallel).
  void share_registrations(const Module& other);

 private:
  void collect(const std::string& prefix, bool recurse, bool params, StateDict& out) const;
  void str_into(std::string& out, const std::string& name, int indent) const;

  std::string type_name_;
  bool training_ = true;
  StateDict params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace vnn::nn
