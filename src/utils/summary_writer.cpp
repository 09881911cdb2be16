// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// TensorBoard event files written by hand: a few protobuf fields of
// tensorflow's Event / Summary / HistogramProto / TensorProto, each event
// framed as a TFRecord (length, masked CRC-32C of the length, payload,
// masked CRC-32C of the payload). Smaller than depending on libprotobuf
// and the .proto files for five messages.
#include "vnn/detail/message.h"
#include "vnn/utils/summary_writer.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "vnn/error.h"
#include "vnn/tensor.h"

namespace vnn {
namespace utils {

namespace {

// CRC-32C, reflected polynomial 0x82F63B78, one table built once.
struct Crc32cTable {
  uint32_t t[256];
  Crc32cTable() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
  }
};

// The protobuf wire format, just what the messages below use.
class Proto {
 public:
  void varint(uint64_t v) {
    while (v >= 0x80) {
      b_.push_back(char(uint8_t(v) | 0x80));
      v >>= 7;
    }
    b_.push_back(char(v));
  }
  void tag(int field, int wire) { varint(uint64_t(field) << 3 | uint64_t(wire)); }
  void int64(int field, int64_t v) { tag(field, 0), varint(uint64_t(v)); }
  void float64(int field, double v) { tag(field, 1), fixed(&v, 8); }
  void float32(int field, float v) { tag(field, 5), fixed(&v, 4); }
  void bytes(int field, const std::string& s) {
    tag(field, 2);
    varint(s.size());
    b_ += s;
  }
  void message(int field, const Proto& m) { bytes(field, m.b_); }
  void packed_float64(int field, const std::vector<double>& v) {
    Proto p;
    for (double d : v) p.fixed(&d, 8);
    bytes(field, p.b_);
  }
  const std::string& str() const { return b_; }

 private:
  void fixed(const void* p, size_t n) { b_.append(static_cast<const char*>(p), n); }  // little-endian hosts
  std::string b_;
};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Event{wall_time = 1, step = 2, file_version = 3, summary = 5}.
std::string event(double walltime, int64_t step, const Proto* summary, const std::string& file_version = {}) {
  Proto e;
  e.float64(1, walltime < 0 ? now_seconds() : walltime);
  e.int64(2, step);
  if (!file_version.empty()) e.bytes(3, file_version);
  if (summary) e.message(5, *summary);
  return e.str();
}

// Summary{value = 1: Value}.
Proto summary_of(const Proto& value) {
  Proto s;
  s.message(1, value);
  return s;
}

void append_record(std::string& out, const std::string& data) {
  uint64_t len = data.size();
  char head[8];
  std::memcpy(head, &len, 8);
  uint32_t lcrc = masked_crc32c(head, 8), dcrc = masked_crc32c(data.data(), data.size());
  out.append(head, 8);
  out.append(reinterpret_cast<const char*>(&lcrc), 4);
  out += data;
  out.append(reinterpret_cast<const char*>(&dcrc), 4);
}

std::string host_name() {
  char h[256] = {0};
  if (gethostname(h, sizeof h - 1) != 0 || !h[0]) return "localhost";
  return h;
}

}  // namespace

// Named, not anonymous: SummaryWriter::State (external linkage) holds
// EventFiles, and GCC warns (-Wsubobject-linkage) about such a field once
// this file is compiled inside a unity-build source.
namespace summary_detail {

// One event file: records buffered in memory, written by flush().
class EventFile {
 public:
  EventFile(const std::string& dir, const SummaryWriterOptions& o) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    VNN_CHECK(ValueError, !ec, "SummaryWriter: cannot create logdir ", dir, ": ", ec.message(),
              "; pass a directory you can write to");
    static std::atomic<int> counter{0};
    char name[64];
    std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.", static_cast<long long>(now_seconds()));
    path_ = dir + "/" + name + host_name() + "." + std::to_string(getpid()) + "." + std::to_string(counter++) +
            o.filename_suffix;
    // "x": a fresh file, never one left by an earlier run.
    f_ = std::fopen(path_.c_str(), "wbx");
    VNN_CHECK(ValueError, f_, "SummaryWriter: cannot create event file ", path_, ": ", std::strerror(errno),
              "; pass a logdir you can write to");
    max_queue_ = o.max_queue < 1 ? 1 : o.max_queue;
    add(event(-1, 0, nullptr, "brain.Event:2"));
    flush();  // TensorBoard sees the run as soon as the writer exists
  }
  ~EventFile() {
    if (f_) std::fclose(f_);
  }
  void add(const std::string& ev) {
    append_record(buf_, ev);
    if (++pending_ >= max_queue_) flush();
  }
  void flush() {
    if (buf_.empty()) return;
    if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size() || std::fflush(f_) != 0)
      VNN_THROW(Error, "SummaryWriter: writing ", buf_.size(), " bytes to ", path_, " failed: ", std::strerror(errno),
                "; check the disk space of the logdir");
    buf_.clear();
    pending_ = 0;
  }
  void close() {
    flush();
    if (std::fclose(f_) != 0) {
      f_ = nullptr;
      VNN_THROW(Error, "SummaryWriter: closing ", path_, " failed: ", std::strerror(errno));
    }
    f_ = nullptr;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, buf_;
  std::FILE* f_ = nullptr;
  int pending_ = 0, max_queue_ = 10;
};

}  // namespace summary_detail

namespace {

void check_tag(const char* method, const std::string& tag) {
  VNN_CHECK(ValueError, !tag.empty(), "SummaryWriter::", method, ": tag is empty; name the series");
}

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  static const Crc32cTable table;
  uint32_t c = 0xFFFFFFFFu;
  auto p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) c = table.t[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(const void* data, size_t size) {
  uint32_t c = crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

struct SummaryWriter::State {
  std::string logdir;
  SummaryWriterOptions options;
  std::mutex m;
  std::condition_variable cv;
  std::unique_ptr<summary_detail::EventFile> main;
  std::map<std::string, std::unique_ptr<summary_detail::EventFile>> children;  // add_scalars' series
  bool closed = false;
  std::string deferred_error;  // a failed background flush, reported by the next call
  std::thread flusher;

  void flush_all() {
    main->flush();
    for (auto& c : children) c.second->flush();
  }
  void check_open(const char* method) {
    VNN_CHECK(ValueError, !closed, "SummaryWriter::", method, ": the writer of ", logdir,
              " is closed; create a new SummaryWriter");
    if (!deferred_error.empty()) {
      std::string e = std::move(deferred_error);
      deferred_error.clear();
      VNN_THROW(Error, e);
    }
  }
  void background() {
    std::unique_lock<std::mutex> lock(m);
    auto period = std::chrono::duration<double>(options.flush_secs > 0 ? options.flush_secs : 120);
    while (!closed) {
      cv.wait_for(lock, period);
      if (closed) break;
      try {
        flush_all();
      } catch (const Error& e) {
        deferred_error = e.what();
      }
    }
  }
};

SummaryWriter::SummaryWriter(const std::string& logdir, SummaryWriterOptions options) : state_(new State) {
  VNN_CHECK(ValueError, !logdir.empty(), "SummaryWriter: logdir is empty; pass a directory such as runs/exp1");
  state_->logdir = logdir;
  state_->options = std::move(options);
  state_->main.reset(new summary_detail::EventFile(logdir, state_->options));
  state_->flusher = std::thread([s = state_.get()] { s->background(); });
}

SummaryWriter::~SummaryWriter() {
  try {
    close();
  } catch (...) {  // a destructor must not throw; close() reports the error to callers who ask
  }
}

void SummaryWriter::add_scalar(const std::string& tag, double value, int64_t step, double walltime) {
  check_tag("add_scalar", tag);
  Proto v;  // Summary.Value{tag = 1, simple_value = 2}
  v.bytes(1, tag);
  v.float32(2, float(value));
  Proto s = summary_of(v);
  std::lock_guard<std::mutex> lock(state_->m);
  state_->check_open("add_scalar");
  state_->main->add(event(walltime, step, &s));
}

void SummaryWriter::add_scalars(const std::string& main_tag, const std::map<std::string, double>& values,
                                int64_t step, double walltime) {
  check_tag("add_scalars", main_tag);
  std::string dir_tag = main_tag;
  for (char& c : dir_tag)
    if (c == '/') c = '_';
  std::lock_guard<std::mutex> lock(state_->m);
  state_->check_open("add_scalars");
  for (const auto& kv : values) {
    if (kv.first.empty() || kv.first.find('/') != std::string::npos)
      VNN_THROW(ValueError, "SummaryWriter::add_scalars(", main_tag, "): key '", kv.first,
                "' must be non-empty without '/' (it names the directory ", dir_tag, "_<key>)");
    std::string dir = state_->logdir + "/" + dir_tag + "_" + kv.first;
    auto& f = state_->children[dir];
    if (!f) f.reset(new summary_detail::EventFile(dir, state_->options));
    Proto v;
    v.bytes(1, main_tag);
    v.float32(2, float(kv.second));
    Proto s = summary_of(v);
    f->add(event(walltime, step, &s));
  }
}

void SummaryWriter::add_histogram(const std::string& tag, const std::vector<double>& values, int64_t step, int bins,
                                  double walltime) {
  check_tag("add_histogram", tag);
  VNN_CHECK(ValueError, !values.empty(), "SummaryWriter::add_histogram(", tag, "): no values");
  if (bins < 1 || bins > (1 << 20))  // TensorBoard draws a few dozen; a million is a typo, not a histogram
    VNN_THROW(ValueError, "SummaryWriter::add_histogram(", tag, "): bins must be in [1, 1048576], got ", bins);
  double lo = values[0], hi = values[0], sum = 0, sum_sq = 0;
  for (double x : values) {
    VNN_CHECK(ValueError, std::isfinite(x), "SummaryWriter::add_histogram(", tag,
              "): the values hold a NaN or infinity; "
              "a histogram needs finite values");
    lo = std::min(lo, x), hi = std::max(hi, x), sum += x, sum_sq += x * x;
  }
  // numpy.histogram's buckets (what torch uses): equal widths over
  // [min, max], the last one closed; a single value gets [v-0.5, v+0.5].
  double a = lo, b = hi;
  if (a == b) a -= 0.5, b += 0.5;
  std::vector<double> limits(static_cast<size_t>(bins)), counts(static_cast<size_t>(bins), 0.0);
  for (int i = 0; i < bins; ++i) limits[size_t(i)] = a + (b - a) * double(i + 1) / double(bins);
  limits.back() = b;
  for (double x : values) {
    auto i = static_cast<int64_t>((x - a) / (b - a) * double(bins));
    counts[size_t(std::min<int64_t>(std::max<int64_t>(i, 0), bins - 1))] += 1;
  }
  Proto h;  // HistogramProto{min 1, max 2, num 3, sum 4, sum_squares 5, bucket_limit 6, bucket 7}
  h.float64(1, lo);
  h.float64(2, hi);
  h.float64(3, double(values.size()));
  h.float64(4, sum);
  h.float64(5, sum_sq);
  h.packed_float64(6, limits);
  h.packed_float64(7, counts);
  Proto v;  // Summary.Value{tag = 1, histo = 5}
  v.bytes(1, tag);
  v.message(5, h);
  Proto s = summary_of(v);
  std::lock_guard<std::mutex> lock(state_->m);
  state_->check_open("add_histogram");
  state_->main->add(event(walltime, step, &s));
}

void SummaryWriter::add_histogram(const std::string& tag, const Tensor& values, int64_t step, int bins,
                                  double walltime) {
  VNN_CHECK(DTypeError, values.dtype() != kBool, "SummaryWriter::add_histogram(", tag,
            "): a bool tensor has no histogram; convert it with "
            ".to(vnn::kFloat32)");
  add_histogram(tag, values.to(kFloat64).to_vector<double>(), step, bins, walltime);
}

void SummaryWriter::add_text(const std::string& tag, const std::string& text, int64_t step, double walltime) {
  check_tag("add_text", tag);
  Proto plugin;  // SummaryMetadata.PluginData{plugin_name = 1}
  plugin.bytes(1, "text");
  Proto meta;  // SummaryMetadata{plugin_data = 1}
  meta.message(1, plugin);
  Proto dim, shape, tensor;
  dim.int64(1, 1);        // TensorShapeProto.Dim{size = 1}
  shape.message(2, dim);  // TensorShapeProto{dim = 2}
  tensor.int64(1, 7);     // TensorProto{dtype = 1: DT_STRING, tensor_shape = 2, string_val = 8}
  tensor.message(2, shape);
  tensor.bytes(8, text);
  Proto v;  // Summary.Value{tag = 1, tensor = 8, metadata = 9}, tag as torch names it
  v.bytes(1, tag + "/text_summary");
  v.message(8, tensor);
  v.message(9, meta);
  Proto s = summary_of(v);
  std::lock_guard<std::mutex> lock(state_->m);
  state_->check_open("add_text");
  state_->main->add(event(walltime, step, &s));
}

void SummaryWriter::flush() {
  std::lock_guard<std::mutex> lock(state_->m);
  state_->check_open("flush");
  state_->flush_all();
}

void SummaryWriter::close() {
  {
    std::lock_guard<std::mutex> lock(state_->m);
    if (state_->closed) return;
    state_->closed = true;
  }
  state_->cv.notify_all();
  if (state_->flusher.joinable()) state_->flusher.join();
  std::lock_guard<std::mutex> lock(state_->m);
  std::string err = std::move(state_->deferred_error);
  try {
    state_->main->close();
    for (auto& c : state_->children) c.second->close();
  } catch (const Error& e) {
    if (err.empty()) err = e.what();
  }
  VNN_CHECK(Error, err.empty(), err);
}

const std::string& SummaryWriter::logdir() const { return state_->logdir; }

std::string SummaryWriter::file_path() const { return state_->main->path(); }

}  // namespace utils
}  // namespace vnn
