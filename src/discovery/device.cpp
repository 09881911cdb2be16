// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::Device: parsing and printing "backend:index".
#include <cctype>
#include <ostream>

#include "vnn/detail/message.h"
#include "vnn/device.h"
#include "vnn/error.h"

namespace vnn {

const char* name(DeviceType t) {
  switch (t) {
    case DeviceType::cpu: return "cpu";
    case DeviceType::gpu: return "gpu";
    case DeviceType::accelerator: return "accelerator";
  }
  return "unknown";
}

namespace {
// Any lowercase identifier: third-party plugins bring their own names.
bool valid_backend_name(const std::string& b) {
  if (b.empty() || b.size() > 32 || !std::islower(static_cast<unsigned char>(b[0]))) return false;
  for (char c : b)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}
}  // namespace

Device::Device() : backend_("cpu"), index_(0) {}
Device::Device(const char* spec) : Device(std::string(spec ? spec : "")) {}

Device::Device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string b = spec.substr(0, colon);
  for (auto& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (b == "openmp") b = "cpu";  // the plugin's name, accepted as an alias
  VNN_CHECK(DeviceNotFound, valid_backend_name(b), "Device: cannot parse '", spec,
            "': expected a backend name such as cpu, cuda, hip or opencl, optionally followed by :index "
            "(e.g. \"cuda:1\")");
  int idx = 0;
  if (colon != std::string::npos) {
    std::string digits = spec.substr(colon + 1);
    if (digits.empty() || digits.size() > 6 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      VNN_THROW(DeviceNotFound, "Device: cannot parse '", spec,
                "': the index after ':' must be a "
                "non-negative integer (e.g. \"",
                b, ":0\")");
    idx = std::stoi(digits);
  }
  backend_ = b;
  index_ = idx;
}

Device::Device(std::string backend, int index) : Device(backend + ":" + std::to_string(index)) {}

std::string Device::str() const { return backend_ + ":" + std::to_string(index_); }

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace vnn
