// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Typed exceptions. Every error vnn throws derives from vnn::Error, and its
// text names the op, the argument, the shapes or devices involved, and what
// to do about it.
#pragma once
#include <stdexcept>
#include <string>

namespace vnn {

/// The base of every exception vnn throws; what() names the op, the arguments and what to do.
class Error : public std::runtime_error {
 public:
  /// Wraps the full message.
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Operands of one op live on different devices.
class DeviceMismatch : public Error { using Error::Error; };
/// A device string names no device discovery found, or cannot be parsed.
class DeviceNotFound : public Error { using Error::Error; };
/// Shapes that do not agree (broadcasting, matmul, views).
class ShapeError : public Error { using Error::Error; };
/// A dtype an op does not accept, or a backend cannot handle.
class DTypeError : public Error { using Error::Error; };
/// An index or dimension out of range.
class IndexError : public Error { using Error::Error; };
/// A value outside what an argument accepts.
class ValueError : public Error { using Error::Error; };
/// Device (or pinned host) memory exhausted; the text gives sizes.
class OutOfMemory : public Error { using Error::Error; };
/// The backend does not implement this op / dtype.
class Unsupported : public Error { using Error::Error; };
/// A backend reported a runtime failure (kernel build, lost device, ...).
class BackendError : public Error { using Error::Error; };
/// A plugin could not be used: ABI mismatch, missing entry point, ...
class PluginError : public Error { using Error::Error; };
/// A file whose contents are not what its format requires (truncated, corrupt, hostile).
class FormatError : public Error { using Error::Error; };
/// A collective or rendezvous failed: a peer gone, a timeout, ranks that
/// disagree (vnn/distributed.h). The text names the rank and the collective.
class DistributedError : public Error { using Error::Error; };

}  // namespace vnn
