// safetensors save (atomic: temp file, fsync, rename) and load (validated
// header, then one host-to-device copy per tensor onto map_location).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "io/json.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/io/safetensors.h"

namespace vnn::io {

namespace {

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
      if (hook && hook(written)) { errno = EIO; throw FileError("save: writing " + tmp + " failed after " + std::to_string(written) + " bytes: " + sys_error()); }
      ssize_t w = ::write(fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw FileError("save: writing " + tmp + " failed after " + std::to_string(written) + " bytes: " + sys_error());
      }
      p += w;
      left -= size_t(w);
      written += size_t(w);
    }
  }
}

std::vector<uint8_t> read_file(const std::string& path, const char* op, bool header_only) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(std::string(op) + ": cannot open " + path + ": " + sys_error());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(std::string(op) + ": " + path + " is not a regular file");
  }
  uint64_t size = uint64_t(st.st_size);
  uint64_t want = size;
  if (header_only && size >= 8) {
    uint8_t len[8];
    if (::pread(fd, len, 8, 0) == 8) {
      uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
      want = std::min<uint64_t>(size, 8 + std::min<uint64_t>(n, 100ull * 1000 * 1000 + 1));
    }
  }
  std::vector<uint8_t> buf(static_cast<size_t>(want));
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t r = ::pread(fd, buf.data() + got, buf.size() - got, off_t(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ::close(fd);
      throw FileError(std::string(op) + ": reading " + path + " failed at byte " + std::to_string(got) + ": " +
                      (r < 0 ? sys_error() : std::string("file shrank while reading")));
    }
    got += size_t(r);
  }
  ::close(fd);
  return buf;
}

}  // namespace

namespace testing {
void set_write_failure_hook(std::function<bool(size_t)> hook) {
  std::lock_guard<std::mutex> lock(g_hook_mutex);
  g_write_hook = std::move(hook);
}
}  // namespace testing

void save(const std::string& path, const TensorMap& tensors, const Metadata& metadata) {
  if (!little_endian_host()) throw Unsupported("save: safetensors needs little-endian data; this host is big-endian");
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
      throw ValueError("save: tensor name \"" + name + "\" is reserved or empty (writing " + path + ")");
    if (!t.defined()) throw ValueError("save: tensor \"" + name + "\" is undefined (writing " + path + ")");
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
    if (h.nbytes() > 0) pieces.push_back({detail::host_pointer(*h.impl()), h.nbytes()});

  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  std::string tmp = dir_of(path) + "/." + base + ".tmp.XXXXXX";
  std::vector<char> tmpl(tmp.begin(), tmp.end());
  tmpl.push_back('\0');
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw FileError("save: cannot create a temporary file next to " + path + " (" + tmp + "): " + sys_error());
  tmp = tmpl.data();
  try {
    write_all(fd, pieces, tmp);
    if (::fsync(fd) != 0) throw FileError("save: fsync of " + tmp + " failed: " + sys_error());
    ::fchmod(fd, 0644);  // mkstemp makes 0600; checkpoints are ordinary files
    if (::close(fd) != 0) { fd = -1; throw FileError("save: closing " + tmp + " failed: " + sys_error()); }
    fd = -1;
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw FileError("save: renaming " + tmp + " to " + path + " failed: " + sys_error());
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // Make the rename itself durable.
  int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

TensorMap load(const std::string& path, const Device& map_location) {
  if (!little_endian_host()) throw Unsupported("load: safetensors holds little-endian data; this host is big-endian");
  std::vector<uint8_t> buf = read_file(path, "load", false);
  Header h = parse_header(buf.data(), buf.size(), buf.size(), path);
  TensorMap out;
  for (auto& e : h.tensors) {
    Shape shape(e.shape);
    const uint8_t* p = buf.data() + h.data_start + e.begin;
    out[e.name] = from_blob(p, shape, from_st_name(e.dtype), map_location);
  }
  return out;
}

Metadata load_metadata(const std::string& path) {
  std::vector<uint8_t> buf = read_file(path, "load_metadata", true);
  struct stat st {};
  uint64_t file_size = ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : buf.size();
  return parse_header(buf.data(), buf.size(), file_size, path).metadata;
}

}  // namespace vnn::io
