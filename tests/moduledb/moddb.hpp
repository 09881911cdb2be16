// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The module_db runner's vocabulary: a mapping from a module_db entry
// (torch.nn.Foo) to the vnn module built from PyTorch's constructor
// arguments, and how that module's forward takes PyTorch's forward
// arguments. Arguments are read through tests/opdb's Call, so one the
// mapping never reads fails the sample, as in op_db.
//
// A mapping (modules_*.cpp):
//   MODDB("nn.Linear") {
//     nn::LinearOptions o(c.integer(0, "in_features"), c.integer(1, "out_features"));
//     return unary(nn::Linear(o.bias(c.boolean(2, "bias", true))));
//   };
// reads the constructor's arguments from `c` and returns a Built: the module
// (the runner loads PyTorch's state_dict into it, moves it to the device and
// dtype, sets train / eval) and its forward over PyTorch's forward arguments
// (a second Call). A form vnn lacks is gap("why").
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "opdb.hpp"

namespace vnn::moddb {

using opdb::Arg;
using opdb::Call;
using opdb::gap;

/// A built module and its forward over PyTorch's forward arguments.
struct Built {
  std::shared_ptr<nn::Module> module;
  std::function<Arg(Call&)> forward;
};

/// A module whose forward takes one tensor ("input").
template <class Holder>
Built unary(Holder m) {
  auto p = m.ptr();
  return {p, [p](Call& f) -> Arg { return p->forward(f.tensor(0, "input")); }};
}
/// A loss: forward(input, target).
template <class Holder>
Built binary(Holder m, const char* first = "input", const char* second = "target") {
  auto p = m.ptr();
  return {p, [p, first, second](Call& f) -> Arg { return p->forward(f.tensor(0, first), f.tensor(1, second)); }};
}

/// reduction="mean" / "sum" / "none" (default "mean"), as LibTorch's enum.
nn::Reduction reduction(Call& c, size_t position = SIZE_MAX);

using ModFn = std::function<Built(Call&)>;
std::map<std::string, ModFn>& registry();
/// Registrar("nn.Foo") = fn enters fn (a duplicate key aborts at start-up).
struct Registrar {
  explicit Registrar(const char* key) : key(key) {}
  Registrar& operator=(ModFn fn);
  const char* key;
};

}  // namespace vnn::moddb

#define VNN_MODDB_JOIN2(a, b) a##b
#define VNN_MODDB_JOIN(a, b) VNN_MODDB_JOIN2(a, b)
// MODDB("nn.Foo") { ...; return unary(nn::Foo(...)); };  registers the entry's mapping.
#define MODDB(key)                                                                                                    \
  static const ::vnn::moddb::Registrar VNN_MODDB_JOIN(moddb_registrar_, __COUNTER__) = ::vnn::moddb::Registrar(key) = \
      []([[maybe_unused]] ::vnn::opdb::Call & c) -> ::vnn::moddb::Built
