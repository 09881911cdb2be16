// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which AMD devices this build of the HIP plugin can run on. Header-only and
// free of HIP types, so the rule is unit-tested on machines without a GPU
// (tests/backends/hip_arch.cpp).
//
// The HIP runtime loads a kernel only from a code object for the device's
// exact processor (gfx90a code does not run on gfx908 or gfx942), and a
// fat binary without one makes the first launch fail; Kokkos launches
// kernels in its initialisation, so the process aborts there. A device is
// therefore usable only where the plugin carries a code object whose target
// ID (processor[:feature(+|-)]...) is compatible with the device's
// gcnArchName, e.g. "gfx90a:sramecc+:xnack-": the same processor, and every
// feature the code object names (xnack, sramecc) set the same way on the
// device. A code object naming no feature runs in either mode.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace vnn::hip_arch {

// A parsed target ID; features keep their order, sign '+' or '-'.
struct Target {
  std::string processor;                              // "gfx90a"
  std::vector<std::pair<std::string, char>> features;  // {"xnack", '-'}
};

// "gfx" + lower-case hex digits (gfx908, gfx90a, gfx1030), then zero or
// more ":name+" / ":name-" with a lower-case alphanumeric name. false (and
// *why) for anything else.
inline bool parse(const std::string& id, Target* out, std::string* why) {
  auto bad = [&](const std::string& what) {
    if (why) *why = "'" + id + "' is not an AMD GPU target ID (" + what + "; expected e.g. gfx90a:sramecc+:xnack-)";
    return false;
  };
  Target t;
  const size_t colon = id.find(':');
  t.processor = id.substr(0, colon);
  bool proc_ok = t.processor.size() >= 6 && t.processor.size() <= 7 && t.processor.compare(0, 3, "gfx") == 0;
  for (size_t i = 3; proc_ok && i < t.processor.size(); ++i) {
    const char c = t.processor[i];
    proc_ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  }
  if (!proc_ok) return bad("the processor must be gfx and 3 or 4 lower-case hex digits");
  size_t pos = colon;
  while (pos != std::string::npos) {
    const size_t next = id.find(':', pos + 1);
    const std::string f = id.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (f.size() < 2 || (f.back() != '+' && f.back() != '-')) return bad("feature '" + f + "' lacks its + or -");
    const std::string name = f.substr(0, f.size() - 1);
    for (char c : name)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return bad("feature '" + f + "' has a bad name");
    for (const auto& g : t.features)
      if (g.first == name) return bad("feature '" + name + "' given twice");
    t.features.emplace_back(name, f.back());
    pos = next;
  }
  if (out) *out = std::move(t);
  return true;
}

// The compiled list as the build passes it: separated by ';', ',' or blanks.
inline std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : list + ";") {
    if (c == ';' || c == ',' || c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

// "gfx908, gfx90a" (or "none").
inline std::string describe(const std::vector<std::string>& compiled) {
  std::string s;
  for (const auto& a : compiled) s += (s.empty() ? "" : ", ") + a;
  return s.empty() ? "none" : s;
}

// Why a code object of the device's processor cannot run on it ("" when it
// can): a feature the code names is set otherwise, or not reported, there.
inline std::string feature_mismatch(const Target& code, const Target& device) {
  for (const auto& f : code.features) {
    char on_device = 0;
    for (const auto& g : device.features)
      if (g.first == f.first) on_device = g.second;
    if (on_device != f.second)
      return "needs " + f.first + f.second + " and the device " +
             (on_device ? "runs " + f.first + on_device : "does not report its " + f.first + " mode");
  }
  return "";
}

struct Check {
  bool usable = false;
  std::string reason;  // set when !usable
};

// compiled: the target IDs the plugin carries code objects for; device: the
// device's gcnArchName.
inline Check check(const std::vector<std::string>& compiled, const std::string& device) {
  Check c;
  const std::string have = describe(compiled);
  Target dev;
  std::string why;
  if (device.empty()) {
    c.reason = "the HIP runtime did not report the device's arch (gcnArchName), so vnn cannot tell whether this "
               "build (code objects for " + have + ") runs on it";
    return c;
  }
  if (!parse(device, &dev, &why)) {
    c.reason = "the device's arch is unreadable: " + why + "; this build has code objects for " + have;
    return c;
  }
  std::string feature_why;
  std::vector<std::string> rebuild;  // the list to suggest: compiled + the bare device processor
  for (const auto& a : compiled) {
    Target code;
    if (!parse(a, &code, nullptr)) continue;  // the build validates its list; never match a bad entry
    if (code.processor != dev.processor) {
      rebuild.push_back(a);
      continue;
    }
    feature_why = feature_mismatch(code, dev);
    if (feature_why.empty()) {
      c.usable = true;
      return c;
    }
  }
  rebuild.push_back(dev.processor);
  std::string list;
  for (const auto& a : rebuild) list += (list.empty() ? "" : ";") + a;
  // Kept short: the ABI's unusable_reason holds 255 characters.
  const std::string built = compiled.empty()        ? "no code objects"
                            : feature_why.empty() ? "code objects for " + have + " only"
                                                  : "code objects for " + have + ", but its " + dev.processor +
                                                        " one " + feature_why;
  c.reason = "device is " + dev.processor + " (gcnArchName " + device + "); this build has " + built +
             "; rebuild vnn with -DVNN_HIP_ARCHS=\"" + list + "\"";
  return c;
}

}  // namespace vnn::hip_arch
