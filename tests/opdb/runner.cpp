// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Replays PyTorch's OpInfo database (op_db) on the device under test.
//
// tests/opdb/data holds, per op_db entry, PyTorch's samples (inputs,
// arguments, outputs, and float64 gradients of sum(out * cot)), exported by
// tests/opdb/export_opdb.py. Each sample runs through the entry's vnn
// mapping (ops_*.cpp) on the device and is compared with PyTorch's output,
// dtype and shape included, at PyTorch's tolerance for that op and dtype;
// then the gradients. It prints
//   op_db: N of M ops (S of T samples) pass on DEVICE
// with the skipped samples (forms the export cannot carry: complex dtypes,
// sparse layouts ...), the known gaps (forms a mapping declares vnn lacks),
// the entries vnn has no mapping for, and the known failures
// (tests/opdb/known_failures.txt). Any other failure fails the test.
//   VNN_OPDB_ONLY=cumsum,sort   runs only those entries
//   VNN_OPDB_VERBOSE=1          prints every failing sample
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "io/json.hpp"
#include "opdb.hpp"
#include "support/device_under_test.hpp"
#include "vnn/io/safetensors.h"

using namespace vnn;
using namespace vnn::opdb;
namespace json = vnn::io::json;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

int64_t json_int(const json::Value& v) {
  return v.is_uint ? int64_t(v.u) : std::stoll(v.s);
}

// A JSON-encoded argument (export_opdb.py's Sample.encode) as an Arg, its
// tensors taken from `tensors` (name -> tensor on the device).
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
        {"uint8", kUInt8},     {"bool", kBool},       {"float16", kFloat16}, {"bfloat16", kBFloat16}};
    auto it = names.find(val.s);
    if (it == names.end()) gap("dtype argument " + val.s);
    a.d = it->second;
  } else if (key == "device") {
    a.kind = Arg::Kind::device;
    a.s = val.s;
  } else if (key == "memory_format") {
    a.kind = Arg::Kind::memory_format;
    a.s = val.s;
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

struct KnownFailure {
  std::string entry, dtype, device, reason;
  int hits = 0;
};

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

enum class Outcome { pass, fail, gap, known };

struct Tally {
  int entries = 0, entries_passed = 0, mapped = 0;
  int samples = 0, samples_passed = 0;
  std::map<std::string, int> gaps;          // "entry: why" -> samples
  std::map<std::string, int> export_skips;  // "why" -> samples
  std::map<std::string, int> known;         // "entry dtype: reason" -> samples
  std::vector<std::string> unmapped, failures;
};

// Runs one sample; returns its outcome, with the reason in `why`.
Outcome run_sample(const OpFn& fn, const json::Value& s, const std::map<std::string, Tensor>& host,
                   const Device& dev, bool shape_only, std::string& why) {
  const double rtol = std::stod(s.find("rtol")->s), atol = std::stod(s.find("atol")->s);
  const json::Value* grads = s.find("grad");
  // The sample's tensors on the device; the ones PyTorch differentiated
  // become leaves that require grad.
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
  std::map<std::string, Arg> kwargs;
  std::vector<Arg> args;
  Arg input, result;
  try {
    input = decode(*s.find("input"), on_dev);
    for (const auto& a : s.find("args")->items) args.push_back(decode(a, on_dev));
    for (const auto& [k, v] : s.find("kwargs")->members) kwargs[k] = decode(v, on_dev);
  } catch (const Gap& g) {
    why = g.what();
    return Outcome::gap;
  }
  Call call(dev, input, args, kwargs);
  try {
    result = fn(call);
  } catch (const Gap& g) {
    why = g.what();
    return Outcome::gap;
  } catch (const std::exception& e) {
    why = std::string("vnn threw: ") + e.what();
    return Outcome::fail;
  }
  auto unused = call.unused();
  if (!unused.empty()) {
    why = "the mapping ignores " + unused[0];
    return Outcome::fail;
  }
  Arg want = decode(*s.find("out"), host);
  if (!same(want, result, rtol, atol, shape_only, "output", why)) return Outcome::fail;
  if (!grads || shape_only) return Outcome::pass;
  // Gradients: d sum(out * cot) / d inputs, as PyTorch computed them.
  std::vector<Tensor> outs, diff_outs, cots, inputs;
  flatten_tensors(result, outs);
  for (const auto& o : outs)
    if (o.requires_grad() && is_floating(o.dtype())) diff_outs.push_back(o);
  for (const auto& c : s.find("cot")->items) cots.push_back(host.at(c.find("t")->s).to(dev));
  if (diff_outs.size() != cots.size()) {
    why = "gradient: " + std::to_string(diff_outs.size()) + " differentiable outputs, PyTorch has " +
          std::to_string(cots.size());
    return Outcome::fail;
  }
  for (const auto& g : grads->items) inputs.push_back(on_dev.at(g.items[0].s));
  std::vector<Tensor> got;
  try {
    got = autograd::grad(diff_outs, inputs, cots);
  } catch (const std::exception& e) {
    why = std::string("gradient: vnn threw: ") + e.what();
    return Outcome::fail;
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const json::Value& g = grads->items[k].items[1];
    if (g.type == json::Value::Type::null) continue;
    Arg want_g(host.at(g.find("t")->s));
    if (!same(want_g, Arg(got[k]), rtol, atol, false, "gradient of " + grads->items[k].items[0].s, why))
      return Outcome::fail;
  }
  return Outcome::pass;
}

}  // namespace

TEST_CASE("PyTorch's op_db samples give PyTorch's results on the device under test") {
  const Device dev = test::device_under_test();
  const std::string dir = VNN_OPDB_DIR;
  std::string index_text = read_file(dir + "/index.json");
  REQUIRE(!index_text.empty());
  json::Value index = json::parse(index_text.data(), index_text.size(), "index.json");
  auto known = read_known_failures(std::string(VNN_OPDB_DIR) + "/../known_failures.txt");
  std::set<std::string> only;
  if (const char* o = std::getenv("VNN_OPDB_ONLY")) {
    std::istringstream is(o);
    std::string k;
    while (std::getline(is, k, ',')) only.insert(k);
  }
  const bool verbose = std::getenv("VNN_OPDB_VERBOSE") != nullptr;
  const std::string dev_name = dev.str();
  const std::string backend = dev.backend();

  Tally tally;
  for (const auto& [key, e] : index.find("entries")->members) {
    if (e.find("status")->s != "exported" || (!only.empty() && !only.count(key))) continue;
    const std::string path = dir + "/" + e.find("file")->s;
    io::Metadata meta = io::load_metadata(path);
    json::Value skips = json::parse(meta["skipped"].data(), meta["skipped"].size(), path);
    for (const auto& sk : skips.items) ++tally.export_skips[sk.find("why")->s];
    json::Value samples = json::parse(meta["samples"].data(), meta["samples"].size(), path);
    if (samples.items.empty()) continue;
    ++tally.entries;
    tally.samples += int(samples.items.size());
    auto it = registry().find(key);
    if (it == registry().end()) {
      tally.unmapped.push_back(key);
      continue;
    }
    ++tally.mapped;
    io::TensorMap all = io::load(path);
    const bool shape_only = meta["shape_only"] == "true";
    int passed = 0;
    for (const auto& s : samples.items) {
      const std::string dtype = s.find("dtype")->s;
      const std::string prefix = dtype + "." + std::to_string(json_int(*s.find("index"))) + ".";
      std::map<std::string, Tensor> host;
      for (const auto& [name, t] : all)
        if (name.compare(0, prefix.size(), prefix) == 0) host[name] = t;
      std::string why;
      Outcome o = run_sample(it->second, s, host, dev, shape_only, why);
      if (o == Outcome::fail) {
        const bool integer = dtype == "int32" || dtype == "int64" || dtype == "uint8";
        for (auto& k : known)
          if (k.entry == key && (k.dtype == "*" || k.dtype == dtype || (k.dtype == "integer" && integer)) &&
              (k.device == "*" || k.device == backend)) {
            ++k.hits;
            ++tally.known[key + " " + dtype + ":" + k.reason];
            o = Outcome::known;
            break;
          }
      }
      if (o == Outcome::pass) ++passed;
      if (o == Outcome::gap) ++tally.gaps[key + ": " + why];
      if (o == Outcome::fail) {
        const std::string line = key + " (" + dtype + " sample " + std::to_string(json_int(*s.find("index"))) +
                                 "): " + why;
        tally.failures.push_back(line);
        if (verbose) std::cout << "FAIL " << line << "\n";
      }
    }
    tally.samples_passed += passed;
    if (passed == int(samples.items.size())) ++tally.entries_passed;
  }

  std::ostringstream rep;
  rep << "op_db: " << tally.entries_passed << " of " << tally.entries << " ops (" << tally.samples_passed << " of "
      << tally.samples << " samples) pass on " << dev_name << "\n";
  rep << "  mapped to vnn: " << tally.mapped << " of " << tally.entries << " entries\n";
  for (const auto& [why, n] : tally.export_skips) rep << "  skipped at export (" << n << " samples): " << why << "\n";
  for (const auto& [why, n] : tally.gaps) rep << "  known gap (" << n << " samples): " << why << "\n";
  for (const auto& [why, n] : tally.known) rep << "  known failure (" << n << " samples): " << why << "\n";
  rep << "  no vnn mapping (" << tally.unmapped.size() << "):";
  for (const auto& k : tally.unmapped) rep << " " << k;
  rep << "\n";
  std::cout << rep.str() << std::flush;

  for (const auto& f : tally.failures) UNSCOPED_INFO(f);
  CHECK(tally.failures.empty());
  if (only.empty())
    for (const auto& k : known)
      if (k.hits == 0 && (k.device == "*" || k.device == backend))
        FAIL_CHECK("known_failures.txt: '" << k.entry << " " << k.dtype << " " << k.device
                                           << "' no longer fails here: remove the line");
}
