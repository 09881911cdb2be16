// vnn-devices: lists the devices vnn can run on (like clinfo -l or
// nvidia-smi -L). --verbose adds properties and the backend report,
// --json prints the same for scripts. --tune (re)runs the OpenCL plugin's
// per-device auto-tuning and rewrites its cache (VNN_OPENCL_TUNE=1).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "vnn/vnn.h"

namespace {

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string q(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string gib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", double(b) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

void print_json() {
  std::cout << "{\n  \"best\": " << q(vnn::devices().empty() ? "" : vnn::best_device().str()) << ",\n";
  std::cout << "  \"devices\": [";
  bool first = true;
  for (const auto& d : vnn::devices()) {
    std::cout << (first ? "\n" : ",\n") << "    {\"device\": " << q(d.device.str()) << ", \"plugin\": " << q(d.plugin)
              << ", \"name\": " << q(d.name) << ", \"vendor\": " << q(d.vendor) << ", \"type\": " << q(vnn::name(d.type))
              << ", \"compute_units\": " << d.compute_units << ", \"total_memory\": " << d.total_memory
              << ", \"free_memory\": " << d.free_memory << ", \"driver_version\": " << q(d.driver_version)
              << ", \"arch\": " << q(d.arch) << ", \"pci_id\": " << q(d.pci_id) << ", \"uuid\": " << q(d.uuid)
              << ", \"properties\": {";
    bool pf = true;
    for (auto& [k, v] : d.properties) {
      std::cout << (pf ? "" : ", ") << q(k) << ": " << q(v);
      pf = false;
    }
    std::cout << "}}";
    first = false;
  }
  std::cout << "\n  ],\n  \"backends\": [";
  first = true;
  for (const auto& r : vnn::backend_report()) {
    std::cout << (first ? "\n" : ",\n") << "    {\"backend\": " << q(r.backend) << ", \"library\": " << q(r.library)
              << ", \"loaded\": " << (r.loaded ? "true" : "false") << ", \"status\": " << q(r.status)
              << ", \"devices\": " << r.device_count << ", \"detail\": " << q(r.detail)
              << ", \"description\": " << q(r.description) << "}";
    first = false;
  }
  std::cout << "\n  ]\n}\n";
}

void print_text(bool verbose) {
  const auto& devs = vnn::devices();
  if (devs.empty()) std::cout << "No devices found.\n";
  for (const auto& d : devs) {
    std::cout << d.device << ": " << d.name << " (" << vnn::name(d.type) << ", " << d.plugin << ", "
              << d.compute_units << (d.type == vnn::DeviceType::cpu && d.plugin == "openmp" ? " threads" : " compute units")
              << ", " << gib(d.total_memory) << ")\n";
    if (!verbose) continue;
    std::cout << "    vendor:        " << d.vendor << "\n"
              << "    driver:        " << d.driver_version << "\n";
    if (!d.arch.empty()) std::cout << "    arch:          " << d.arch << "\n";
    if (!d.pci_id.empty()) std::cout << "    pci id:        " << d.pci_id << "\n";
    if (!d.uuid.empty()) std::cout << "    uuid:          " << d.uuid << "\n";
    if (d.free_memory) std::cout << "    free memory:   " << gib(d.free_memory) << "\n";
    std::cout << "    host memory:   " << (d.host_accessible ? "shared with the host" : "separate (copies staged)") << "\n";
    for (auto& [k, v] : d.properties) std::cout << "    " << k << ": " << v << "\n";
    std::cout << "    plugin:        " << d.plugin_path << "\n";
  }
  if (!devs.empty()) std::cout << "Best device: " << vnn::best_device() << "\n";
  if (!verbose) return;
  std::cout << "\nBackends tried:\n";
  for (const auto& r : vnn::backend_report()) {
    std::cout << "  " << r.backend << ": " << r.status;
    if (r.loaded) std::cout << " (" << r.device_count << " device" << (r.device_count == 1 ? "" : "s") << ")";
    std::cout << "\n    library: " << r.library << "\n";
    if (!r.description.empty()) std::cout << "    built:   " << r.description << "\n";
    if (!r.detail.empty()) {
      std::string detail = r.detail;
      while (!detail.empty() && detail.back() == '\n') detail.pop_back();
      std::cout << "    reason:  " << detail << "\n";
    }
  }
  std::cout << "\nSearch path:\n";
  for (auto& p : vnn::backend_search_path()) std::cout << "  " << p << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool verbose = false, json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--verbose") || !std::strcmp(argv[i], "-v")) verbose = true;
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--tune")) {
      // Read by the OpenCL plugin when it reports its devices.
      setenv("VNN_OPENCL_TUNE", "1", 1);
      verbose = true;
    }
    else {
      std::cout << "usage: vnn-devices [--verbose] [--json] [--tune]\n"
                   "Lists the devices vnn finds. Environment: VNN_DEVICE, VNN_BACKENDS, VNN_BACKEND_PATH, VNN_STRICT.\n";
      return std::strcmp(argv[i], "--help") && std::strcmp(argv[i], "-h") ? 2 : 0;
    }
  }
  try {
    if (json) print_json();
    else print_text(verbose);
  } catch (const vnn::Error& e) {
    std::cerr << "vnn-devices: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
