// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An open safetensors file whose header has been read and validated, for
// loaders that must check everything before reading data or changing
// anything (io::load, io::load_metadata, load_training_checkpoint).
#pragma once
#include <string>

#include "vnn/io/safetensors.h"

namespace vnn::io::detail {

class SafetensorsFile {
 public:
  // Reads only the 8-byte length and the header it announces, after checking
  // the length against the file size. Throws FileError / FormatError /
  // OutOfMemory naming the file; `op` prefixes the messages.
  SafetensorsFile(const std::string& path, const char* op);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const Header& header() const { return header_; }
  // Reads each tensor's byte range (and nothing else: bytes past the last
  // tensor are never read) onto map_location. BOOL bytes must be 0 or 1.
  TensorMap tensors(const Device& map_location) const;

 private:
  std::string path_;
  const char* op_;
  int fd_ = -1;
  Header header_;
};

}  // namespace vnn::io::detail
