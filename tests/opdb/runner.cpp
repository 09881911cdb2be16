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
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>

#include "replay.hpp"
#include "support/device_under_test.hpp"
#include "vnn/io/safetensors.h"

using namespace vnn;
using namespace vnn::opdb;

namespace {

// Runs one sample; returns its outcome, with the reason in `why`.
Outcome run_sample(const OpFn& fn, const json::Value& s, const std::map<std::string, Tensor>& host,
                   const Device& dev, bool shape_only, std::string& why) {
  const double rtol = std::stod(s.find("rtol")->s), atol = std::stod(s.find("atol")->s);
  const json::Value* grads = s.find("grad");
  std::map<std::string, Tensor> on_dev = inputs_on_device(host, grads, dev);
  std::map<std::string, Arg> kwargs;
  std::vector<Arg> args;
  Arg input, result;
  Outcome o = guarded(
      [&] {
        input = decode(*s.find("input"), on_dev);
        for (const auto& a : s.find("args")->items) args.push_back(decode(a, on_dev));
        for (const auto& [k, v] : s.find("kwargs")->members) kwargs[k] = decode(v, on_dev);
      },
      why);
  if (o != Outcome::pass) return o;
  Call call(dev, input, args, kwargs);
  o = guarded([&] { result = fn(call); }, why);
  if (o != Outcome::pass) return o;
  auto unused = call.unused();
  if (!unused.empty()) {
    why = "the mapping ignores " + unused[0];
    return Outcome::fail;
  }
  Arg want = decode(*s.find("out"), host);
  if (!same(want, result, rtol, atol, shape_only, "output", why)) return Outcome::fail;
  if (!grads || shape_only) return Outcome::pass;
  // Gradients: d sum(out * cot) / d inputs, as PyTorch computed them.
  std::vector<Tensor> inputs;
  std::vector<std::string> names;
  std::vector<const json::Value*> want_grads;
  for (const auto& g : grads->items) {
    inputs.push_back(on_dev.at(g.items[0].s));
    names.push_back(g.items[0].s);
    want_grads.push_back(&g.items[1]);
  }
  if (!same_gradients(result, *s.find("cot"), inputs, names, want_grads, host, dev, rtol, atol, why))
    return Outcome::fail;
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
  const std::set<std::string> only = names_from_env("VNN_OPDB_ONLY");
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
      if (o == Outcome::fail)
        if (const KnownFailure* k = find_known(known, key, dtype, backend)) {
          ++tally.known[key + " " + dtype + ":" + k->reason];
          o = Outcome::known;
        }
      const std::string where =
          key + " (" + dtype + " sample " + std::to_string(json_int(*s.find("index"))) + ")";
      if (record(tally, o, key, where, why, verbose)) ++passed;
    }
    tally.samples_passed += passed;
    if (passed == int(samples.items.size())) ++tally.entries_passed;
  }

  std::ostringstream headline;
  headline << "op_db: " << tally.entries_passed << " of " << tally.entries << " ops (" << tally.samples_passed
           << " of " << tally.samples << " samples) pass on " << dev_name;
  std::cout << report(tally, headline.str()) << std::flush;
  check_verdict(tally, known, only.empty(), backend);
}
