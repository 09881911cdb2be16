// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The op_db runner's vocabulary: a sample's arguments as PyTorch passed
// them (tests/opdb/export_opdb.py writes them), the call a mapping reads
// them through, and the registry of mappings from op_db entries to vnn.
//
// A mapping is one lambda per op_db entry (ops_*.cpp):
//   OPDB("cumsum") { return vnn::cumsum(c.in(), c.integer(0, "dim")); };
// It reads the arguments it understands; the runner fails a sample whose
// argument the mapping never read (so no argument is silently ignored).
// A form vnn lacks is declared with gap("why"): the sample is listed as a
// known gap, not run.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "vnn/vnn.h"

namespace vnn::opdb {

// One argument or result: PyTorch's None, tensor, int, float, bool, str,
// dtype, device, memory format, or a list of these.
struct Arg {
  enum class Kind { none, tensor, integer, real, boolean, string, dtype, device, memory_format, list };
  Kind kind = Kind::none;
  Tensor t;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;  // string, device or memory format
  DType d = kFloat32;
  std::vector<Arg> items;

  Arg() = default;
  Arg(const Tensor& x) : kind(Kind::tensor), t(x) {}  // NOLINT: results convert implicitly
  Arg(double x) : kind(Kind::real), f(x) {}
  Arg(bool x) : kind(Kind::boolean), b(x) {}
  Arg(int64_t x) : kind(Kind::integer), i(x) {}
  Arg(const std::vector<Tensor>& xs) : kind(Kind::list) {
    for (const auto& x : xs) items.emplace_back(x);
  }
  template <class... T>
  Arg(const std::tuple<T...>& xs) : kind(Kind::list) {
    std::apply([this](const auto&... x) { (items.emplace_back(x), ...); }, xs);
  }

  bool none() const { return kind == Kind::none; }
  // Typed reads; each throws std::invalid_argument naming the mismatch.
  const Tensor& tensor() const;
  int64_t integer() const;                 // int (bool counts as 0/1)
  double number() const;                   // int, float or bool
  bool boolean() const;
  const std::string& str() const;
  DType dtype() const;
  std::vector<int64_t> ints() const;       // an int or a list of ints
  std::vector<Tensor> tensors() const;     // a list of tensors
  std::string describe() const;            // for messages: "tensor[2, 3] float32", "[1, 2]"
};

// A form vnn lacks: the sample is a known gap, listed with `why`.
struct Gap : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] inline void gap(const std::string& why) { throw Gap(why); }

// One sample's call: the input and PyTorch's positional and keyword
// arguments, on the device under test. Every read marks the argument used.
class Call {
 public:
  Call(Device device, Arg input, std::vector<Arg> args, std::map<std::string, Arg> kwargs)
      : device(std::move(device)), input_(std::move(input)), args_(std::move(args)), kwargs_(std::move(kwargs)),
        used_(args_.size(), false) {}

  // The device under test: creation ops make their tensors here (PyTorch's
  // samples name "cpu", read and replaced by options()).
  const Device device;
  // TensorOptions from dtype= (default `dflt`), device= and requires_grad=.
  TensorOptions options(DType dflt = kFloat32);

  const Arg& input() const { return input_; }
  const Tensor& in() const { return input_.tensor(); }
  // Positional argument i if given, else keyword `name` if given, else null.
  const Arg* get(size_t i, const char* name = nullptr);
  const Arg* kw(const char* name) { return get(SIZE_MAX, name); }
  bool has(size_t i, const char* name = nullptr);
  // Whether argument i / keyword `name` was passed at all, None included
  // (momentum=None differs from no momentum). Does not mark it used.
  bool given(size_t i, const char* name = nullptr) const {
    return i < args_.size() || (name && kwargs_.count(name));
  }
  // The same, converted, with a default where absent or None.
  const Tensor& tensor(size_t i, const char* name = nullptr);
  int64_t integer(size_t i, const char* name, std::optional<int64_t> dflt = std::nullopt);
  double number(size_t i, const char* name, std::optional<double> dflt = std::nullopt);
  bool boolean(size_t i, const char* name, bool dflt);
  std::vector<int64_t> ints(size_t i, const char* name, std::vector<int64_t> dflt);
  std::optional<DType> dtype(size_t i, const char* name);
  std::string str(size_t i, const char* name, const std::string& dflt);
  size_t nargs() const { return args_.size(); }
  // Marks every argument used (for mappings that pass them on whole).
  void use_all();
  // Arguments given and never read: "args[2]", "kwargs['out_int32']".
  std::vector<std::string> unused() const;

 private:
  Arg input_;
  std::vector<Arg> args_;
  std::map<std::string, Arg> kwargs_;
  std::vector<bool> used_;
  std::map<std::string, bool> kw_used_;
};

using OpFn = std::function<Arg(Call&)>;
std::map<std::string, OpFn>& registry();
// Registrar("key") = fn enters fn (a duplicate key aborts at start-up).
struct Registrar {
  explicit Registrar(const char* key) : key(key) {}
  Registrar& operator=(OpFn fn);
  const char* key;
};

}  // namespace vnn::opdb

#define VNN_OPDB_JOIN2(a, b) a##b
#define VNN_OPDB_JOIN(a, b) VNN_OPDB_JOIN2(a, b)
// OPDB("entry") { ...; return result; };  registers the entry's mapping.
#define OPDB(key) \
  static const ::vnn::opdb::Registrar VNN_OPDB_JOIN(opdb_registrar_, __COUNTER__) = \
      ::vnn::opdb::Registrar(key) = [](::vnn::opdb::Call & c) -> ::vnn::opdb::Arg
