// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "program_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "embedded_kernels.hpp"
#include "errors.hpp"
#include "sibling_source.hpp"

namespace vnn_opencl {
namespace {

// Bump when the file layout changes so old files are simply not found.
constexpr char kMagic[8] = {'V', 'N', 'N', 'C', 'L', 'B', '0', '1'};

bool log_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("VNN_OPENCL_LOG");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}


int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string seconds_text(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", double(ns) * 1e-9);
  return buf;
}

void print_stats_at_exit() { std::fprintf(stderr, "vnn-opencl: %s\n", cold_stats_text().c_str()); }

struct Fnv {
  uint64_t h;
  void add(const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  }
  void add(const std::string& s) { add(s.data(), s.size() + 1); }  // +1: keeps '\0' separator
};

uint64_t checksum(const void* data, size_t n) {
  Fnv f{0xcbf29ce484222325ull};
  f.add(data, n);
  return f.h;
}

}  // namespace

std::filesystem::path cache_dir() {
  if (const char* v = std::getenv("VNN_OPENCL_CACHE_DIR"); v && *v) return v;
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v)
    return std::filesystem::path(v) / "vnn" / "opencl";
  if (const char* v = std::getenv("HOME"); v && *v)
    return std::filesystem::path(v) / ".cache" / "vnn" / "opencl";
  return {};
}

// Binaries are only valid for the same device and driver, so both are part
// of the name; two differently seeded FNV-1a hashes make 128 bits.
std::string device_hash(const Device& d, std::initializer_list<const std::string*> extra) {
  char buf[40];
  uint64_t h[2];
  const uint64_t seeds[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  for (int i = 0; i < 2; ++i) {
    Fnv f{seeds[i]};
    for (const std::string* s : {&d.platform_name, &d.name, &d.driver_version, &d.opencl_version}) f.add(*s);
    for (const std::string* s : extra) f.add(*s);
    h[i] = f.h;
  }
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h[0]),
                static_cast<unsigned long long>(h[1]));
  return buf;
}

uint64_t fnv64(const void* data, size_t n) { return checksum(data, n); }

void log_line(const std::string& s) {
  if (log_enabled()) std::fprintf(stderr, "vnn-opencl: %s\n", s.c_str());
}

ColdStats& cold_stats() {
  static ColdStats* s = [] {
    const char* v = std::getenv("VNN_OPENCL_STATS");
    if (v && std::strcmp(v, "1") == 0) std::atexit(print_stats_at_exit);
    return new ColdStats;  // never destroyed: read at exit
  }();
  return *s;
}

std::string cold_stats_text() {
  const ColdStats& s = cold_stats();
  auto pair = [](const char* name, const std::atomic<int64_t>& n, const std::atomic<int64_t>& ns) {
    return std::string(name) + "=" + std::to_string(n.load()) + " (" + seconds_text(ns.load()) + ")";
  };
  return pair("program_builds", s.builds, s.build_ns) + ", " + pair("program_loads", s.loads, s.load_ns) + ", " +
         pair("first_launches", s.first_launches, s.first_launch_ns) + ", " +
         pair("tuning_runs", s.tunings, s.tuning_ns);
}

ColdTimer::ColdTimer(std::atomic<int64_t>& count, std::atomic<int64_t>& ns) : ns_(ns), start_(now_ns()) {
  count.fetch_add(1, std::memory_order_relaxed);
}
ColdTimer::~ColdTimer() { ns_.fetch_add(now_ns() - start_, std::memory_order_relaxed); }
double ColdTimer::seconds() const { return double(now_ns() - start_) * 1e-9; }

bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("VNN_OPENCL_VERBOSE");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

namespace {

std::string cache_file_name(const Device& d, const std::string& source, const std::string& options) {
  return device_hash(d, {&source, &options}) + ".bin";
}

std::string build_log(const Device& d, cl_program p) {
  size_t n = 0;
  if (clGetProgramBuildInfo(p, d.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS || !n)
    return {};
  std::string s(n, '\0');
  clGetProgramBuildInfo(p, d.id, CL_PROGRAM_BUILD_LOG, n, &s[0], nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

// The payload of a cache file, or empty when the file is missing, short,
// or fails its checksum (a truncated or corrupted file is never handed to
// the driver, which might crash on it).
std::vector<unsigned char> read_cache(const std::filesystem::path& path, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  const size_t header = sizeof kMagic + 2 * sizeof(uint64_t);
  uint64_t size = 0, sum = 0;
  if (file.size() < header || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) {
    *why = "bad header";
    return {};
  }
  std::memcpy(&size, file.data() + sizeof kMagic, sizeof size);
  std::memcpy(&sum, file.data() + sizeof kMagic + sizeof size, sizeof sum);
  if (size != file.size() - header || checksum(file.data() + header, size) != sum) {
    *why = "size or checksum mismatch";
    return {};
  }
  return std::vector<unsigned char>(file.begin() + header, file.end());
}

// The program binary behind its header (magic, size, checksum).
bool write_cache(const std::filesystem::path& path, const std::vector<unsigned char>& bin) {
  uint64_t size = bin.size(), sum = checksum(bin.data(), bin.size());
  std::string file(kMagic, sizeof kMagic);
  file.append(reinterpret_cast<const char*>(&size), sizeof size);
  file.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  file.append(reinterpret_cast<const char*>(bin.data()), bin.size());
  return write_atomic(path, file);
}

std::vector<unsigned char> program_binary(cl_program p) {
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS ||
      size == 0)
    return {};
  std::vector<unsigned char> bin(size);
  unsigned char* ptr = bin.data();
  if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return {};
  return bin;
}

cl_program load_binary(const Device& d, const std::vector<unsigned char>& bin,
                       const std::string& options, std::string* why) {
  const unsigned char* ptr = bin.data();
  size_t size = bin.size();
  cl_int bin_status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program p = clCreateProgramWithBinary(d.context, 1, &d.id, &size, &ptr, &bin_status, &err);
  if (err != CL_SUCCESS || bin_status != CL_SUCCESS) {
    *why = std::string("clCreateProgramWithBinary: ") +
           cl_error_name(err != CL_SUCCESS ? err : bin_status);
    if (p) clReleaseProgram(p);
    return nullptr;
  }
  err = clBuildProgram(p, 1, &d.id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    *why = std::string("clBuildProgram: ") + cl_error_name(err);
    clReleaseProgram(p);
    return nullptr;
  }
  return p;
}

namespace {

// Whether vnn keeps program binaries of d in its disk cache. Not on PoCL
// with its own kernel cache on (POCL_KERNEL_CACHE, the default): fetching
// a binary makes PoCL compile every kernel of the program, 70% of a cold
// build (20 of 29 s for a nanoGPT's 52 programs), while a rebuild from
// source that hits PoCL's cache costs 0.02 s. VNN_OPENCL_BINARY_CACHE=1 /
// =0 overrides.
bool binary_cache(const Device& d) {
  if (const char* v = std::getenv("VNN_OPENCL_BINARY_CACHE"); v && *v) return std::strcmp(v, "0") != 0;
  if (d.platform_name.find("Portable Computing Language") == std::string::npos) return true;
  const char* pocl_cache = std::getenv("POCL_KERNEL_CACHE");
  return pocl_cache && std::strcmp(pocl_cache, "0") == 0;  // PoCL's own cache off: keep vnn's
}

}  // namespace

vnn_status build_program(Device& d, const char* file, const std::string& options,
                         const std::vector<std::string>& variants, cl_program* out) {
  const char* prelude = embedded_kernel_source("abi_prelude");  // generated from backend_abi.h
  const char* common = embedded_kernel_source("common");
  const char* body = embedded_kernel_source(file);
  if (!prelude || !common || !body)
    return fail(VNN_STATUS_INTERNAL, d.label, ": kernels/", file, ".cl is not embedded in the plugin");
  std::string source = std::string(prelude) + "\n" + common + "\n";
  std::string what = d.label + " program " + file + ".cl [" + options + "]";
  if (variants.size() > 1) {
    source += sibling_source(source, body, options, variants);
    what += " with " + std::to_string(variants.size()) + " variants";
  } else {
    source += body;
  }
  std::filesystem::path dir = binary_cache(d) ? cache_dir() : std::filesystem::path();
  std::filesystem::path path = dir.empty() ? dir : dir / cache_file_name(d, source, options);

  ColdStats& stats = cold_stats();
  if (!path.empty()) {
    std::string why;
    ColdTimer timer(stats.loads, stats.load_ns);
    std::vector<unsigned char> bin = read_cache(path, &why);
    if (!bin.empty()) {
      if (cl_program p = load_binary(d, bin, options, &why)) {
        log_line(what + ": disk cache hit " + path.string() + " (" + std::to_string(timer.seconds()) + " s)");
        *out = p;
        return VNN_STATUS_OK;
      }
    }
    stats.loads.fetch_sub(1, std::memory_order_relaxed);  // a miss is no load
    if (!why.empty()) log_line(what + ": ignoring unusable cache file " + path.string() + " (" + why + ")");
  }

  ColdTimer timer(stats.builds, stats.build_ns);
  const char* src = source.c_str();
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(d.context, 1, &src, nullptr, &err);
  if (err != CL_SUCCESS) return fail_cl(err, what, ": clCreateProgramWithSource failed");
  err = clBuildProgram(p, 1, &d.id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    std::string log = build_log(d, p);
    clReleaseProgram(p);
    if (log.size() > 8000) log = log.substr(0, 8000) + "\n[build log truncated]";
    return fail(VNN_STATUS_DEVICE_ERROR, what, " (", d.name, "): build failed: ", cl_error_name(err), "\n", log);
  }
  if (verbose()) {
    const std::string log = build_log(d, p);
    if (log.find_first_not_of(" \t\r\n") != std::string::npos)
      std::fprintf(stderr, "vnn-opencl: %s: build log:\n%s\n", what.c_str(), log.c_str());
  }
  const std::string took = " (" + std::to_string(timer.seconds()) + " s)";
  if (!path.empty()) {
    std::vector<unsigned char> bin = program_binary(p);
    bool ok = !bin.empty() && write_cache(path, bin);
    log_line(what + (ok ? ": built from source, cached in " : ": built from source, could not cache in ") +
             path.string() + took);
  } else {
    log_line(what + ": built from source (no binary cache: " +
             (binary_cache(d) ? "no cache directory" : "the driver caches its own") + ")" + took);
  }
  *out = p;
  return VNN_STATUS_OK;
}

// Programs by (device, file, options), shared by their kernels (one build
// serves vnn_im2col and vnn_col2im), and kernels by (program, name). A key
// is built once: a first use while another thread builds it waits for that
// build, while builds of other keys run in parallel (the lock is not held
// over a build). A failed build leaves no entry: the next use tries again.
struct Cache {
  std::mutex mutex;
  std::condition_variable built;
  std::unordered_map<std::string, cl_program> programs;
  std::unordered_map<std::string, Kernel*> kernels;
  std::unordered_set<std::string> pending;  // keys of both maps being built
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed, see device.cpp
  return *c;
}

// The entry of `key` in `done`, made by make() when absent (see Cache).
template <class T, class Make>
vnn_status once(std::unordered_map<std::string, T>& done, const std::string& key, T* out, Make make) {
  Cache& c = cache();
  {
    std::unique_lock<std::mutex> lock(c.mutex);
    for (;;) {
      auto it = done.find(key);
      if (it != done.end()) return *out = it->second, VNN_STATUS_OK;
      if (!c.pending.count(key)) break;
      c.built.wait(lock);
    }
    c.pending.insert(key);
  }
  T made{};
  const vnn_status st = make(&made);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.pending.erase(key);
    if (st == VNN_STATUS_OK) done.emplace(key, made);
  }
  c.built.notify_all();
  if (st == VNN_STATUS_OK) *out = made;
  return st;
}

}  // namespace

vnn_status get_kernel(Device& d, const char* file, const char* kernel_name,
                      const std::string& op_options, Kernel** out) {
  return get_kernel(d, file, kernel_name, op_options, Siblings{}, out);
}

vnn_status get_kernel(Device& d, const char* file, const char* kernel_name, const std::string& op_options,
                      const Siblings& siblings, Kernel** out) {
  std::string options = op_options;
  if (d.fp64) options += " -DHAS_FP64=1";
  // One element per work item (common.cl VNN_ITEMS) where the device wants
  // it and the file has no grid-stride loop of its own (conv.cl and
  // pooling.cl keep theirs, and with it launch()'s capped grid).
  const char* body = embedded_kernel_source(file);
  const bool covering = d.one_per_item && body && !std::strstr(body, "get_global_size");
  if (covering) options += " -DVNN_ONE_PER_ITEM=1";
  // Makes float division and sqrt match the host bit for bit.
  if (d.correctly_rounded_sqrt) options += " -cl-fp32-correctly-rounded-divide-sqrt";
  const bool bundled = siblings.variants.size() > 1 && siblings.index < siblings.variants.size();
  std::string program_key = d.label + '\n' + file + '\n' + options;
  if (bundled)
    for (const std::string& v : siblings.variants) program_key += '\n' + v;
  const std::string name = bundled ? sibling_kernel_name(kernel_name, siblings.index) : kernel_name;
  Cache& c = cache();
  return once(c.kernels, program_key + '\n' + name, out, [&](Kernel** made) {
    cl_program p = nullptr;
    if (vnn_status st = once(c.programs, program_key, &p, [&](cl_program* built) {
          return build_program(d, file, options, bundled ? siblings.variants : std::vector<std::string>{}, built);
        }))
      return st;
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, name.c_str(), &err);
    if (err != CL_SUCCESS)
      return fail_cl(err, d.label, ": clCreateKernel(", name, ") from kernels/", file, ".cl failed");
    Kernel* kern = new Kernel;
    kern->program = p;
    kern->kernel = k;
    kern->covering_grid = covering;
    kern->name = std::string(file) + ".cl:" + kernel_name + " [" + op_options +
                 (bundled ? " " + siblings.variants[siblings.index] : std::string()) + "]";
    size_t wg = 0;
    if (clGetKernelWorkGroupInfo(k, d.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr) == CL_SUCCESS &&
        wg > 0)
      kern->work_group_size = wg;
    *made = kern;
    return VNN_STATUS_OK;
  });
}

// Written to a unique temporary name and renamed, so a concurrent reader
// (another process) sees either no file or a complete one.
bool write_atomic(const std::filesystem::path& path, const std::string& bytes) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(bytes.data(), std::streamsize(bytes.size())) || !out.flush()) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace vnn_opencl
