// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::nn::NoSyncScope: the scope DistributedDataParallel::no_sync() and
// FullyShardedDataParallel::no_sync() return (torch's `with model.no_sync():`).
#pragma once

namespace vnn::nn {

/// Turns a data-parallel wrapper's gradient synchronisation off for its
/// lifetime and restores the previous setting when it ends: inside, backward
/// leaves the gradients local; the first synchronised backward after it
/// reduces their sum. Made by the wrappers' no_sync().
class NoSyncScope {
 public:
  /// Sets `sync` (a wrapper's synchronisation flag) to false until destruction.
  explicit NoSyncScope(bool& sync) : sync_(sync), previous_(sync) { sync = false; }
  /// Restores the flag's previous value.
  ~NoSyncScope() { sync_ = previous_; }
  /// Not copyable: one scope, one restore.
  NoSyncScope(const NoSyncScope&) = delete;
  /// Not assignable.
  NoSyncScope& operator=(const NoSyncScope&) = delete;

 private:
  bool& sync_;
  bool previous_;
};

}  // namespace vnn::nn
