// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a Profile holds once stopped, shared by the recorder (profiler.cpp)
// and the reports (report.cpp).
#pragma once
#include <string>
#include <vector>

#include "vnn/profiler.h"

namespace vnn::profiler {

struct MemorySample {
  int device;       // index into devices
  double ts_us;     // host time of the op that sampled it
  uint64_t allocated;
};

struct Profile::State {
  struct Recorder* rec = nullptr;  // owned; null once stopped
  bool stopped = false;
  std::vector<Event> events;
  std::vector<std::string> thread_names;  // by Event::thread
  std::vector<std::string> devices;       // in order of first op
  std::vector<MemorySample> samples;
  std::vector<DeviceMemory> memory;
};

}  // namespace vnn::profiler
