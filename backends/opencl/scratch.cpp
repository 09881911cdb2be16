// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "scratch.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "errors.hpp"

namespace vnn_opencl {
namespace {

// Idle buffers beyond this are released, oldest first: enough for the
// scratch of a CNN layer's passes, little beside a device's memory.
constexpr size_t kIdleCap = size_t(256) << 20;
// And at most this many (a linear scan finds them).
constexpr size_t kIdleMaxEntries = 64;

struct Entry {
  cl_command_queue queue;
  cl_context context;
  size_t bytes;
  cl_mem mem;
};

// Never destroyed (as device.cpp's state): buffers are not released while
// the OpenCL runtime tears itself down at exit.
struct Pool {
  std::mutex mutex;
  std::vector<Entry> idle;  // oldest first
  size_t idle_bytes = 0;
};

Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

// Sizes in steps of an eighth of their power of two (at most 12.5% more
// than asked), so that shapes a little apart share buffers.
size_t rounded(size_t bytes) {
  if (bytes <= 4096) return 4096;
  size_t p = 4096;
  while (p < bytes) p <<= 1;
  const size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

// The smallest idle buffer of q that holds bytes and is at most twice as
// large, taken out of the pool; nullptr if none.
cl_mem take(Pool& p, cl_command_queue q, size_t bytes, size_t* got) {
  auto best = p.idle.end();
  for (auto it = p.idle.begin(); it != p.idle.end(); ++it)
    if (it->queue == q && it->bytes >= bytes && it->bytes <= 2 * bytes + 4096 &&
        (best == p.idle.end() || it->bytes < best->bytes))
      best = it;
  if (best == p.idle.end()) return nullptr;
  cl_mem m = best->mem;
  *got = best->bytes;
  p.idle_bytes -= best->bytes;
  p.idle.erase(best);
  return m;
}

// Releases the idle buffers that match (under p.mutex).
template <class Match>
void drop_if(Pool& p, Match match) {
  for (auto it = p.idle.begin(); it != p.idle.end();) {
    if (!match(*it)) {
      ++it;
      continue;
    }
    clReleaseMemObject(it->mem);
    p.idle_bytes -= it->bytes;
    it = p.idle.erase(it);
  }
}

}  // namespace

vnn_status Scratch::make(const Device& d, cl_command_queue q, size_t bytes, const std::string& what, Scratch* out) {
  out->give_back();
  const size_t want = rounded(std::max<size_t>(bytes, 1));
  Pool& p = pool();
  size_t got = 0;
  cl_mem m = nullptr;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    m = take(p, q, want, &got);
  }
  cl_int err = CL_SUCCESS;
  if (!m) {
    // The rounded size where the device allows it, else the exact one.
    got = want <= d.max_alloc ? want : std::max<size_t>(bytes, 1);
    m = clCreateBuffer(d.context, CL_MEM_READ_WRITE, got, nullptr, &err);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY) {
      {  // idle scratch of this device may be what is missing
        std::lock_guard<std::mutex> lock(p.mutex);
        drop_if(p, [&](const Entry& e) { return e.context == d.context; });
      }
      m = clCreateBuffer(d.context, CL_MEM_READ_WRITE, got, nullptr, &err);
    }
    if (err != CL_SUCCESS || !m)
      return fail_cl(err, what, ": scratch of ", bytes, " bytes on ", d.label, ": clCreateBuffer failed");
  }
  out->queue_ = q, out->context_ = d.context, out->mem_ = m, out->bytes_ = got;
  return VNN_STATUS_OK;
}

void Scratch::give_back() {
  if (!mem_) return;
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.idle.push_back({queue_, context_, bytes_, mem_});
  p.idle_bytes += bytes_;
  while ((p.idle_bytes > kIdleCap || p.idle.size() > kIdleMaxEntries) && !p.idle.empty()) {
    clReleaseMemObject(p.idle.front().mem);
    p.idle_bytes -= p.idle.front().bytes;
    p.idle.erase(p.idle.begin());
  }
  queue_ = nullptr, context_ = nullptr, mem_ = nullptr, bytes_ = 0;
}

void release_scratch(cl_command_queue q) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  drop_if(p, [&](const Entry& e) { return e.queue == q; });
}

}  // namespace vnn_opencl
