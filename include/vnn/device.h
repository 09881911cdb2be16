// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

/// The kind of a device, as discovery classifies it (an OpenCL CPU device is `cpu`).
enum class DeviceType { cpu, gpu, accelerator };
/// The kind's name: "cpu", "gpu" or "accelerator".
const char* name(DeviceType t);

/// A device: a backend name and an index ("cuda:1"), cheap to copy and compare.
class Device {
 public:
  /// cpu:0.
  Device();                                // cpu:0
  /// Parses "backend[:index]" ("cpu", "cuda:1", "opencl:0"); DeviceNotFound when it cannot be parsed.
  Device(const char* spec);                // "cpu", "cuda:1", "opencl:0"
  /// Parses "backend[:index]" ("cpu", "cuda:1", "opencl:0"); DeviceNotFound when it cannot be parsed.
  Device(const std::string& spec);
  /// The device `index` of `backend`.
  Device(std::string backend, int index);

  /// The backend name: "cpu", "cuda", "hip", "opencl".
  const std::string& backend() const { return backend_; }  // "cpu", "cuda"...
  /// The device's index within its backend.
  int index() const { return index_; }
  /// Whether the backend is the native CPU (an OpenCL CPU device is not).
  bool is_cpu() const { return backend_ == "cpu"; }
  /// Whether discovery found this device and it is not a CPU (a GPU or an
  /// accelerator, whatever its backend). An OpenCL device that runs on the
  /// CPU (PoCL) is not one; a device that does not exist is not one either.
  bool is_accelerator() const;
  /// "backend:index", as the constructor parses it.
  std::string str() const;

  /// Same backend and index.
  bool operator==(const Device& o) const { return index_ == o.index_ && backend_ == o.backend_; }
  /// Different backend or index.
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  std::string backend_;
  int index_ = 0;
};
/// Prints d.str().
std::ostream& operator<<(std::ostream& os, const Device& d);

/// What discovery knows about one device: identity, memory, usability, raw properties.
struct DeviceInfo {
  /// The device as vnn names it.
  Device device;
  /// The plugin that drives it ("openmp", "opencl", "cuda", "hip").
  std::string plugin;          // "openmp", "cuda", ... (cpu devices: "openmp")
  /// Full path of that plugin's shared library.
  std::string plugin_path;
  /// Identity strings as the driver reports them (empty when unknown).
  ///@{
  std::string name, vendor, driver_version, pci_id, uuid, arch;
  ///@}
  /// GPU, accelerator or CPU.
  DeviceType type = DeviceType::cpu;
  /// Compute units (SMs, CUs or cores) as the driver reports them.
  int compute_units = 0;
  /// Total and free device memory in bytes when discovery ran (0 when unknown).
  ///@{
  uint64_t total_memory = 0, free_memory = 0;
  ///@}
  /// Whether the host can read the memory directly (CPU devices).
  bool host_accessible = false;
  /// False when the device was found but cannot be used; see unusable_reason.
  bool usable = true;
  /// Why the device cannot be used (empty when usable).
  std::string unusable_reason;
  /// Further backend-specific key/value properties, for vnn-devices.
  std::vector<std::pair<std::string, std::string>> properties;
};

/// What happened to each backend library discovery looked at.
struct BackendReport {
  /// The plugin name ("cuda"), or the file stem when the plugin is unknown.
  std::string backend;   // plugin name ("cuda"), or the file stem if unknown
  /// Full path of the plugin file.
  std::string library;   // full path of the plugin file
  /// Whether the entry point resolved and the ABI was accepted.
  bool loaded = false;   // entry point resolved, ABI accepted
  /// Number of devices the plugin reported.
  int device_count = 0;
  /// "ok", "no devices", "driver missing", "abi mismatch", "dlopen failed", ...
  std::string status;    // "ok", "no devices", "driver missing", "abi mismatch", "dlopen failed", ...
  /// The dlerror text or probe message behind the status.
  std::string detail;    // dlerror text, probe message, ...
  /// The plugin's own one-line description.
  std::string description;
};

/// Every usable device, best first.
const std::vector<DeviceInfo>& devices();
/// The device a program should run on: VNN_DEVICE if set (and found), else
/// the first of devices(), whose order is: GPUs, then accelerators, then the
/// native CPU (cpu:0), then OpenCL CPU devices; within one kind, the
/// backend's priority (cuda and hip before opencl), then more memory first. Throws
/// DeviceNotFound in strict mode when VNN_DEVICE names a missing device.
Device best_device();
/// The best device that is not a CPU (the first GPU or accelerator in that
/// order, of any backend), or nullopt: "an accelerator if there is one, else
/// the CPU" is best_accelerator().value_or(vnn::Device("cpu")).
std::optional<Device> best_accelerator();
/// Properties of one device; throws DeviceNotFound listing what exists.
const DeviceInfo& device_info(const Device& d);
/// Whether `d` was found by discovery and is usable.
bool is_available(const Device& d);
/// Every backend library found, with why it was used or skipped.
const std::vector<BackendReport>& backend_report();
/// Directories searched for plugins, in order.
std::vector<std::string> backend_search_path();

/// Turns strict mode on or off (as VNN_STRICT=1): silent fallbacks become errors.
void set_strict(bool strict);
/// Whether strict mode is on.
bool strict();

// Waits for all queued work on the device (or on every initialised device).
/// Waits for all queued work on `d` (copies and kernels on every stream).
void synchronize(const Device& d);
/// Waits for all queued work on every initialised device.
void synchronize();

}  // namespace vnn
