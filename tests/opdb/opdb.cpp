// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Arg, Call and the registry of tests/opdb/opdb.hpp.
#include "opdb.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace vnn::opdb {

namespace {
const char* kind_name(Arg::Kind k) {
  switch (k) {
    case Arg::Kind::none: return "None";
    case Arg::Kind::tensor: return "tensor";
    case Arg::Kind::integer: return "int";
    case Arg::Kind::real: return "float";
    case Arg::Kind::boolean: return "bool";
    case Arg::Kind::string: return "str";
    case Arg::Kind::dtype: return "dtype";
    case Arg::Kind::device: return "device";
    case Arg::Kind::memory_format: return "memory_format";
    case Arg::Kind::list: return "list";
  }
  return "?";
}
[[noreturn]] void mismatch(const Arg& a, const char* want) {
  throw std::invalid_argument(std::string("op_db argument: expected ") + want + ", got " + a.describe());
}
}  // namespace

const Tensor& Arg::tensor() const {
  if (kind != Kind::tensor) mismatch(*this, "a tensor");
  return t;
}
int64_t Arg::integer() const {
  if (kind == Kind::integer) return i;
  if (kind == Kind::boolean) return b ? 1 : 0;
  mismatch(*this, "an int");
}
double Arg::number() const {
  if (kind == Kind::real) return f;
  if (kind == Kind::integer) return double(i);
  if (kind == Kind::boolean) return b ? 1.0 : 0.0;
  if (kind == Kind::tensor && t.numel() == 1 && t.dim() == 0) return t.item();
  mismatch(*this, "a number");
}
bool Arg::boolean() const {
  if (kind == Kind::boolean) return b;
  if (kind == Kind::integer) return i != 0;
  mismatch(*this, "a bool");
}
const std::string& Arg::str() const {
  if (kind != Kind::string) mismatch(*this, "a string");
  return s;
}
DType Arg::dtype() const {
  if (kind != Kind::dtype) mismatch(*this, "a dtype");
  return d;
}
std::vector<int64_t> Arg::ints() const {
  if (kind == Kind::integer) return {i};
  if (kind != Kind::list) mismatch(*this, "an int or a list of ints");
  std::vector<int64_t> out;
  for (const auto& x : items) out.push_back(x.integer());
  return out;
}
std::vector<Tensor> Arg::tensors() const {
  if (kind != Kind::list) mismatch(*this, "a list of tensors");
  std::vector<Tensor> out;
  for (const auto& x : items) out.push_back(x.tensor());
  return out;
}
std::string Arg::describe() const {
  std::ostringstream os;
  switch (kind) {
    case Kind::tensor: os << "tensor" << t.sizes() << " " << name(t.dtype()); break;
    case Kind::integer: os << i; break;
    case Kind::real: os << f; break;
    case Kind::boolean: os << (b ? "True" : "False"); break;
    case Kind::string: os << '"' << s << '"'; break;
    case Kind::dtype: os << name(d); break;
    case Kind::list: {
      os << "[";
      for (size_t k = 0; k < items.size(); ++k) os << (k ? ", " : "") << items[k].describe();
      os << "]";
      break;
    }
    default: os << kind_name(kind) << (s.empty() ? "" : " " + s);
  }
  return os.str();
}

const Arg* Call::get(size_t i, const char* name) {
  if (i < args_.size()) {
    used_[i] = true;
    return args_[i].none() ? nullptr : &args_[i];
  }
  if (name) {
    auto it = kwargs_.find(name);
    if (it != kwargs_.end()) {
      kw_used_[name] = true;
      return it->second.none() ? nullptr : &it->second;
    }
  }
  return nullptr;
}
bool Call::has(size_t i, const char* name) { return get(i, name) != nullptr; }
const Tensor& Call::tensor(size_t i, const char* name) {
  const Arg* a = get(i, name);
  if (!a) throw std::invalid_argument(std::string("op_db argument ") + (name ? name : "?") + " missing");
  return a->tensor();
}
int64_t Call::integer(size_t i, const char* name, std::optional<int64_t> dflt) {
  const Arg* a = get(i, name);
  if (a) return a->integer();
  if (!dflt) throw std::invalid_argument(std::string("op_db argument ") + (name ? name : "?") + " missing");
  return *dflt;
}
double Call::number(size_t i, const char* name, std::optional<double> dflt) {
  const Arg* a = get(i, name);
  if (a) return a->number();
  if (!dflt) throw std::invalid_argument(std::string("op_db argument ") + (name ? name : "?") + " missing");
  return *dflt;
}
bool Call::boolean(size_t i, const char* name, bool dflt) {
  const Arg* a = get(i, name);
  return a ? a->boolean() : dflt;
}
std::vector<int64_t> Call::ints(size_t i, const char* name, std::vector<int64_t> dflt) {
  const Arg* a = get(i, name);
  return a ? a->ints() : dflt;
}
std::optional<DType> Call::dtype(size_t i, const char* name) {
  const Arg* a = get(i, name);
  if (!a) return std::nullopt;
  return a->dtype();
}
std::string Call::str(size_t i, const char* name, const std::string& dflt) {
  const Arg* a = get(i, name);
  return a ? a->str() : dflt;
}
TensorOptions Call::options(DType dflt) {
  kw("device");
  TensorOptions o = TensorOptions(dtype(SIZE_MAX, "dtype").value_or(dflt)).device(device);
  return o.requires_grad(boolean(SIZE_MAX, "requires_grad", false));
}
void Call::use_all() {
  for (size_t k = 0; k < used_.size(); ++k) used_[k] = true;
  for (const auto& [k, v] : kwargs_) kw_used_[k] = true;
}
std::vector<std::string> Call::unused() const {
  std::vector<std::string> out;
  for (size_t k = 0; k < args_.size(); ++k)
    if (!used_[k]) out.push_back("args[" + std::to_string(k) + "] = " + args_[k].describe());
  for (const auto& [k, v] : kwargs_)
    if (!kw_used_.count(k)) out.push_back(k + " = " + v.describe());
  return out;
}

std::map<std::string, OpFn>& registry() {
  static std::map<std::string, OpFn> r;
  return r;
}
Registrar& Registrar::operator=(OpFn fn) {
  if (!registry().emplace(key, std::move(fn)).second) {
    std::fprintf(stderr, "op_db: entry %s mapped twice\n", key);
    std::abort();
  }
  return *this;
}

}  // namespace vnn::opdb
