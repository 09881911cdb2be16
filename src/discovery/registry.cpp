// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The device registry: loads plugins once, probes them, ranks the devices
// and owns one DeviceContext per usable device.
#include <algorithm>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <mutex>
#include <sstream>

#include "discovery/plugin_loader.hpp"
#include "runtime/device_context.hpp"
#include "vnn/detail/message.h"
#include "vnn/device.h"
#include "vnn/error.h"

namespace vnn {
namespace detail {
namespace {

// The device family a plugin's devices belong to.
std::string family_of(const std::string& plugin) { return plugin == "openmp" ? "cpu" : plugin; }

std::vector<std::string> split_list(const char* s) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = s; p && *p; ++p) {
    if (*p == ',' || *p == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_properties(const char* text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

// Higher is better: GPUs, then accelerators, then the native CPU backend,
// then OpenCL CPU devices (slower than native code on the same cores).
int rank_of(const DeviceInfo& d) {
  switch (d.type) {
    case DeviceType::gpu: return 3;
    case DeviceType::accelerator: return 2;
    case DeviceType::cpu: return d.plugin == "openmp" ? 1 : 0;
  }
  return 0;
}

// libgomp's idle threads spin for ~300k iterations before sleeping. With
// vnn's own threads beside them (DataLoader workers, OpenBLAS, a second
// process under ctest -j) that spinning steals the cores the work needs:
// the CNN training step ran 4.5x slower on 2 busy cores. A short spin keeps
// back-to-back kernels fast and yields the core soon after. libgomp reads
// this when it loads, i.e. when the CPU plugin is opened below; a user's
// OMP_WAIT_POLICY or GOMP_SPINCOUNT always wins.
void tame_openmp_spinning() {
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", "1000", 0);
}

struct Registry {
  std::vector<BackendReport> report;
  std::deque<DeviceContext> contexts;  // deque: stable addresses
  std::vector<DeviceInfo> ranked;
  bool strict = false;

  Registry() {
    tame_openmp_spinning();
    const char* s = std::getenv("VNN_STRICT");
    strict = s && *s && std::string(s) != "0";
    discover();
  }

  static bool allowed(const std::string& plugin) {
    static const std::vector<std::string> allow = split_list(std::getenv("VNN_BACKENDS"));
    if (allow.empty()) return true;
    for (auto& a : allow)
      if (a == plugin || a == family_of(plugin)) return true;
    return false;
  }

  void discover() {
    auto plugins = load_plugins(report, &Registry::allowed);
    for (auto& p : plugins) {
      auto it = std::find_if(report.begin(), report.end(),
                             [&](const BackendReport& r) { return r.library == p.path; });
      probe(p, *it);
    }
    std::vector<const DeviceContext*> order;
    for (auto& c : contexts) order.push_back(&c);
    std::stable_sort(order.begin(), order.end(), [](const DeviceContext* a, const DeviceContext* b) {
      int ra = rank_of(a->info), rb = rank_of(b->info);
      if (ra != rb) return ra > rb;
      if (a->backend->priority != b->backend->priority) return a->backend->priority > b->backend->priority;
      return a->info.total_memory > b->info.total_memory;
    });
    for (auto* c : order) ranked.push_back(c->info);
  }

  void probe(const LoadedPlugin& p, BackendReport& r) {
    const vnn_backend* t = p.table;
    int32_t count = 0;
    vnn_status s = t->probe(&count);
    if (s != VNN_STATUS_OK || count <= 0) {
      r.status = s == VNN_STATUS_DRIVER_MISSING ? "driver missing"
               : (s == VNN_STATUS_NO_DEVICE || (s == VNN_STATUS_OK && count <= 0)) ? "no devices"
               : "probe failed";
      r.detail = t->last_error();
      return;
    }
    r.status = "ok";
    for (int32_t i = 0; i < count; ++i) {
      vnn_device_info raw{};
      raw.struct_size = sizeof(raw);
      if (t->device_info(i, &raw) != VNN_STATUS_OK) {
        r.detail += "device " + std::to_string(i) + ": " + t->last_error() + "\n";
        continue;
      }
      DeviceInfo d;
      d.device = Device(family_of(t->name), i);
      d.plugin = t->name;
      d.plugin_path = p.path;
      d.name = raw.name;
      d.vendor = raw.vendor;
      d.driver_version = raw.driver_version;
      d.pci_id = raw.pci_id;
      d.uuid = raw.uuid;
      d.arch = raw.arch;
      d.type = raw.type == VNN_DEVICE_GPU ? DeviceType::gpu
             : raw.type == VNN_DEVICE_ACCELERATOR ? DeviceType::accelerator : DeviceType::cpu;
      d.compute_units = raw.compute_units;
      d.total_memory = raw.total_memory;
      d.free_memory = raw.free_memory;
      d.host_accessible = raw.host_accessible != 0;
      d.usable = raw.usable != 0;
      d.unusable_reason = raw.unusable_reason;
      d.properties = parse_properties(raw.properties);
      if (!d.usable) {
        r.detail += d.device.str() + " (" + d.name + ") skipped: " + d.unusable_reason + "\n";
        continue;
      }
      ++r.device_count;
      DeviceContext& c = contexts.emplace_back();
      c.info = d;
      c.backend = t;
      c.plugin_index = i;
      c.host_accessible = d.host_accessible;
      DeviceContext* cp = &c;
      c.allocator.set_backend(
          [cp](size_t bytes) {
            void* h = nullptr;
            cp->ensure_initialized();
            vnn_status st = cp->backend->alloc(cp->plugin_index, bytes, &h);
            if (st != VNN_STATUS_OK) {
              QuietOutOfMemory quiet;  // the caching allocator retries, and reports what still fails
              cp->throw_status(st, "alloc");
            }
            return h;
          },
          [cp](void* h) { cp->backend->free(cp->plugin_index, h); });
      c.allocator.set_device(d.device);  // VNN_MEMORY_LIMIT's entry and OutOfMemory texts
    }
    if (r.device_count == 0) r.status = "no usable devices";
  }

  std::string available_list() const {
    std::string s;
    for (auto& d : ranked) s += (s.empty() ? "" : ", ") + d.device.str();
    return s.empty() ? "none (run vnn-devices --verbose to see why)" : s;
  }

  DeviceContext* find(const Device& d) {
    for (auto& c : contexts)
      if (c.info.device == d) return &c;
    return nullptr;
  }
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: plugins outlive statics
  return *r;
}

}  // namespace

DeviceContext& context(const Device& d) {
  Registry& r = registry();
  if (DeviceContext* c = r.find(d)) return *c;
  VNN_THROW(DeviceNotFound, "device ", d.str(), " is not available; available devices: ", r.available_list());
}

void for_each_initialized(void (*fn)(DeviceContext&)) {
  for (auto& c : registry().contexts) fn(c);
}

namespace {

// vnn_core_allocator's callbacks: the device's CachingAllocator, with its
// failures (OutOfMemory after emptying the cache, or anything else) as NULL,
// never an exception across the C boundary.
void* core_alloc(void* ctx, size_t bytes) noexcept {
  try {
    size_t rounded = 0;
    QuietOutOfMemory quiet;  // the plugin reports a failure it cannot recover from itself
    return static_cast<DeviceContext*>(ctx)->allocator.allocate(bytes, &rounded);
  } catch (...) {
    return nullptr;
  }
}

void core_free(void* ctx, void* block, size_t bytes) noexcept {
  try {
    static_cast<DeviceContext*>(ctx)->allocator.release(block, CachingAllocator::round_size(bytes));
  } catch (...) {
    // release only takes a lock and updates maps; nothing to report here
  }
}

}  // namespace

void DeviceContext::initialize() {
  std::lock_guard<std::mutex> lock(init_mutex_);
  if (initialized_.load(std::memory_order_relaxed)) return;
  if (backend->init_device) check(backend->init_device(plugin_index), "init_device");
  // Older plugins lack the entry (VNN_BACKEND_HAS): they keep their own memory.
  if (VNN_BACKEND_HAS(backend, set_core_allocator)) {
    core_allocator_ = vnn_core_allocator{sizeof(vnn_core_allocator), this, &core_alloc, &core_free};
    backend->set_core_allocator(plugin_index, &core_allocator_);
  }
  initialized_.store(true, std::memory_order_release);
}

void DeviceContext::synchronize() {
  if (!initialized_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard<std::mutex> lock(streams_mutex);
    for (void* q : stream_queues) check(backend->queue_synchronize(plugin_index, q), "synchronize (stream)");
  }
  check(backend->queue_synchronize(plugin_index, nullptr), "synchronize");
}

void DeviceContext::throw_status(vnn_status s, const char* what) const {
  std::string msg = std::string(what) + " on " + info.device.str() + " (" + backend->name +
                    " backend): " + backend->last_error();
  switch (s) {
    case VNN_STATUS_OUT_OF_MEMORY:
      notify_out_of_memory(msg);  // a process group aborts (src/distributed)
      VNN_THROW(OutOfMemory, msg);
    case VNN_STATUS_UNSUPPORTED:
      VNN_THROW(Unsupported, msg);
    case VNN_STATUS_INVALID_ARGUMENT:
      VNN_THROW(ValueError, msg);
    default:
      VNN_THROW(BackendError, msg);
  }
}

}  // namespace detail

const std::vector<DeviceInfo>& devices() { return detail::registry().ranked; }

const std::vector<BackendReport>& backend_report() { return detail::registry().report; }

std::vector<std::string> backend_search_path() { return detail::plugin_search_path(); }

void set_strict(bool s) { detail::registry().strict = s; }
bool strict() { return detail::registry().strict; }

const DeviceInfo& device_info(const Device& d) { return detail::context(d).info; }

bool is_available(const Device& d) { return detail::registry().find(d) != nullptr; }

bool Device::is_accelerator() const {
  if (is_cpu()) return false;
  const detail::DeviceContext* c = detail::registry().find(*this);
  return c && c->info.type != DeviceType::cpu;
}

std::optional<Device> best_accelerator() {
  for (auto& d : detail::registry().ranked)
    if (d.type != DeviceType::cpu) return d.device;
  return std::nullopt;
}

Device best_device() {
  auto& r = detail::registry();
  if (r.strict) {
    for (auto& b : r.report)
      if (!b.loaded && b.status != "disabled")
        VNN_THROW(PluginError, "best_device (strict mode): backend library ", b.library, " could not be used (",
                  b.status, ": ", b.detail, "); fix it, remove it, or unset VNN_STRICT");
  }
  if (const char* want = std::getenv("VNN_DEVICE"); want && *want) {
    Device d(want);
    if (r.find(d)) return d;
    std::string msg = "VNN_DEVICE=" + std::string(want) + " is not available; available devices: " +
                      r.available_list();
    VNN_CHECK(DeviceNotFound, !r.strict, "best_device (strict mode): ", msg);
    static std::once_flag warned;
    std::call_once(warned, [&] { std::cerr << "vnn: warning: " << msg << "; using the best one\n"; });
  }
  VNN_CHECK(DeviceNotFound, !r.ranked.empty(), "best_device: no device found; backends tried: ", r.report.size(),
            " (run vnn-devices --verbose for the reasons)");
  return r.ranked.front().device;
}

void synchronize(const Device& d) { detail::context(d).synchronize(); }

void synchronize() {
  detail::for_each_initialized([](detail::DeviceContext& c) { c.synchronize(); });
}

}  // namespace vnn
