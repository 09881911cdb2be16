// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reports over a stopped Profile: key_averages rows, the text table and the
// Chrome trace / Perfetto JSON.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

#include "io/json.hpp"
#include "profiler/state.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::profiler {

namespace {

void require_stopped(bool stopped, const char* what) {
  VNN_CHECK(ValueError, stopped, "profiler: ", what, " needs a stopped profile; call stop() first");
}

double sort_key(const Row& r, SortBy by) {
  switch (by) {
    case SortBy::calls: return double(r.calls);
    case SortBy::self_host: return r.self_host_us;
    case SortBy::total_host: return r.total_host_us;
    case SortBy::avg_host: return r.avg_host_us;
    case SortBy::device_total: return r.device_us;
    case SortBy::avg_device: return r.avg_device_us;
    case SortBy::bytes_allocated: return double(r.bytes_allocated);
    case SortBy::bytes_freed: return double(r.bytes_freed);
    case SortBy::name: return 0;
  }
  return 0;
}

std::string fmt_us(double us) {
  char buf[32];
  if (us >= 1e6) std::snprintf(buf, sizeof buf, "%.3f s", us * 1e-6);
  else if (us >= 1e3) std::snprintf(buf, sizeof buf, "%.3f ms", us * 1e-3);
  else std::snprintf(buf, sizeof buf, "%.3f us", us);
  return buf;
}

std::string fmt_bytes(int64_t b) {
  char buf[32];
  double a = double(b < 0 ? -b : b);
  const char* sign = b < 0 ? "-" : "";
  if (a >= 1024.0 * 1024.0) std::snprintf(buf, sizeof buf, "%s%.2f MiB", sign, a / (1024.0 * 1024.0));
  else if (a >= 1024.0) std::snprintf(buf, sizeof buf, "%s%.2f KiB", sign, a / 1024.0);
  else std::snprintf(buf, sizeof buf, "%s%lld B", sign, static_cast<long long>(a));
  return buf;
}

std::string fmt_pct(double p) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f%%", p);
  return buf;
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

std::vector<Row> Profile::key_averages(const TableOptions& t) const {
  require_stopped(state_->stopped, "key_averages()");
  using Key = std::tuple<std::string, std::string, std::string, std::string, bool>;
  std::map<Key, Row> rows;
  double self_sum = 0, device_sum = 0;
  for (const Event& e : state_->events) {
    const bool range = e.kind == EventKind::range;
    Key k{e.name, e.device, t.group_by_shape ? e.shapes : std::string(),
          t.group_by_phase ? std::string(phase_name(e.phase)) : std::string(), range};
    Row& r = rows[k];
    r.name = e.name;
    r.device = e.device;
    r.shapes = std::get<2>(k);
    r.phase = std::get<3>(k);
    r.is_range = range;
    ++r.calls;
    r.self_host_us += e.self_us;
    r.total_host_us += e.host_us;
    if (e.device_us >= 0) {
      r.device_us += e.device_us;
      ++r.device_calls;
      device_sum += e.device_us;
    }
    r.bytes_allocated += e.bytes_allocated;
    r.bytes_freed += e.bytes_freed;
    self_sum += e.self_us;
  }
  std::vector<Row> out;
  out.reserve(rows.size());
  for (auto& kv : rows) {
    Row r = kv.second;
    r.avg_host_us = r.total_host_us / double(r.calls);
    r.avg_device_us = r.device_calls ? r.device_us / double(r.device_calls) : 0.0;
    r.self_host_pct = self_sum > 0 ? 100.0 * r.self_host_us / self_sum : 0.0;
    r.device_pct = device_sum > 0 ? 100.0 * r.device_us / device_sum : 0.0;
    out.push_back(std::move(r));
  }
  if (t.sort == SortBy::name) {
    std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
  } else {
    std::stable_sort(out.begin(), out.end(),
                     [&](const Row& a, const Row& b) { return sort_key(a, t.sort) > sort_key(b, t.sort); });
  }
  if (t.row_limit > 0 && out.size() > size_t(t.row_limit)) out.resize(size_t(t.row_limit));
  return out;
}

std::string Profile::table(const TableOptions& t) const {
  std::vector<Row> rows = key_averages(t);
  TableOptions all = t;
  all.row_limit = 0;
  // Totals cover every row, also those a row_limit hides.
  double self_total = 0, device_total = 0;
  for (const Row& r : key_averages(all)) self_total += r.self_host_us, device_total += r.device_us;
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head = {"Name", "Device"};
  if (t.group_by_phase) head.push_back("Phase");
  for (const char* h : {"Self host %", "Self host", "Host total", "Host avg", "Device %", "Device total",
                        "Device avg", "Calls", "Alloc", "Freed"})
    head.push_back(h);
  if (t.group_by_shape) head.push_back("Input shapes");
  cells.push_back(head);
  for (const Row& r : rows) {
    std::vector<std::string> c = {r.is_range ? "[range] " + r.name : r.name, r.is_range ? "-" : r.device};
    if (t.group_by_phase) c.push_back(r.phase);
    const bool dev = r.device_calls > 0;
    c.insert(c.end(), {fmt_pct(r.self_host_pct), fmt_us(r.self_host_us), fmt_us(r.total_host_us),
                       fmt_us(r.avg_host_us), dev ? fmt_pct(r.device_pct) : "-", dev ? fmt_us(r.device_us) : "-",
                       dev ? fmt_us(r.avg_device_us) : "-", std::to_string(r.calls), fmt_bytes(r.bytes_allocated),
                       fmt_bytes(r.bytes_freed)});
    if (t.group_by_shape) c.push_back(r.shapes);
    cells.push_back(std::move(c));
  }
  std::vector<size_t> width(head.size(), 0);
  for (auto& row : cells)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string rule;
  for (size_t w : width) rule += std::string(w, '-') + "  ";
  rule += "\n";
  std::string out = rule;
  for (size_t r = 0; r < cells.size(); ++r) {
    for (size_t i = 0; i < cells[r].size(); ++i) {
      const std::string& s = cells[r][i];
      // Names left-aligned, numbers right-aligned.
      bool left = i < 2 || (t.group_by_phase && i == 2) || (t.group_by_shape && i + 1 == cells[r].size());
      std::string pad(width[i] - s.size(), ' ');
      out += left ? s + pad : pad + s;
      out += "  ";
    }
    out += "\n";
    if (r == 0) out += rule;
  }
  out += rule;
  out += "Self host time total: " + fmt_us(self_total) + "\n";
  out += "Device time total: " + fmt_us(device_total) + "\n";
  return out;
}

std::string Profile::chrome_trace() const {
  require_stopped(state_->stopped, "chrome_trace()");
  // Process 1: host threads (one track each); process 2 + i: device i's
  // default queue plus its allocated-bytes counter.
  constexpr int kHostPid = 1;
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto begin = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  auto meta = [&](const char* what, int pid, int tid, const std::string& name) {
    begin();
    out += "{\"ph\":\"M\",\"name\":\"";
    out += what;
    out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
    io::json::append_quoted(out, name);
    out += "}}";
  };
  meta("process_name", kHostPid, 0, "host");
  for (size_t i = 0; i < state_->thread_names.size(); ++i) meta("thread_name", kHostPid, int(i), state_->thread_names[i]);
  for (size_t d = 0; d < state_->devices.size(); ++d) {
    meta("process_name", int(2 + d), 0, state_->devices[d]);
    meta("thread_name", int(2 + d), 0, state_->devices[d] + " queue");
  }
  auto device_pid = [&](const std::string& dev) {
    for (size_t d = 0; d < state_->devices.size(); ++d)
      if (state_->devices[d] == dev) return int(2 + d);
    return -1;
  };
  auto slice = [&](const Event& e, int pid, int tid, double ts, double dur, const char* cat) {
    begin();
    out += "{\"ph\":\"X\",\"cat\":\"";
    out += cat;
    out += "\",\"name\":";
    io::json::append_quoted(out, e.name);
    out += ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + num(ts) +
           ",\"dur\":" + num(dur) + ",\"args\":{\"phase\":\"" + phase_name(e.phase) + "\"";
    if (!e.device.empty()) {
      out += ",\"device\":";
      io::json::append_quoted(out, e.device);
    }
    if (!e.shapes.empty()) {
      out += ",\"shapes\":";
      io::json::append_quoted(out, e.shapes);
    }
    out += ",\"bytes_allocated\":" + std::to_string(e.bytes_allocated) +
           ",\"bytes_freed\":" + std::to_string(e.bytes_freed);
    if (e.device_us >= 0) out += ",\"device_us\":" + num(e.device_us);
    out += "}}";
  };
  for (const Event& e : state_->events) {
    const bool range = e.kind == EventKind::range;
    slice(e, kHostPid, e.thread, e.start_us, e.host_us, range ? "range" : "op");
    int pid = range ? -1 : device_pid(e.device);
    if (pid >= 0 && e.device_us >= 0) slice(e, pid, 0, e.device_start_us, e.device_us, "kernel");
  }
  for (const MemorySample& m : state_->samples) {
    begin();
    out += "{\"ph\":\"C\",\"name\":\"allocated bytes\",\"pid\":" + std::to_string(2 + m.device) +
           ",\"tid\":0,\"ts\":" + num(m.ts_us) + ",\"args\":{\"bytes\":" + std::to_string(m.allocated) + "}}";
  }
  out += "\n]}\n";
  return out;
}

void Profile::export_chrome_trace(const std::string& path) const {
  std::string text = chrome_trace();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  VNN_CHECK(Error, f, "profiler: export_chrome_trace: cannot open '", path, "' for writing");
  f.write(text.data(), std::streamsize(text.size()));
  f.close();
  VNN_CHECK(Error, f, "profiler: export_chrome_trace: writing '", path, "' failed");
}

}  // namespace vnn::profiler
