// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// safetensors save (atomic: temp file, fsync, rename; stale temp files of
// dead writers removed) and load (the header read and validated first, then
// only the byte ranges it names, one host-to-device copy per tensor).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <random>

#include "io/json.hpp"
#include "io/safetensors_file.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/io/safetensors.h"

namespace vnn::io {

namespace {

// Temporary files of a save: <path>.vnn-tmp-<pid>-<rand>.
constexpr const char* kTempTag = ".vnn-tmp-";

std::mutex g_hook_mutex;
std::function<bool(size_t)> g_write_hook;

const char* st_name(DType t) {
  switch (t) {
    case kFloat32: return "F32";
    case kFloat64: return "F64";
    case kInt32: return "I32";
    case kInt64: return "I64";
    case kUInt8: return "U8";
    case kBool: return "BOOL";
    case kFloat16: return "F16";
    case kBFloat16: return "BF16";
    case kInt8: return "I8";
    case kInt16: return "I16";
  }
  return "?";
}

DType from_st_name(const std::string& s) {
  if (s == "F32") return kFloat32;
  if (s == "F64") return kFloat64;
  if (s == "I32") return kInt32;
  if (s == "I64") return kInt64;
  if (s == "U8") return kUInt8;
  if (s == "BOOL") return kBool;
  if (s == "F16") return kFloat16;
  if (s == "I8") return kInt8;
  if (s == "I16") return kInt16;
  return kBFloat16;  // parse_header accepted only known names
}

bool little_endian_host() {
  uint16_t x = 1;
  uint8_t b;
  std::memcpy(&b, &x, 1);
  return b == 1;
}

std::string sys_error() { return std::strerror(errno); }

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Everything a save writes, as (pointer, size) pieces; the host tensors
// keep the data alive.
struct Piece { const void* p; size_t n; };

void write_all(int fd, const std::vector<Piece>& pieces, const std::string& tmp) {
  std::function<bool(size_t)> hook;
  {
    std::lock_guard<std::mutex> lock(g_hook_mutex);
    hook = g_write_hook;
  }
  constexpr size_t kChunk = size_t(1) << 20;
  size_t written = 0;
  for (auto& pc : pieces) {
    const char* p = static_cast<const char*>(pc.p);
    size_t left = pc.n;
    while (left > 0) {
      size_t n = std::min(left, kChunk);
      if (hook && hook(written)) {
        errno = EIO;
        VNN_THROW(FileError, "save: writing ", tmp, " failed after ", written, " bytes: ", sys_error());
      }
      ssize_t w = ::write(fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        VNN_THROW(FileError, "save: writing ", tmp, " failed after ", written, " bytes: ", sys_error());
      }
      p += w;
      left -= size_t(w);
      written += size_t(w);
    }
  }
}

// Stale temporary files of `base` in `dir`: <base>.vnn-tmp-<pid>-<rand>
// whose writer is gone (kill(pid, 0) answers ESRCH). A live pid, even a
// reused one, keeps its file: removing a save in progress would be worse
// than leaving a stale one for a later save.
void remove_stale_temps(const std::string& dir, const std::string& base) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const std::string prefix = base + kTempTag;
  while (struct dirent* ent = ::readdir(d)) {
    const char* name = ent->d_name;
    if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0) continue;
    const char* p = name + prefix.size();
    long long pid = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 10; ++p, ++digits) pid = pid * 10 + (*p - '0');
    if (digits == 0 || *p != '-' || pid <= 0 || pid > INT32_MAX || pid_t(pid) == ::getpid()) continue;
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;
    ::unlinkat(::dirfd(d), name, 0);
  }
  ::closedir(d);
}

// Creates <path>.vnn-tmp-<pid>-<rand> exclusively; returns its fd and name.
int create_temp(const std::string& path, std::string* tmp) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  for (int attempt = 0; attempt < 64; ++attempt) {
    uint64_t r = (uint64_t(rd()) << 32) ^ rd() ^ counter.fetch_add(1);
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%ld-%08llx", long(::getpid()), (unsigned long long)(r & 0xffffffffull));
    *tmp = path + kTempTag + suffix;
    int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

void pread_all(int fd, void* dst, size_t n, uint64_t offset, const std::string& path, const char* op) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, static_cast<uint8_t*>(dst) + got, n - got, off_t(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      VNN_THROW(FileError, op, ": reading ", path, " failed at byte ", offset + got, ": ",
                (r < 0 ? sys_error() : std::string("file shrank while reading")));
    got += size_t(r);
  }
}

// Host memory for reads, grown but never zero-filled: pread overwrites it,
// and clearing a 100 MB header buffer first was a tenth of its parse.
struct ReadBuffer {
  std::unique_ptr<uint8_t[]> bytes;
  uint64_t capacity = 0;
  uint8_t* data() { return bytes.get(); }
  uint8_t& operator[](size_t i) { return bytes[i]; }
};

// The failure names the file, the tensor and the size.
void reserve_bytes(ReadBuffer& buf, uint64_t n, const std::string& path, const char* op, const std::string& what) {
  if (buf.capacity >= n) return;
  uint8_t* p = n <= uint64_t(SIZE_MAX) ? new (std::nothrow) uint8_t[size_t(n)] : nullptr;
  if (!p) VNN_THROW(OutOfMemory, op, ": ", path, ": cannot allocate ", n, " bytes of host memory for ", what);
  buf.bytes.reset(p);
  buf.capacity = n;
}

}  // namespace

namespace testing {
void set_write_failure_hook(std::function<bool(size_t)> hook) {
  std::lock_guard<std::mutex> lock(g_hook_mutex);
  g_write_hook = std::move(hook);
}
}  // namespace testing

void save(const std::string& path, const TensorMap& tensors, const Metadata& metadata) {
  VNN_CHECK(Unsupported, little_endian_host(), "save: safetensors needs little-endian data; this host is big-endian");
  std::string header = "{";
  std::vector<Tensor> host;
  uint64_t offset = 0;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      json::append_quoted(header, k);
      header += ':';
      json::append_quoted(header, v);
    }
    header += '}';
  }
  for (auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__")
      VNN_THROW(ValueError, "save: tensor name \"", name, "\" is reserved or empty (writing ", path, ")");
    VNN_CHECK(ValueError, t.defined(), "save: tensor \"", name, "\" is undefined (writing ", path, ")");
    Tensor h = t.detach().to(Device("cpu", 0)).contiguous();
    host.push_back(h);
    if (header.size() > 1) header += ',';
    json::append_quoted(header, name);
    header += ":{\"dtype\":\"";
    header += st_name(h.dtype());
    header += "\",\"shape\":[";
    for (int i = 0; i < h.dim(); ++i) header += (i ? "," : "") + std::to_string(h.size(i));
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + h.nbytes()) + "]}";
    offset += h.nbytes();
  }
  header += '}';
  while (header.size() % 8 != 0) header += ' ';  // data starts 8-byte aligned, as the Python writer does
  uint8_t len[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(n >> (8 * i));
  synchronize(Device("cpu", 0));
  std::vector<Piece> pieces{{len, 8}, {header.data(), header.size()}};
  for (auto& h : host)
    if (h.nbytes() > 0) pieces.push_back({vnn::detail::host_pointer(*h.impl()), h.nbytes()});

  const std::string dir = dir_of(path);
  remove_stale_temps(dir, path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1));
  std::string tmp;
  int fd = create_temp(path, &tmp);
  if (fd < 0)
    VNN_THROW(FileError, "save: cannot create a temporary file next to ", path, " (", tmp, "): ", sys_error());
  try {
    write_all(fd, pieces, tmp);
    VNN_CHECK(FileError, ::fsync(fd) == 0, "save: fsync of ", tmp, " failed: ", sys_error());
    if (::close(fd) != 0) {
      fd = -1;
      VNN_THROW(FileError, "save: closing ", tmp, " failed: ", sys_error());
    }
    fd = -1;
    VNN_CHECK(FileError, ::rename(tmp.c_str(), path.c_str()) == 0, "save: renaming ", tmp, " to ", path,
              " failed: ", sys_error());
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

namespace detail {

SafetensorsFile::SafetensorsFile(const std::string& path, const char* op) : path_(path), op_(op) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) VNN_THROW(FileError, op, ": cannot open ", path, ": ", sys_error());
  try {
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) VNN_THROW(FileError, op, ": ", path, " is not a regular file");
    const uint64_t size = uint64_t(st.st_size);
    uint8_t len[8];
    const size_t head = size_t(std::min<uint64_t>(size, 8));
    pread_all(fd_, len, head, 0, path, op);
    // Checks the length against the file size before allocating for it.
    const uint64_t n = header_length(len, head, size, path);
    ReadBuffer buf;
    reserve_bytes(buf, 8 + n, path, op, "the header");
    std::memcpy(buf.data(), len, 8);
    pread_all(fd_, buf.data() + 8, size_t(n), 8, path, op);
    header_ = parse_header(buf.data(), size_t(8 + n), size, path);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() { ::close(fd_); }

TensorMap SafetensorsFile::tensors(const Device& map_location) const {
  VNN_CHECK(Unsupported, little_endian_host(), op_, ": safetensors holds little-endian data; this host is big-endian");
  TensorMap out;
  ReadBuffer staging;  // reused: each tensor's bytes, read with pread from its own range only
  for (auto& e : header_.tensors) {
    const uint64_t n = e.end - e.begin;
    reserve_bytes(staging, n, path_, op_, "tensor \"" + e.name + "\" (" + e.dtype + " " + std::to_string(n) + " bytes)");
    pread_all(fd_, staging.data(), size_t(n), header_.data_start + e.begin, path_, op_);
    const DType dtype = from_st_name(e.dtype);
    if (dtype == kBool)  // any other byte is not a bool: kernels would read it differently per build
      for (uint64_t i = 0; i < n; ++i)
        if (staging[size_t(i)] > 1)
          VNN_THROW(FormatError, path_, ": not a valid safetensors file: tensor \"", e.name, "\": BOOL element ", i,
                    " is byte ", staging[size_t(i)], ", not 0 or 1");
    try {
      out[e.name] = from_blob(staging.data(), Shape(e.shape), dtype, map_location);
    } catch (const OutOfMemory& oom) {  // the device allocator's message, with the file and tensor added
      VNN_THROW(OutOfMemory, op_, ": ", path_, ": tensor \"", e.name, "\" (", n, " bytes) onto ", map_location.str(),
                ": ", oom.what());
    } catch (const std::bad_alloc&) {
      VNN_THROW(OutOfMemory, op_, ": ", path_, ": out of host memory creating tensor \"", e.name, "\" (", n, " bytes)");
    }
  }
  return out;
}

}  // namespace detail

TensorMap load(const std::string& path, const Device& map_location) {
  return detail::SafetensorsFile(path, "load").tensors(map_location);
}

Metadata load_metadata(const std::string& path) {
  return detail::SafetensorsFile(path, "load_metadata").header().metadata;
}

}  // namespace vnn::io
