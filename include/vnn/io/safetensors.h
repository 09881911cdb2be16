// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checkpoints in the safetensors format (https://github.com/huggingface/safetensors):
// 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//    "__metadata__": {"key": "value"}}
// then the raw little-endian contiguous data; offsets count from the end
// of the header. Files written here open in Python's safetensors and
// PyTorch (safetensors.torch.load_file), and theirs load here.
//
//   vnn::io::save("model.safetensors", {{"fc.weight", w}, {"fc.bias", b}});
//   auto t = vnn::io::load("model.safetensors", vnn::Device("opencl:0"));
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vnn/error.h"
#include "vnn/state_dict.h"
#include "vnn/tensor.h"

namespace vnn {

/// A file that cannot be opened, read, written or renamed (the text names
/// the file and the system's reason).
class FileError : public Error { using Error::Error; };

namespace io {

/// Named tensors: the StateDict that Module::state_dict() returns (file order
/// on load); it converts to and from std::map<std::string, Tensor>.
using TensorMap = StateDict;
/// The `__metadata__` string map of a safetensors file.
using Metadata = std::map<std::string, std::string>;

// Writes atomically: a temporary file <path>.vnn-tmp-<pid>-<rand> in the
// same directory is written, flushed and fsync'ed, then renamed over path,
// so a crash or failure mid-save leaves any previous file at path untouched.
// A process killed mid-save leaves its temporary file behind; the next save
// to the same path removes every such file whose pid no longer runs. Tensors may live on
// any device and have any strides (they are copied to the host
// contiguously). Names must be non-empty and not "__metadata__".
/// Writes `tensors` (any device, any strides) and `metadata` to `path` atomically: a temporary file, fsync, rename.
void save(const std::string& path, const TensorMap& tensors, const Metadata& metadata = {});

/// Reads every tensor onto map_location (any file loads onto any device).
/// Only the header and the byte ranges it names are read (pread), after the
/// header has been checked against the file size. Truncated, corrupt or
/// hostile files throw FormatError naming the file and the problem (a BOOL
/// byte other than 0 or 1 included); missing or unreadable ones FileError;
/// a tensor that does not fit in memory OutOfMemory naming it and its size.
TensorMap load(const std::string& path, const Device& map_location = Device("cpu", 0));
/// The __metadata__ map only (reads the header, not the data).
Metadata load_metadata(const std::string& path);

/// The parsed, validated layout of a file. Exposed for tools and the fuzzer.
struct TensorEntry {
  /// The tensor's name.
  std::string name;
  /// The dtype name: "F32", "F64", "I32", "I64", "I16", "I8", "U8", "BOOL", "F16" or "BF16".
  std::string dtype;           // "F32", "F64", "I32", "I64", "I16", "I8", "U8", "BOOL", "F16", "BF16"
  /// The sizes.
  std::vector<int64_t> shape;
  /// Byte range [begin, end) relative to data_start.
  ///@{
  uint64_t begin = 0, end = 0;  // byte range relative to data_start
///@}
};
/// The validated header of a file: entries in file order, metadata, data offset.
struct Header {
  /// The entries in file order.
  std::vector<TensorEntry> tensors;  // in file order
  /// The `__metadata__` map.
  Metadata metadata;
  /// Offset of the data section: 8 + header length.
  uint64_t data_start = 0;  // 8 + header length
};
// Validates the first `size` bytes of a file of file_size bytes (size may
// stop after the header). Never reads outside [data, data + size). Time is
// linear in the header size and memory a small multiple of it.
// Rejects: fewer than 8 bytes, header length > 100 MB or past the end,
// invalid JSON or UTF-8, duplicate names, names with NUL, entries with other
// keys than dtype/shape/data_offsets, unknown dtypes, more than 8
// dimensions, shapes whose element count, byte size or strides overflow
// 64 bits, offsets that run past the end, overlap, or disagree with
// shape x dtype size, and more than 16384 __metadata__ entries.
/// Validates a header from the first `size` bytes of a file of `file_size` bytes; FormatError naming `source` and the problem.
Header parse_header(const uint8_t* data, size_t size, uint64_t file_size, const std::string& source);
/// The header length from the first `size` (>= 8) bytes, checked against the
/// 100 MB limit and the file size; FormatError otherwise.
uint64_t header_length(const uint8_t* data, size_t size, uint64_t file_size, const std::string& source);
/// Bytes per element of a safetensors dtype name; 0 when unknown.
size_t dtype_size(const std::string& dtype);

namespace testing {
/// Called before each chunk a save writes with the number of bytes written
/// so far; returning true makes that write fail as if the disk broke.
/// Pass an empty function to clear it.
void set_write_failure_hook(std::function<bool(size_t bytes_written)> hook);
}  // namespace testing

}  // namespace io
}  // namespace vnn
