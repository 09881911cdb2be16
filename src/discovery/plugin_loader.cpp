// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "discovery/plugin_loader.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>


namespace vnn::detail {

namespace {

std::string dirname_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string this_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_search_path), &info) && info.dli_fname)
    return dirname_of(info.dli_fname);
  return {};
}

std::string executable_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  buf[n] = 0;
  return dirname_of(buf);
}

const char* kPrefix = "libvnn-backend-";
const char* kSuffix = ".so";

bool is_plugin_file(const std::string& f) {
  size_t lp = std::char_traits<char>::length(kPrefix), ls = std::char_traits<char>::length(kSuffix);
  return f.size() > lp + ls && f.compare(0, lp, kPrefix) == 0 &&
         f.compare(f.size() - ls, ls, kSuffix) == 0;
}

std::string stem_backend(const std::string& path) {
  std::string f = path.substr(path.rfind('/') + 1);
  size_t lp = std::char_traits<char>::length(kPrefix), ls = std::char_traits<char>::length(kSuffix);
  return f.substr(lp, f.size() - lp - ls);
}

std::vector<std::string> list_plugins(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string f = e->d_name;
    if (is_plugin_file(f)) out.push_back(dir + "/" + f);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> plugin_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("VNN_BACKEND_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  std::string lib = this_library_dir();
  if (!lib.empty()) dirs.push_back(lib + "/vnn");
  std::string exe = executable_dir();
  if (!exe.empty()) {
    dirs.push_back(exe);
    dirs.push_back(exe + "/lib/vnn");
    dirs.push_back(exe + "/../lib/vnn");
  }
  // Drop duplicates while keeping the order.
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (auto& d : dirs) {
    char real[4096];
    std::string key = realpath(d.c_str(), real) ? std::string(real) : d;
    if (seen.insert(key).second) unique.push_back(d);
  }
  return unique;
}

bool load_plugin_file(const std::string& path, LoadedPlugin& out, BackendReport& r) {
  r.library = path;
  r.backend = stem_backend(path);
  // RTLD_LOCAL keeps each plugin's private Kokkos out of the global namespace.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    r.status = "dlopen failed";
    r.detail = e ? e : "unknown dlopen error";
    return false;
  }
  dlerror();
  void* sym = dlsym(handle, VNN_BACKEND_ENTRY_NAME);
  if (!sym) {
    const char* e = dlerror();
    r.status = "missing entry point";
    r.detail = std::string("no symbol '") + VNN_BACKEND_ENTRY_NAME + "' (" + (e ? e : "") +
               "); is this a vnn backend built against backend_abi.h?";
    return false;  // handle deliberately kept: plugins are never unloaded
  }
  auto entry = reinterpret_cast<vnn_backend_entry_fn>(sym);
  const vnn_backend* t = entry(VNN_BACKEND_ABI_VERSION);
  if (!t || t->abi_version != VNN_BACKEND_ABI_VERSION) {
    r.status = "abi mismatch";
    r.detail = "plugin speaks ABI version " + (t ? std::to_string(t->abi_version) : std::string("?")) +
               ", this libvnn speaks " + std::to_string(VNN_BACKEND_ABI_VERSION) +
               ": rebuild the plugin against this vnn's include/vnn/backend_abi.h";
    return false;
  }
  if (!VNN_BACKEND_COVERS(t, last_error) || !t->name ||
      !t->probe || !t->device_info || !t->last_error) {
    r.status = "abi mismatch";
    r.detail = "plugin table is too small or lacks probe/device_info/last_error (struct_size " +
               std::to_string(t->struct_size) + ", expected at least " +
               std::to_string(sizeof(vnn_backend)) + ")";
    return false;
  }
  r.backend = t->name;
  r.description = t->description ? t->description : "";
  r.loaded = true;
  out.path = path;
  out.table = t;
  return true;
}

std::vector<LoadedPlugin> load_plugins(std::vector<BackendReport>& report,
                                       bool (*allowed)(const std::string& name)) {
  std::vector<LoadedPlugin> plugins;
  std::set<std::string> names;
  for (const auto& dir : plugin_search_path()) {
    for (const auto& path : list_plugins(dir)) {
      std::string stem = stem_backend(path);
      if (names.count(stem)) continue;  // an earlier directory already gave this backend
      BackendReport r;
      LoadedPlugin p;
      if (!allowed(stem)) {
        names.insert(stem);
        r.backend = stem;
        r.library = path;
        r.status = "disabled";
        r.detail = "not in VNN_BACKENDS";
        report.push_back(r);
        continue;
      }
      if (load_plugin_file(path, p, r)) {
        names.insert(r.backend);
        names.insert(stem);
        plugins.push_back(p);
      }
      report.push_back(r);
    }
  }
  return plugins;
}

}  // namespace vnn::detail
