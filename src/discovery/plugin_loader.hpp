// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Finds backend plugin files, dlopen()s them and checks their ABI.
#pragma once
#include <string>
#include <vector>

#include "vnn/backend_abi.h"
#include "vnn/device.h"

namespace vnn::detail {

struct LoadedPlugin {
  std::string path;
  const vnn_backend* table = nullptr;
};

// Directories searched, in order: VNN_BACKEND_PATH (':'-separated),
// <dir of libvnn.so>/vnn (the build tree's lib/vnn and an install's
// lib/vnn alike), the executable's folder, its lib/vnn and ../lib/vnn.
std::vector<std::string> plugin_search_path();

// Loads every libvnn-backend-*.so found (first of each name wins) and
// records each attempt in the report. `allowed(name)` filters by plugin
// name before anything is opened. Never unloads anything.
std::vector<LoadedPlugin> load_plugins(std::vector<BackendReport>& report,
                                       bool (*allowed)(const std::string& name));

// Loads one file; returns false with the report filled on failure.
bool load_plugin_file(const std::string& path, LoadedPlugin& out, BackendReport& report);

}  // namespace vnn::detail
