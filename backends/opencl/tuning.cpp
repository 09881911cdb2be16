// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tuning.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops.hpp"
#include "program_cache.hpp"

namespace vnn_opencl {
namespace {

// Bump when the variants or the file layout change: old files are then
// simply not found (the version is part of the file name).
// 7: GEMM shapes kept per bucket (powers of two), defaults until tuned.
const std::string kTuneVersion = "vnn-opencl-tuning 7";

// The notes of a tuning that measured nothing (defaults()).
const std::string kDefaultNotes = "defaults, not measured";

// Tuned 1-D work-group sizes by device index (0: none yet), for launch().
constexpr int kMaxLaunchDevices = 64;
std::atomic<size_t> g_launch_local[kMaxLaunchDevices];

struct State {
  std::mutex mutex;  // held over a whole tuning run: concurrent first uses wait for it
  std::unordered_map<const Device*, Tuning> done;
  // Work (floating-point operations) each untuned GEMM bucket or choice
  // key has run on its default so far, by device and key.
  std::unordered_map<const Device*, std::unordered_map<std::string, double>> seen;
};

State& state() {
  static State* s = new State;  // never destroyed, as the kernel cache
  return *s;
}

std::filesystem::path tuning_file(const Device& d) {
  std::filesystem::path dir = cache_dir();
  if (dir.empty()) return {};
  return dir / ("tune-" + device_hash(d, {&kTuneVersion}) + ".txt");
}

std::string hex64(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string body_text(const Device& d, const Tuning& t, const std::string& notes) {
  std::string s = kTuneVersion + "\ndevice=" + d.name + "\ndriver=" + d.driver_version + "\ngemm_variant=" +
                  std::to_string(t.gemm_variant) + " " + (t.gemm_variant >= 0 ? gemm_variant_name(t.gemm_variant) : "simple") +
                  "\nclass_path=";
  for (int c = 0; c < 3; ++c) s += std::string(c ? " " : "") + std::to_string(t.class_path[c]);
  s += "\ngflops=";
  char buf[32];
  for (int v = 0; v < kNumGemmVariants; ++v) {
    std::snprintf(buf, sizeof buf, "%s%.4g", v ? " " : "", t.gflops[v]);
    s += buf;
  }
  s += "\nlaunch_local=" + std::to_string(t.launch_local) + "\nnotes=" + notes + "\n";
  for (const auto& [key, path] : t.shapes) s += "shape=" + key + " " + std::to_string(path) + "\n";
  for (const auto& [key, index] : t.choices) s += "choice=" + key + " " + std::to_string(index) + "\n";
  return s;
}

std::string shape_key(int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  return std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k) + " " + (ta ? "1" : "0") + " " +
         (tb ? "1" : "0");
}

// The bucket of a GEMM size: the power of two at or below it (0 stays 0).
int64_t bucket(int64_t v) {
  int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return v > 0 ? p : 0;
}

// Work an untuned key runs on its default before it is timed: VNN_OPENCL_TUNE_AFTER
// GFLOP (0: at its first use), else 64 GFLOP (about a second or two of a
// 2-core CPU device; a GPU's at once).
double tune_after() {
  static const double flops = [] {
    const char* v = std::getenv("VNN_OPENCL_TUNE_AFTER");
    char* end = nullptr;
    const double g = v && *v ? std::strtod(v, &end) : -1;
    return (end && *end == 0 && g >= 0 ? g : 64.0) * 1e9;
  }();
  return flops;
}

// Adds `work` to key's count; true once it reaches tune_after() (the
// caller holds state().mutex).
bool due(const Device& d, const std::string& key, double work) {
  double& seen = state().seen[&d][key];
  seen += work;
  return seen >= tune_after();
}

// A path the tuning may store: CLBlast, vnn's tiled GEMM, the long-k kernel.
bool stored_path(int p) { return p == kGemmClblast || p == kGemmTiled || p == kGemmLongk || p == kGemmWiden; }

const char* path_name(int p) {
  return p == kGemmClblast  ? "clblast"
         : p == kGemmTiled  ? "tiled"
         : p == kGemmLongk  ? "longk"
         : p == kGemmWiden  ? "widen"
                            : "simple";
}

// Parses a tuning file; false with *why set when it is unusable.
bool parse(const Device& d, const std::string& text, Tuning* t, std::string* why) {
  const size_t at = text.rfind("check=");
  if (at == std::string::npos || at == 0 || text[at - 1] != '\n') return *why = "no checksum line", false;
  const std::string body = text.substr(0, at);
  std::string check = text.substr(at + 6);
  while (!check.empty() && (check.back() == '\n' || check.back() == '\r')) check.pop_back();
  if (check != hex64(fnv64(body.data(), body.size()))) return *why = "checksum mismatch", false;
  std::istringstream in(body);
  std::string line;
  bool have_variant = false, have_class = false, have_gflops = false;
  if (!std::getline(in, line) || line != kTuneVersion) return *why = "bad header", false;
  while (std::getline(in, line)) {
    if (line.rfind("device=", 0) == 0 && line.substr(7) != d.name) return *why = "made for another device", false;
    if (line.rfind("notes=", 0) == 0) t->notes = line.substr(6);
    if (line.rfind("launch_local=", 0) == 0) {
      unsigned long long v = 0;
      char extra = 0;
      if (std::sscanf(line.c_str() + 13, "%llu%c", &v, &extra) != 1 || v > d.max_work_group_size)
        return *why = "bad launch_local line", false;
      t->launch_local = size_t(v);
    }
    if (line.rfind("gemm_variant=", 0) == 0) {
      int v = -2;
      char name[64] = {0};
      if (std::sscanf(line.c_str() + 13, "%d %63s", &v, name) != 2 || v < -1 || v >= kNumGemmVariants ||
          (v >= 0 && (gemm_variant_name(v) != name || !gemm_variant_fits(d, v, VNN_FLOAT32))))
        return *why = "bad gemm_variant line", false;
      t->gemm_variant = v;
      have_variant = true;
    }
    if (line.rfind("class_path=", 0) == 0) {
      int f[3] = {-1, -1, -1};
      if (std::sscanf(line.c_str() + 11, "%d %d %d", &f[0], &f[1], &f[2]) != 3)
        return *why = "bad class_path line", false;
      for (int c = 0; c < 3; ++c) {
        if (!stored_path(f[c])) return *why = "bad class_path line", false;
        t->class_path[c] = f[c];
      }
      have_class = true;
    }
    if (line.rfind("shape=", 0) == 0) {
      long long m = -1, n = -1, k = -1;
      int ta = -1, tb = -1, path = -1;
      if (std::sscanf(line.c_str() + 6, "%lld %lld %lld %d %d %d", &m, &n, &k, &ta, &tb, &path) != 6 || m < 0 ||
          n < 0 || k < 0 || (ta | tb) & ~1 || !stored_path(path))
        return *why = "bad shape line", false;
      t->shapes[shape_key(m, n, k, ta, tb)] = path;
    }
    if (line.rfind("choice=", 0) == 0) {
      char key[256] = {0};
      int index = -1;
      char extra = 0;
      if (std::sscanf(line.c_str() + 7, "%255s %d%c", key, &index, &extra) != 2 || index < 0 || index > 255)
        return *why = "bad choice line", false;
      t->choices[key] = index;
    }
    if (line.rfind("gflops=", 0) == 0) {
      std::istringstream nums(line.substr(7));
      for (int v = 0; v < kNumGemmVariants; ++v)
        if (!(nums >> t->gflops[v]) || !(t->gflops[v] >= 0) || t->gflops[v] > 1e7 ||
            (t->gflops[v] > 0 && !gemm_variant_fits(d, v, VNN_FLOAT32)))
          return *why = "bad gflops line", false;
      have_gflops = true;
    }
  }
  if (!have_variant || !have_class || !have_gflops) return *why = "missing lines", false;
  if (t->gemm_variant >= 0 && !(t->gflops[t->gemm_variant] > 0)) return *why = "gemm_variant without a rate", false;
  return true;
}

// Written to a unique temporary name and renamed: a concurrent reader
// (another process) sees the old file, no file or the complete new one.
vnn_tensor_desc matrix(cl_mem m, int64_t rows, int64_t cols) {
  vnn_tensor_desc t{};
  t.data = m;
  t.dtype = VNN_FLOAT32;
  t.ndim = 2;
  t.sizes[0] = rows;
  t.sizes[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

// Best-of-3 seconds of one float32 m x n x k MATMUL through run() with the
// path forced; negative when the path failed (e.g. a variant the compiled
// kernel does not allow).
struct Bench {
  static constexpr size_t kFloats = size_t(4) << 20;  // per buffer: every tuning shape fits
  Device& d;
  cl_command_queue q = nullptr;
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  explicit Bench(Device& dev) : d(dev) {
    cl_int err = CL_SUCCESS;
    q = clCreateCommandQueue(d.context, d.id, 0, &err);
    const size_t bytes = kFloats * sizeof(float);
    const float one = 1.0f;
    for (cl_mem* m : {&a, &b, &c}) {
      *m = clCreateBuffer(d.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
      if (*m && q) clEnqueueFillBuffer(q, *m, &one, sizeof one, 0, bytes, 0, nullptr, nullptr);
    }
    if (q) clFinish(q);
  }
  ~Bench() {
    for (cl_mem m : {a, b, c})
      if (m) clReleaseMemObject(m);
    if (q) clReleaseCommandQueue(q);
  }
  bool ok() const { return q && a && b && c; }
  // ta / tb: that operand is a transposed view, as conv2d's gradients pass them.
  double time(int path, int variant, int64_t m, int64_t n, int64_t k, bool ta = false, bool tb = false,
              int timed = 3) {
    vnn_tensor_desc in[2] = {matrix(a, m, k), matrix(b, k, n)};
    if (ta) in[0].strides[0] = 1, in[0].strides[1] = m;
    if (tb) in[1].strides[0] = 1, in[1].strides[1] = k;
    vnn_tensor_desc out = matrix(c, m, n);
    double scalars[2] = {1.0, 0.0};
    vnn_op op{};
    op.struct_size = sizeof op;
    op.kind = VNN_OP_MATMUL;
    op.num_inputs = 2;
    op.num_outputs = 1;
    op.num_scalars = 2;
    op.inputs = in;
    op.outputs = &out;
    op.scalars = scalars;
    op.queue = q;
    GemmForce saved = gemm_force();
    gemm_force() = {path, variant};
    double best = -1;
    for (int rep = 0; rep <= timed; ++rep) {  // rep 0 warms up (and compiles)
      auto t0 = std::chrono::steady_clock::now();
      if (run(d.index, &op) != VNN_STATUS_OK || clFinish(q) != CL_SUCCESS) {
        best = -1;
        break;
      }
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (rep > 0 && (best < 0 || s < best)) best = s;
    }
    gemm_force() = saved;
    return best;
  }
};

// The fastest of the paths that can take an m x n x k float32 problem of
// class `shape`: vnn's tiled GEMM (its tuned variant), the long-k kernel
// for long_k, the wide-n kernel (b n-contiguous, or copied so: tb), CLBlast
// when built with it; the timings into note.
int fastest_path(Bench& bench, const double* gflops, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                 GemmShape shape, int timed, char* note, size_t note_size) {
  *note = 0;
  bool clblast = false;
#ifdef VNN_OPENCL_HAVE_CLBLAST
  clblast = true;
#endif
  const bool longk = shape == GemmShape::long_k;
  const int v = pick_gemm_variant(gflops, m, n, k);
  const double tv = bench.time(v >= 0 ? kGemmTiled : kGemmSimple, v, m, n, k, ta, tb, timed);
  const double tl = longk ? bench.time(kGemmLongk, -1, m, n, k, ta, tb, timed) : -1;
  const double tw = bench.time(kGemmWiden, -1, m, n, k, ta, tb, timed);
  const double tc = clblast ? bench.time(kGemmClblast, -1, m, n, k, ta, tb, timed) : -1;
  int best = kGemmTiled;
  double best_t = tv;
  for (auto [path, t] : {std::pair<int, double>{kGemmLongk, tl}, {kGemmWiden, tw}, {kGemmClblast, tc}})
    if (t > 0 && (best_t <= 0 || t < best_t)) best = path, best_t = t;
  std::snprintf(note, note_size, " tiled %.3gs longk %.3gs widen %.3gs clblast %.3gs: %s", tv, tl, tw, tc,
                path_name(best));
  return best;
}

// Best-of-3 seconds of a 1M-element float32 add through run() with the
// 1-D work-group size forced to `local`; negative when it failed.
double time_add(Device& d, Bench& bench, size_t local) {
  const int64_t n = int64_t(1) << 20;
  vnn_tensor_desc in[2] = {matrix(bench.a, 1, n), matrix(bench.b, 1, n)};
  vnn_tensor_desc out = matrix(bench.c, 1, n);
  const int64_t fn = VNN_BINARY_ADD;
  double alpha = 1.0;
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = VNN_OP_BINARY;
  op.num_inputs = 2;
  op.num_outputs = 1;
  op.num_ints = 1;
  op.num_scalars = 1;
  op.inputs = in;
  op.outputs = &out;
  op.ints = &fn;
  op.scalars = &alpha;
  op.queue = bench.q;
  const size_t saved = launch_local_force();
  launch_local_force() = local;
  double best = -1;
  for (int rep = 0; rep <= 3; ++rep) {  // rep 0 warms up
    auto t0 = std::chrono::steady_clock::now();
    if (run(d.index, &op) != VNN_STATUS_OK || clFinish(bench.q) != CL_SUCCESS) {
      best = -1;
      break;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0 && (best < 0 || s < best)) best = s;
  }
  launch_local_force() = saved;
  return best;
}

Tuning measure(Device& d, std::string* notes) {
  Tuning t;
  t.source = "tuned";
  Bench bench(d);
  if (!bench.ok()) {
    t.source = "defaults (no buffers for the tuning run)";
    if (gemm_variant_fits(d, 0, VNN_FLOAT32)) t.gemm_variant = 0, t.gflops[0] = 1;
    return t;
  }
  const int64_t sq = (d.cl_type & CL_DEVICE_TYPE_GPU) ? 512 : 256;
  // The 1-D kernels' work-group size: powers of two from 32 to 512 that
  // the device allows, on one elementwise add.
  double best_add = -1;
  for (size_t local = 32; local <= 512 && local <= d.max_work_group_size && local <= d.max_item_sizes[0];
       local *= 2) {
    const double s = time_add(d, bench, local);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%sadd/%zu %.3gs", notes->empty() ? "" : ", ", local, s);
    *notes += buf;
    if (s > 0 && (best_add < 0 || s < best_add)) best_add = s, t.launch_local = local;
  }
  double best = -1;
  for (int v = 0; v < kNumGemmVariants; ++v) {
    double s = gemm_variant_fits(d, v, VNN_FLOAT32) ? bench.time(3, v, sq, sq, sq) : -1;
    t.gflops[v] = s > 0 ? 2.0 * double(sq * sq * sq) / s * 1e-9 : 0.0;
    if (s > 0 && (best < 0 || s < best)) {
      best = s;
      t.gemm_variant = v;
    }
  }
  // One shape per class, laid out as conv2d's GEMMs are: vnn's pick for it
  // against CLBlast and (long_k) the long-k kernel.
  struct Rep {
    int64_t m, n, k;
    bool ta, tb;
  };
  const Rep reps[3] = {{sq, sq, sq, false, false}, {64, 288, 4096, false, true}, {288, 4096, 64, true, false}};
  char buf[128];
  for (int c = 0; c < 3; ++c) {
    const Rep& r = reps[c];
    t.class_path[c] = fastest_path(bench, t.gflops, r.m, r.n, r.k, r.ta, r.tb, static_cast<GemmShape>(c), 3, buf,
                                   sizeof buf);
    if (*buf) *notes += std::string(notes->empty() ? "" : ", ") + "class" + std::to_string(c) + buf;
  }
  return t;
}

// What runs before anything was measured: the device type's usual
// winners (on CPU devices vnn_gemm_widen for every class and the 8x8-output
// tiles, measured so on PoCL; on GPUs the 16x16-item tiles, the long-k
// kernel for long k), the 1-D work-group size left to launch().
Tuning defaults(const Device& d) {
  Tuning t;
  t.source = "defaults";
  t.notes = kDefaultNotes;
  const bool gpu = (d.cl_type & CL_DEVICE_TYPE_GPU) != 0;
  for (int v : {gpu ? 1 : 2, 0, 4})
    if (t.gemm_variant < 0 && gemm_variant_fits(d, v, VNN_FLOAT32)) t.gemm_variant = v, t.gflops[v] = 1;
  const int cpu_path = kGemmWiden;
  t.class_path[0] = gpu ? kGemmTiled : cpu_path;
  t.class_path[1] = gpu ? kGemmLongk : cpu_path;
  t.class_path[2] = gpu ? kGemmTiled : cpu_path;
  return t;
}

void store(Device& d, Tuning& t) {
  std::filesystem::path path = tuning_file(d);
  t.path = path.string();
  if (path.empty()) return;
  std::string body = body_text(d, t, t.notes);
  if (!write_atomic(path, body + "check=" + hex64(fnv64(body.data(), body.size())) + "\n"))
    std::fprintf(stderr, "vnn-opencl: warning: could not write the tuning cache %s\n", path.string().c_str());
}

// The device's timing run, stored with the shapes and choices of `kept`.
Tuning tune_and_store(Device& d, const Tuning& kept) {
  ColdStats& stats = cold_stats();
  ColdTimer timer(stats.tunings, stats.tuning_ns);
  std::string notes;
  Tuning t = measure(d, &notes);
  t.notes = notes;
  t.shapes = kept.shapes;
  t.choices = kept.choices;
  store(d, t);
  log_line(d.label + " tuned the device (" + std::to_string(timer.seconds()) + " s): " + notes);
  return t;
}

Tuning load_or_tune(Device& d) {
  std::filesystem::path path = tuning_file(d);
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Tuning t;
      std::string why;
      if (parse(d, text, &t, &why)) {
        t.source = t.notes == kDefaultNotes ? "defaults" : "cache";
        t.path = path.string();
        if (t.source == "cache" || tune_after() > 0) return t;
        // VNN_OPENCL_TUNE_AFTER=0 on a file of defaults: the device's
        // timing run now, keeping the shapes and choices already measured.
        return tune_and_store(d, t);
      }
      std::fprintf(stderr, "vnn-opencl: warning: ignoring the corrupt tuning cache %s (%s); tuning %s again\n",
                   path.string().c_str(), why.c_str(), d.label.c_str());
    }
  }
  if (tune_after() > 0) {  // measured later, by the keys that run long enough
    Tuning t = defaults(d);
    store(d, t);  // a file for `vnn-devices` to show, rewritten as keys are tuned
    return t;
  }
  return tune_and_store(d, Tuning());
}

}  // namespace

size_t& launch_local_force() {
  thread_local size_t local = 0;
  return local;
}

size_t launch_local_for(int32_t index) {
  if (size_t f = launch_local_force()) return f;
  return index >= 0 && index < kMaxLaunchDevices ? g_launch_local[index].load(std::memory_order_relaxed) : 0;
}

GemmForce& gemm_force() {
  thread_local GemmForce f;
  return f;
}

namespace {

// The device's tuning, tuned or read on first use; the caller holds
// state().mutex.
Tuning& ensure_locked(Device& d) {
  State& s = state();
  auto it = s.done.find(&d);
  if (it != s.done.end()) return it->second;
  const char* env = std::getenv("VNN_OPENCL_TUNE");
  Tuning t = env && std::strcmp(env, "1") == 0 ? tune_and_store(d, Tuning()) : load_or_tune(d);
  if (d.index >= 0 && d.index < kMaxLaunchDevices)
    g_launch_local[d.index].store(t.launch_local, std::memory_order_relaxed);
  return s.done[&d] = t;
}

}  // namespace

Tuning device_tuning(Device& d) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return ensure_locked(d);
}

TunedRates tuned_rates(Device& d) {
  std::lock_guard<std::mutex> lock(state().mutex);
  const Tuning& t = ensure_locked(d);
  TunedRates r;
  r.gemm_variant = t.gemm_variant;
  for (int v = 0; v < kNumGemmVariants; ++v) r.gflops[v] = t.gflops[v];
  for (int c = 0; c < 3; ++c) r.class_path[c] = t.class_path[c];
  return r;
}

int shape_gemm_path(Device& d, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  const std::string key = shape_key(bucket(m), bucket(n), bucket(k), ta, tb);
  std::lock_guard<std::mutex> lock(state().mutex);
  Tuning& held = ensure_locked(d);
  const GemmShape shape = classify_gemm(m, n, k);
  const int by_class = held.class_path[static_cast<int>(shape)];
  auto it = held.shapes.find(key);
  if (it != held.shapes.end()) return it->second;
  if (!due(d, key, 2.0 * double(m) * double(n) * double(k))) return by_class;
  // Timing costs a warm-up and two timed runs per path: only for shapes
  // that fit the scratch buffers and take under ~4 GFLOP, at most 256 kept.
  const int64_t cap = int64_t(Bench::kFloats);
  if (m * k > cap || k * n > cap || m * n > cap || 2.0 * double(m) * double(n) * double(k) > 4e9 ||
      held.shapes.size() >= 256)
    return by_class;
  clFinish(d.queue);  // queued work would run inside the measurement
  ColdStats& stats = cold_stats();
  ColdTimer timer(stats.tunings, stats.tuning_ns);
  Bench bench(d);
  int path = by_class;
  char note[128];
  if (bench.ok()) path = fastest_path(bench, held.gflops, m, n, k, ta, tb, shape, 2, note, sizeof note);
  held.shapes[key] = path;
  store(d, held);
  log_line(d.label + " tuned GEMM shape " + key + ": " + path_name(path) + " (" + std::to_string(timer.seconds()) +
           " s)");
  return path;
}

int tuned_choice(Device& d, const std::string& key, int count, double work,
                 const std::function<double(int)>& time) {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    const Tuning& held = ensure_locked(d);
    auto it = held.choices.find(key);
    // An index past this build's candidates (another version's file) is timed again.
    if (it != held.choices.end() && it->second < count) return it->second;
    if (!due(d, key, work)) return -1;
  }
  ColdStats& stats = cold_stats();
  ColdTimer timer(stats.tunings, stats.tuning_ns);
  int best = -1;
  double best_t = -1;
  for (int i = 0; i < count; ++i) {
    const double t = time(i);
    if (t > 0 && (best < 0 || t < best_t)) best = i, best_t = t;
  }
  log_line(d.label + " tuned " + key + ": candidate " + std::to_string(best) + " of " + std::to_string(count) + " (" +
           std::to_string(timer.seconds()) + " s)");
  if (best < 0) return -1;
  std::lock_guard<std::mutex> lock(state().mutex);
  Tuning& held = ensure_locked(d);
  auto [it, fresh] = held.choices.emplace(key, best);
  if (!fresh && it->second < count) return it->second;
  it->second = best;
  if (held.choices.size() <= 256) store(d, held);
  return best;
}

std::string tuning_report(const Device& d) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.done.find(&d);
  if (it == s.done.end()) return "gemm_tuning=pending\n";
  const Tuning& t = it->second;
  std::string r = "gemm_tuning=" + t.source + "\ngemm_variant=" +
                  (t.gemm_variant >= 0 ? gemm_variant_name(t.gemm_variant) : std::string("simple")) + "\n";
  r += std::string("gemm_class_path=square:") + path_name(t.class_path[0]) + ",long_k:" +
       path_name(t.class_path[1]) + ",short_k:" + path_name(t.class_path[2]) + "\n";
  r += "launch_local=" + std::to_string(t.launch_local) + "\n";
  if (!t.path.empty()) r += "tuning_cache=" + t.path + "\n";
  return r;
}

}  // namespace vnn_opencl
