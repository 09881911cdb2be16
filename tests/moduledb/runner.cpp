// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Replays PyTorch's module test database (module_db) on the device under test.
//
// tests/moduledb/data holds, per module_db entry, PyTorch's samples: the
// constructor and forward arguments, the module's state_dict, the forward
// outputs, the buffers after a training-mode forward, and for float64 the
// gradients of sum(out * cot) with respect to the inputs and the parameters
// (tests/moduledb/export_moduledb.py). Each sample builds the vnn module
// through the entry's mapping (modules_*.cpp), loads PyTorch's state_dict
// (PyTorch's keys, strictly), runs forward in the exported mode and
// backward on the device, and compares with PyTorch at PyTorch's tolerance.
// It prints
//   module_db: N of M entries (S of T samples) pass on DEVICE
// with the entries and samples left out at export (and why), the known gaps
// (forms a mapping declares vnn lacks), the entries vnn has no mapping for,
// and the known failures (tests/moduledb/known_failures.txt). Any other
// failure fails the test.
//   VNN_MODDB_ONLY=nn.Linear,nn.LSTM   runs only those entries
//   VNN_MODDB_VERBOSE=1                prints every failing sample
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>

#include "moddb.hpp"
#include "replay.hpp"
#include "support/device_under_test.hpp"
#include "vnn/io/safetensors.h"

using namespace vnn;
using namespace vnn::moddb;
using namespace vnn::opdb;

namespace {

DType dtype_named(const std::string& s) { return s == "float64" ? kFloat64 : kFloat32; }

// Compares the named tensors of `got` (a module's parameters or buffers)
// with PyTorch's; false with `why` on the first difference.
bool same_named(const StateDict& got, const json::Value& want, const std::map<std::string, Tensor>& host, double rtol,
                double atol, const char* what, std::string& why) {
  for (const auto& [key, name] : want.members) {
    auto t = got.find(key);
    if (t == got.end()) {
      why = std::string(what) + " " + key + ": vnn's module has no such key";
      return false;
    }
    if (!same(Arg(host.at(name.s)), Arg(t->second), rtol, atol, false, std::string(what) + " " + key, why))
      return false;
  }
  return true;
}

// The forward's gradients against PyTorch's: d sum(out * cot) / d (inputs,
// parameters).
bool same_module_gradients(const json::Value& s, const Arg& result, const nn::Module& m,
                           const std::map<std::string, Tensor>& host, const std::map<std::string, Tensor>& on_dev,
                           const Device& dev, double rtol, double atol, std::string& why) {
  std::vector<Tensor> wrt;
  std::vector<std::string> names;
  std::vector<const json::Value*> want;
  for (const auto& g : s.find("grad")->items) {
    wrt.push_back(on_dev.at(g.items[0].s));
    names.push_back("input " + g.items[0].s);
    want.push_back(&g.items[1]);
  }
  const StateDict params = m.named_parameters();
  for (const auto& g : s.find("param_grad")->items) {
    auto p = params.find(g.items[0].s);
    if (p == params.end()) {
      why = "gradient: vnn's module has no parameter " + g.items[0].s;
      return false;
    }
    wrt.push_back(p->second);
    names.push_back("parameter " + g.items[0].s);
    want.push_back(&g.items[1]);
  }
  return same_gradients(result, *s.find("cot"), wrt, names, want, host, dev, rtol, atol, why);
}

// Runs one sample; returns its outcome, with the reason in `why`.
Outcome run_sample(const ModFn& fn, const json::Value& s, const std::map<std::string, Tensor>& host, const Device& dev,
                   std::string& why) {
  const double rtol = std::stod(s.find("rtol")->s), atol = std::stod(s.find("atol")->s);
  const json::Value* grads = s.find("grad");
  std::map<std::string, Tensor> on_dev = inputs_on_device(host, grads, dev);
  auto decode_call = [&](const char* args_key, const char* kwargs_key) {
    std::vector<Arg> args;
    std::map<std::string, Arg> kwargs;
    for (const auto& a : s.find(args_key)->items) args.push_back(decode(a, on_dev));
    for (const auto& [k, v] : s.find(kwargs_key)->members) kwargs[k] = decode(v, on_dev);
    return Call(dev, Arg(), std::move(args), std::move(kwargs));
  };
  const bool training = s.find("mode")->s == "train";
  Built built;
  Arg result;
  std::string unused;
  Outcome o = guarded(
      [&] {
        Call ctor = decode_call("ctor_args", "ctor_kwargs");
        built = fn(ctor);
        if (auto u = ctor.unused(); !u.empty()) {
          unused = "the constructor's " + u[0];
          return;
        }
        StateDict state;
        for (const auto& [key, name] : s.find("state")->members) state.emplace_back(key, host.at(name.s));
        built.module->to(dev, dtype_named(s.find("dtype")->s));
        built.module->load_state_dict(state);
        built.module->train(training);
        Call fwd = decode_call("args", "kwargs");
        result = built.forward(fwd);
        if (auto u = fwd.unused(); !u.empty()) unused = "the forward's " + u[0];
      },
      why);
  if (o != Outcome::pass) return o;
  if (!unused.empty()) {
    why = "the mapping ignores " + unused;
    return Outcome::fail;
  }
  if (!same(decode(*s.find("out"), host), result, rtol, atol, false, "output", why)) return Outcome::fail;
  if (const json::Value* after = s.find("buffers_after"))
    if (!same_named(built.module->named_buffers(), *after, host, rtol, atol, "buffer", why)) return Outcome::fail;
  if (grads && !same_module_gradients(s, result, *built.module, host, on_dev, dev, rtol, atol, why))
    return Outcome::fail;
  return Outcome::pass;
}

}  // namespace

TEST_CASE("PyTorch's module_db samples give PyTorch's results on the device under test") {
  const Device dev = test::device_under_test();
  const std::string dir = VNN_MODDB_DIR;
  std::string index_text = read_file(dir + "/index.json");
  REQUIRE(!index_text.empty());
  json::Value index = json::parse(index_text.data(), index_text.size(), "index.json");
  auto known = read_known_failures(dir + "/../known_failures.txt");
  const std::set<std::string> only = names_from_env("VNN_MODDB_ONLY");
  const bool verbose = std::getenv("VNN_MODDB_VERBOSE") != nullptr;
  const std::string backend = dev.backend();

  Tally tally;
  for (const auto& [key, e] : index.find("entries")->members) {
    if (!only.empty() && !only.count(key)) continue;
    if (e.find("status")->s != "exported") {
      tally.not_applicable.push_back(key + ": " + e.find("why")->s);
      continue;
    }
    const std::string path = dir + "/" + e.find("file")->s;
    io::Metadata meta = io::load_metadata(path);
    json::Value skips = json::parse(meta["skipped"].data(), meta["skipped"].size(), path);
    for (const auto& sk : skips.items) ++tally.export_skips[key + ": " + sk.find("why")->s];
    json::Value samples = json::parse(meta["samples"].data(), meta["samples"].size(), path);
    if (samples.items.empty()) continue;
    ++tally.entries;
    tally.samples += int(samples.items.size());
    auto it = moddb::registry().find(key);
    if (it == moddb::registry().end()) {
      tally.unmapped.push_back(key);
      continue;
    }
    ++tally.mapped;
    io::TensorMap all = io::load(path);
    int passed = 0;
    for (const auto& s : samples.items) {
      const std::string dtype = s.find("dtype")->s;
      const std::string sample = dtype + "." + s.find("mode")->s + "." + std::to_string(json_int(*s.find("index")));
      std::map<std::string, Tensor> host;
      for (const auto& [name, t] : all)
        if (name.compare(0, sample.size() + 1, sample + ".") == 0) host[name] = t;
      std::string why;
      Outcome o = run_sample(it->second, s, host, dev, why);
      // A known failure names the entry, or the entry and the sample's
      // description ("nn.Conv2d/no_batch_dim").
      const std::string desc = s.find("desc")->s;
      const KnownFailure* k = nullptr;
      if (o == Outcome::fail && !(k = find_known(known, key + "/" + desc, dtype, backend)))
        k = find_known(known, key, dtype, backend);
      if (k) {
        ++tally.known[k->entry + " " + dtype + ":" + k->reason];
        o = Outcome::known;
      }
      if (record(tally, o, key, key + " (" + sample + ", " + desc + ")", why, verbose)) ++passed;
    }
    tally.samples_passed += passed;
    if (passed == int(samples.items.size())) ++tally.entries_passed;
  }
  std::ostringstream headline;
  headline << "module_db: " << tally.entries_passed << " of " << tally.entries << " entries (" << tally.samples_passed
           << " of " << tally.samples << " samples) pass on " << dev.str();
  std::cout << report(tally, headline.str()) << std::flush;
  check_verdict(tally, known, only.empty(), backend);
}
