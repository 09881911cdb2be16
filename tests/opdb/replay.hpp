// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the replays of PyTorch's test databases share (tests/opdb: op_db,
// tests/moduledb: module_db): reading the exported samples' JSON arguments
// into Args, comparing vnn's results with PyTorch's at a tolerance, and the
// known_failures.txt lists.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "opdb.hpp"

namespace vnn::opdb {

namespace json = vnn::io::json;

// The whole file (empty when it cannot be read).
std::string read_file(const std::string& path);
// A JSON integer (the reader keeps numbers as text or unsigned).
int64_t json_int(const json::Value& v);
// A JSON-encoded argument (export_opdb.py's Sample.encode) as an Arg, its
// tensors taken from `tensors` (name -> tensor on the device). An encoding
// it does not know is a Gap.
Arg decode(const json::Value& v, const std::map<std::string, Tensor>& tensors);
// The tensors of an Arg, depth first.
void flatten_tensors(const Arg& a, std::vector<Tensor>& out);
// Whether vnn's result `got` matches PyTorch's `want` (values within
// atol + rtol * |want|, dtype and shape; shape_only: dtype and shape); on a
// mismatch `why` says where ("at": "output[1]") and how.
bool same(const Arg& want, const Arg& got, double rtol, double atol, bool shape_only, const std::string& at,
          std::string& why);

// One line of a known_failures.txt: "entry dtype|integer|* backend|* reason".
struct KnownFailure {
  std::string entry, dtype, device, reason;
  int hits = 0;
};
std::vector<KnownFailure> read_known_failures(const std::string& path);
// The line that lists a failure of `entry` in `dtype` on `backend` (its hits
// counted), or null.
KnownFailure* find_known(std::vector<KnownFailure>& known, const std::string& entry, const std::string& dtype,
                         const std::string& backend);
// The comma-separated names in environment variable `var` (empty: all).
std::set<std::string> names_from_env(const char* var);

// What became of one sample.
enum class Outcome { pass, fail, gap, known };

// Runs f(); a Gap is Outcome::gap and any other exception Outcome::fail,
// with the reason in `why`.
template <class F>
Outcome guarded(F&& f, std::string& why) {
  try {
    f();
    return Outcome::pass;
  } catch (const Gap& g) {
    why = g.what();
    return Outcome::gap;
  } catch (const std::exception& e) {
    why = std::string("vnn threw: ") + e.what();
    return Outcome::fail;
  }
}

// A sample's input tensors (names holding ".in") on the device; the ones
// named first in the sample's "grad" pairs (PyTorch differentiated them)
// become leaves that require grad.
std::map<std::string, Tensor> inputs_on_device(const std::map<std::string, Tensor>& host, const json::Value* grads,
                                               const Device& dev);

// The gradients of sum(out * cot) over the differentiable floating tensors
// of `result` (cotangents: the sample's "cot" list) with respect to `wrt`,
// against PyTorch's (want[k]: a {"t": name} or null, then not compared);
// names[k] says which in a mismatch.
bool same_gradients(const Arg& result, const json::Value& cot, const std::vector<Tensor>& wrt,
                    const std::vector<std::string>& names, const std::vector<const json::Value*>& want,
                    const std::map<std::string, Tensor>& host, const Device& dev, double rtol, double atol,
                    std::string& why);

// A replay's counts and lists, for its report.
struct Tally {
  int entries = 0, entries_passed = 0, mapped = 0;
  int samples = 0, samples_passed = 0;
  std::vector<std::string> not_applicable;  // "entry: why"
  std::map<std::string, int> gaps;          // "entry: why" -> samples
  std::map<std::string, int> export_skips;  // "why" -> samples
  std::map<std::string, int> known;         // "entry dtype: reason" -> samples
  std::vector<std::string> unmapped, failures;
};
// Counts a sample of `entry` (a gap under "entry: why"; a failure as
// "where: why", printed at once when verbose); true when it passed.
bool record(Tally& t, Outcome o, const std::string& entry, const std::string& where, const std::string& why,
            bool verbose);
// `headline` ("op_db: N of M ops ... pass on cpu:0"), then the lists.
std::string report(const Tally& t, const std::string& headline);
// The test's verdict (Catch checks): no unlisted failure, and when every
// entry ran (`all_ran`), no known_failures.txt line for this backend that
// matched nothing.
void check_verdict(const Tally& t, const std::vector<KnownFailure>& known, bool all_ran, const std::string& backend);

}  // namespace vnn::opdb
