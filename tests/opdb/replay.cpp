// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The shared pieces of the database replays (tests/opdb/replay.hpp).
#include "replay.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace vnn::opdb {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

int64_t json_int(const json::Value& v) {
  return v.is_uint ? int64_t(v.u) : std::stoll(v.s);
}

Arg decode(const json::Value& v, const std::map<std::string, Tensor>& tensors) {
  Arg a;
  if (v.type == json::Value::Type::null) return a;
  if (v.type == json::Value::Type::array) {
    a.kind = Arg::Kind::list;
    for (const auto& x : v.items) a.items.push_back(decode(x, tensors));
    return a;
  }
  const auto& [key, val] = v.members.at(0);
  if (key == "t") {
    a = Arg(tensors.at(val.s));
  } else if (key == "i") {
    a = Arg(json_int(val));
  } else if (key == "f") {
    a = Arg(val.type == json::Value::Type::string ? std::strtod(val.s.c_str(), nullptr) : std::stod(val.s));
  } else if (key == "b") {
    a = Arg(val.b);
  } else if (key == "s") {
    a.kind = Arg::Kind::string;
    a.s = val.s;
  } else if (key == "dtype") {
    a.kind = Arg::Kind::dtype;
    const std::map<std::string, DType> names = {
        {"float32", kFloat32}, {"float64", kFloat64}, {"int32", kInt32},       {"int64", kInt64},
        {"uint8", kUInt8},     {"bool", kBool},       {"float16", kFloat16}, {"bfloat16", kBFloat16},
        {"int8", kInt8},       {"int16", kInt16}};
    auto it = names.find(val.s);
    if (it == names.end()) gap("dtype argument " + val.s);
    a.d = it->second;
  } else if (key == "device") {
    a.kind = Arg::Kind::device;
    a.s = val.s;
  } else if (key == "memory_format") {
    a.kind = Arg::Kind::memory_format;
    a.s = val.s;
  } else {
    gap("an argument encoded as \"" + key + "\"");
  }
  return a;
}

void flatten_tensors(const Arg& a, std::vector<Tensor>& out) {
  if (a.kind == Arg::Kind::tensor) out.push_back(a.t);
  for (const auto& x : a.items) flatten_tensors(x, out);
}

bool close(double got, double want, double rtol, double atol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// Compares vnn's result with PyTorch's; on a mismatch says where and how.
bool same(const Arg& want, const Arg& got, double rtol, double atol, bool shape_only, const std::string& at,
          std::string& why) {
  if (want.kind == Arg::Kind::tensor) {
    if (got.kind != Arg::Kind::tensor || !got.t.defined()) {
      why = at + ": expected a tensor, got " + got.describe();
      return false;
    }
    const Tensor& w = want.t;
    Tensor g = got.t;
    if (g.sizes() != w.sizes() || g.dtype() != w.dtype()) {
      why = at + ": expected " + want.describe() + ", got " + got.describe();
      return false;
    }
    if (shape_only || w.numel() == 0) return true;
    g = g.detach().to(Device("cpu", 0));
    if (!is_floating(w.dtype())) {
      auto a = g.to(kInt64).contiguous().to_vector<int64_t>();
      auto b = w.to(kInt64).contiguous().to_vector<int64_t>();
      for (size_t k = 0; k < a.size(); ++k)
        if (a[k] != b[k]) {
          why = at + ": element " + std::to_string(k) + " is " + std::to_string(a[k]) + ", PyTorch's " +
                std::to_string(b[k]);
          return false;
        }
      return true;
    }
    if (rtol == 0 && atol == 0) {
      // An integer sample with a floating result (exp of int64): the
      // result dtype's default tolerance, as torch.testing.assert_close.
      rtol = w.dtype() == kFloat64 ? 1e-7 : w.dtype() == kFloat16 ? 1e-3 : w.dtype() == kBFloat16 ? 1.6e-2 : 1.3e-6;
      atol = w.dtype() == kFloat64 ? 1e-7 : 1e-5;
    }
    auto a = g.to(kFloat64).contiguous().to_vector<double>();
    auto b = w.to(kFloat64).contiguous().to_vector<double>();
    for (size_t k = 0; k < a.size(); ++k)
      if (!close(a[k], b[k], rtol, atol)) {
        std::ostringstream os;
        os.precision(17);
        os << at << ": element " << k << " is " << a[k] << ", PyTorch's " << b[k] << " (rtol " << rtol << ", atol "
           << atol << ")";
        why = os.str();
        return false;
      }
    return true;
  }
  if (want.kind == Arg::Kind::list) {
    if (got.kind != Arg::Kind::list || got.items.size() != want.items.size()) {
      why = at + ": expected " + std::to_string(want.items.size()) + " results, got " + got.describe();
      return false;
    }
    for (size_t k = 0; k < want.items.size(); ++k)
      if (!same(want.items[k], got.items[k], rtol, atol, shape_only, at + "[" + std::to_string(k) + "]", why))
        return false;
    return true;
  }
  if (want.kind == Arg::Kind::none) return got.none() || (got.kind == Arg::Kind::tensor && !got.t.defined());
  // A Python scalar: vnn may answer a number or a 0-D tensor.
  double g = 0;
  try {
    g = got.kind == Arg::Kind::tensor ? got.t.item() : got.number();
  } catch (const std::exception&) {
    why = at + ": expected " + want.describe() + ", got " + got.describe();
    return false;
  }
  if (!close(g, want.number(), rtol, atol)) {
    why = at + ": expected " + want.describe() + ", got " + got.describe();
    return false;
  }
  return true;
}

std::vector<KnownFailure> read_known_failures(const std::string& path) {
  std::vector<KnownFailure> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream is(line);
    KnownFailure k;
    is >> k.entry >> k.dtype >> k.device;
    std::getline(is, k.reason);
    out.push_back(k);
  }
  return out;
}

KnownFailure* find_known(std::vector<KnownFailure>& known, const std::string& entry, const std::string& dtype,
                         const std::string& backend) {
  const bool integer =
      dtype == "int32" || dtype == "int64" || dtype == "uint8" || dtype == "int8" || dtype == "int16";
  for (auto& k : known)
    if (k.entry == entry && (k.dtype == "*" || k.dtype == dtype || (k.dtype == "integer" && integer)) &&
        (k.device == "*" || k.device == backend)) {
      ++k.hits;
      return &k;
    }
  return nullptr;
}

std::set<std::string> names_from_env(const char* var) {
  std::set<std::string> out;
  if (const char* o = std::getenv(var)) {
    std::istringstream is(o);
    std::string k;
    while (std::getline(is, k, ',')) out.insert(k);
  }
  return out;
}

std::map<std::string, Tensor> inputs_on_device(const std::map<std::string, Tensor>& host, const json::Value* grads,
                                               const Device& dev) {
  std::set<std::string> wrt;
  if (grads)
    for (const auto& g : grads->items) wrt.insert(g.items[0].s);
  std::map<std::string, Tensor> on_dev;
  for (const auto& [name, t] : host) {
    if (name.find(".in") == std::string::npos) continue;
    Tensor x = t.to(dev);
    if (wrt.count(name)) x = x.detach().requires_grad_(true);
    on_dev[name] = x;
  }
  return on_dev;
}

bool same_gradients(const Arg& result, const json::Value& cot, const std::vector<Tensor>& wrt,
                    const std::vector<std::string>& names, const std::vector<const json::Value*>& want,
                    const std::map<std::string, Tensor>& host, const Device& dev, double rtol, double atol,
                    std::string& why) {
  std::vector<Tensor> outs, diff_outs, cots;
  flatten_tensors(result, outs);
  for (const auto& o : outs)
    if (o.defined() && o.requires_grad() && is_floating(o.dtype())) diff_outs.push_back(o);
  for (const auto& c : cot.items) cots.push_back(host.at(c.find("t")->s).to(dev));
  if (diff_outs.size() != cots.size()) {
    why = "gradient: " + std::to_string(diff_outs.size()) + " differentiable outputs, PyTorch has " +
          std::to_string(cots.size());
    return false;
  }
  std::vector<Tensor> got;
  try {
    got = autograd::grad(diff_outs, wrt, cots, std::nullopt, false, /*allow_unused=*/true);
    for (size_t k = 0; k < got.size(); ++k)
      if (!got[k].defined()) got[k] = zeros_like(wrt[k]);  // an unused input: PyTorch's exported zeros
  } catch (const std::exception& e) {
    why = std::string("gradient: vnn threw: ") + e.what();
    return false;
  }
  for (size_t k = 0; k < wrt.size(); ++k) {
    if (want[k]->type == json::Value::Type::null) continue;
    if (!same(Arg(host.at(want[k]->find("t")->s)), Arg(got[k]), rtol, atol, false, "gradient of " + names[k], why))
      return false;
  }
  return true;
}

bool record(Tally& t, Outcome o, const std::string& entry, const std::string& where, const std::string& why,
            bool verbose) {
  if (o == Outcome::gap) ++t.gaps[entry + ": " + why];
  if (o == Outcome::fail) {
    t.failures.push_back(where + ": " + why);
    if (verbose) std::cout << "FAIL " << t.failures.back() << "\n";
  }
  return o == Outcome::pass;
}

std::string report(const Tally& t, const std::string& headline) {
  std::ostringstream rep;
  rep << headline << "\n";
  rep << "  mapped to vnn: " << t.mapped << " of " << t.entries << " entries\n";
  for (const auto& why : t.not_applicable) rep << "  not applicable: " << why << "\n";
  for (const auto& [why, n] : t.export_skips) rep << "  skipped at export (" << n << " samples): " << why << "\n";
  for (const auto& [why, n] : t.gaps) rep << "  known gap (" << n << " samples): " << why << "\n";
  for (const auto& [why, n] : t.known) rep << "  known failure (" << n << " samples): " << why << "\n";
  rep << "  no vnn mapping (" << t.unmapped.size() << "):";
  for (const auto& k : t.unmapped) rep << " " << k;
  rep << "\n";
  return rep.str();
}

void check_verdict(const Tally& t, const std::vector<KnownFailure>& known, bool all_ran, const std::string& backend) {
  for (const auto& f : t.failures) UNSCOPED_INFO(f);
  CHECK(t.failures.empty());
  if (all_ran)
    for (const auto& k : known)
      if (k.hits == 0 && (k.device == "*" || k.device == backend))
        FAIL_CHECK("known_failures.txt: '" << k.entry << " " << k.dtype << " " << k.device
                                           << "' no longer fails here: remove the line");
}

}  // namespace vnn::opdb
