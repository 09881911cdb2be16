// Devices and run-time discovery of backends.
//
//   vnn::Device dev = vnn::best_device();      // see best_device() for the order
//   if (auto acc = vnn::best_accelerator()) ... // a GPU or accelerator, never a CPU
//   vnn::Device cpu("cpu"), gpu("cuda:1");
//   for (auto& d : vnn::devices()) std::cout << d.device << " " << d.name;
//
// Environment: VNN_DEVICE picks the device best_device() returns,
// VNN_BACKENDS is an allow-list ("cuda,cpu"), VNN_BACKEND_PATH adds plugin
// directories, VNN_STRICT=1 turns every silent fallback into an error.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace vnn {

enum class DeviceType { cpu, gpu, accelerator };
const char* name(DeviceType t);

class Device {
 public:
  Device();                                // cpu:0
  Device(const char* spec);                // "cpu", "cuda:1", "opencl:0"
  Device(const std::string& spec);
  Device(std::string backend, int index);

  const std::string& backend() const { return backend_; }  // "cpu", "cuda"...
  int index() const { return index_; }
  bool is_cpu() const { return backend_ == "cpu"; }
  // Whether discovery found this device and it is not a CPU (a GPU or an
  // accelerator, whatever its backend). An OpenCL device that runs on the
  // CPU (PoCL) is not one; a device that does not exist is not one either.
  bool is_accelerator() const;
  std::string str() const;

  bool operator==(const Device& o) const { return index_ == o.index_ && backend_ == o.backend_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  std::string backend_;
  int index_ = 0;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

struct DeviceInfo {
  Device device;
  std::string plugin;          // "openmp", "cuda", ... (cpu devices: "openmp")
  std::string plugin_path;
  std::string name, vendor, driver_version, pci_id, uuid, arch;
  DeviceType type = DeviceType::cpu;
  int compute_units = 0;
  uint64_t total_memory = 0, free_memory = 0;
  bool host_accessible = false;
  bool usable = true;
  std::string unusable_reason;
  std::vector<std::pair<std::string, std::string>> properties;
};

// What happened to each backend library discovery looked at.
struct BackendReport {
  std::string backend;   // plugin name ("cuda"), or the file stem if unknown
  std::string library;   // full path of the plugin file
  bool loaded = false;   // entry point resolved, ABI accepted
  int device_count = 0;
  std::string status;    // "ok", "no devices", "driver missing", "abi mismatch", "dlopen failed", ...
  std::string detail;    // dlerror text, probe message, ...
  std::string description;
};

// Every usable device, best first.
const std::vector<DeviceInfo>& devices();
// The device a program should run on: VNN_DEVICE if set (and found), else
// the first of devices(), whose order is: GPUs, then accelerators, then the
// native CPU (cpu:0), then OpenCL CPU devices; within one kind, the
// backend's priority (cuda and hip before opencl), then more memory first. Throws
// DeviceNotFound in strict mode when VNN_DEVICE names a missing device.
Device best_device();
// The best device that is not a CPU (the first GPU or accelerator in that
// order, of any backend), or nullopt: "an accelerator if there is one, else
// the CPU" is best_accelerator().value_or(vnn::Device("cpu")).
std::optional<Device> best_accelerator();
// Properties of one device; throws DeviceNotFound listing what exists.
const DeviceInfo& device_info(const Device& d);
bool is_available(const Device& d);
// Every backend library found, with why it was used or skipped.
const std::vector<BackendReport>& backend_report();
// Directories searched for plugins, in order.
std::vector<std::string> backend_search_path();

void set_strict(bool strict);
bool strict();

// Waits for all queued work on the device (or on every initialised device).
void synchronize(const Device& d);
void synchronize();

}  // namespace vnn
