// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/pinned_host_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <string>

#include "runtime/device_context.hpp"
#include "runtime/stream_state.hpp"
#include "vnn/checked_size.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::detail {

namespace {

constexpr uint64_t kGiB = uint64_t(1) << 30;

std::mutex g_limit_mutex;
std::atomic<bool> g_limit_known{false};
std::atomic<uint64_t> g_limit{0};

uint64_t default_limit() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return kGiB;
  return std::min<uint64_t>(kGiB, uint64_t(pages) / 10 * uint64_t(page));
}

// The limit once known; release() (which cannot throw) runs only after an
// acquire has resolved it, so the fallback is never really taken.
uint64_t known_limit() noexcept {
  return g_limit_known.load(std::memory_order_acquire) ? g_limit.load(std::memory_order_relaxed) : kGiB;
}

}  // namespace

bool parse_byte_size(const char* text, uint64_t* out) {
  if (!text) return false;
  const char* p = text;
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  if (!std::isdigit(static_cast<unsigned char>(*p))) return false;
  int64_t n = 0;
  for (; std::isdigit(static_cast<unsigned char>(*p)); ++p)
    if (!checked::mul(n, 10, &n) || !checked::add(n, *p - '0', &n)) return false;
  std::string unit;
  for (; *p && !std::isspace(static_cast<unsigned char>(*p)); ++p)
    unit += char(std::tolower(static_cast<unsigned char>(*p)));
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  if (*p) return false;
  int shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  else if (unit == "t" || unit == "tb" || unit == "tib") shift = 40;
  else return false;
  if (!checked::mul(n, int64_t(1) << shift, &n)) return false;
  *out = uint64_t(n);
  return true;
}

uint64_t pinned_limit() {
  if (g_limit_known.load(std::memory_order_acquire)) return g_limit.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_limit_mutex);
  if (g_limit_known.load(std::memory_order_relaxed)) return g_limit.load(std::memory_order_relaxed);
  uint64_t limit = default_limit();
  if (const char* env = std::getenv("VNN_PINNED_MEMORY_LIMIT"); env && *env && !parse_byte_size(env, &limit))
    VNN_THROW(ValueError, "pin_memory: VNN_PINNED_MEMORY_LIMIT=\"", env,
              "\" is not a size; give bytes, optionally with a unit (e.g. 268435456, 256M, 1GiB), "
              "or unset it for the default (min(1 GiB, RAM / 10))");
  g_limit.store(limit, std::memory_order_relaxed);
  g_limit_known.store(true, std::memory_order_release);
  return limit;
}

void set_pinned_limit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(g_limit_mutex);
  g_limit.store(bytes, std::memory_order_relaxed);
  g_limit_known.store(true, std::memory_order_release);
}

size_t PinnedHostCache::size_class(size_t bytes) {
  size_t c = 4096;
  while (c < bytes) c <<= 1;
  return c;
}

void PinnedHostCache::note_peak() {
  stats_.peak_reserved = std::max(stats_.peak_reserved, reserved());
  stats_.peak_blocks =
      std::max(stats_.peak_blocks, stats_.blocks_in_use + stats_.blocks_pending + stats_.blocks_cached);
}

bool PinnedHostCache::uses_done(const Block& b) const {
  for (const Use& u : b.uses)
    if (!event_done(*u.ctx, u.event, "pin_memory (pinned block reuse)")) return false;
  return true;
}

void PinnedHostCache::spare_events(std::vector<Use>& uses) {
  for (Use& u : uses) spare_.push_back(u);
  uses.clear();
}

void PinnedHostCache::forget(void* p, Block& b) {
  spare_events(b.uses);
  --stats_.blocks_cached;  // callers move the block to the cached state first
  stats_.cached -= b.size;
  ++stats_.backend_frees;
  blocks_.erase(p);
}

void PinnedHostCache::retire(void* p, Block& b) {
  spare_events(b.uses);
  --stats_.blocks_pending;
  stats_.pending -= b.size;
  b.state = State::cached;
  ++stats_.blocks_cached;
  stats_.cached += b.size;
  free_[b.size].push_back(p);
}

void* PinnedHostCache::hand_out(void* p, Block& b) {
  b.state = State::in_use;
  ++stats_.blocks_in_use;
  stats_.in_use += b.size;
  ++stats_.allocations;
  return p;
}

void PinnedHostCache::collect_completed() {
  while (!pending_.empty()) {
    void* p = pending_.front();
    Block& b = blocks_.at(p);
    if (!uses_done(b)) return;
    pending_.pop_front();
    retire(p, b);
  }
}

void* PinnedHostCache::take_cached(size_t c) {
  auto it = free_.find(c);
  if (it == free_.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  Block& b = blocks_.at(p);
  --stats_.blocks_cached;
  stats_.cached -= c;
  return hand_out(p, b);
}

void PinnedHostCache::shed(uint64_t limit, uint64_t need, std::vector<void*>* to_free) {
  for (auto& [size, list] : free_)
    while (committed() + need > limit && !list.empty()) {
      void* p = list.back();
      list.pop_back();
      forget(p, blocks_.at(p));
      to_free->push_back(p);
    }
}

void PinnedHostCache::free_blocks(DeviceContext& pinner, const std::vector<void*>& blocks) {
  for (void* p : blocks) (void)pinner.backend->host_free(pinner.plugin_index, p);
}

void* PinnedHostCache::acquire(DeviceContext& pinner, size_t bytes) {
  if (bytes > (size_t(1) << 62))
    VNN_THROW(OutOfMemory, "pin_memory: ", bytes, " bytes of pinned host memory cannot be allocated");
  const size_t c = size_class(bytes);
  const uint64_t limit = pinned_limit();
  for (;;) {
    std::vector<void*> give_back;
    void* got = nullptr;
    void* oldest = nullptr;
    bool wait_for_peer = false;
    std::vector<Use> uses;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      collect_completed();
      got = take_cached(c);
      // Past the limit, cached blocks (of other sizes when none of c is
      // left) go back first ...
      shed(limit, got ? 0 : c, &give_back);
      // ... then the oldest pending block is waited for, or, when other
      // threads already wait on the last ones, their outcome; with none,
      // every block is in a live tensor and the limit is exceeded (a soft one).
      if (!got && committed() + c > limit && !pending_.empty()) {
        oldest = pending_.front();
        pending_.pop_front();
        Block& b = blocks_.at(oldest);
        b.state = State::waited_on;  // out of pending_, still counted as pending
        ++waited_on_;
        uses = b.uses;
        ++stats_.limit_waits;
      } else if (!got && committed() + c > limit && waited_on_ > 0) {
        wait_for_peer = true;
      } else if (!got) {
        allocating_ += c;  // decided: counted against the limit until the block arrives
      }
    }
    free_blocks(pinner, give_back);
    if (got) return got;
    if (wait_for_peer) {
      std::unique_lock<std::mutex> lock(mutex_);
      // Bounded, so that a peer's block taken at once by that peer (every
      // block in use) only delays this thread; the loop then decides again.
      retired_.wait_for(lock, std::chrono::milliseconds(20), [&] { return waited_on_ == 0; });
      continue;
    }
    if (!oldest) break;
    try {
      for (const Use& u : uses) event_wait(*u.ctx, u.event, "pin_memory (waiting for a pinned block, limit reached)");
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks_.at(oldest).state = State::pending;
      pending_.push_front(oldest);
      --waited_on_;
      retired_.notify_all();
      throw;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    Block& b = blocks_.at(oldest);
    retire(oldest, b);  // cached: reused below if it is of size c, else shed by the next round
    --waited_on_;
    retired_.notify_all();
    if (void* p = take_cached(c)) return p;
  }

  void* p = nullptr;
  vnn_status s = pinner.backend->host_alloc(pinner.plugin_index, c, &p);
  if (s == VNN_STATUS_OUT_OF_MEMORY) {  // cached blocks of other sizes may be what is missing
    empty(pinner);
    s = pinner.backend->host_alloc(pinner.plugin_index, c, &p);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    allocating_ -= c;  // arrived (or failed): from here it counts as reserved
  }
  pinner.check(s, "pin_memory");
  std::lock_guard<std::mutex> lock(mutex_);
  Block& b = blocks_[p];
  b.size = c;
  ++stats_.backend_allocations;
  hand_out(p, b);
  note_peak();
  return p;
}

void PinnedHostCache::release(DeviceContext& pinner, void* block, size_t) noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = blocks_.find(block);
  if (it == blocks_.end()) return;  // not ours: nothing sensible to do in a destructor
  Block& b = it->second;
  --stats_.blocks_in_use;
  stats_.in_use -= b.size;
  if (!b.uses.empty()) {
    b.state = State::pending;
    ++stats_.blocks_pending;
    stats_.pending += b.size;
    pending_.push_back(block);
    return;
  }
  b.state = State::cached;
  ++stats_.blocks_cached;
  stats_.cached += b.size;
  if (reserved() <= known_limit()) {
    free_[b.size].push_back(block);
    return;
  }
  forget(block, b);
  lock.unlock();
  (void)pinner.backend->host_free(pinner.plugin_index, block);
}

void PinnedHostCache::record_use(DeviceContext& copier, void* queue, void* block) {
  const vnn_backend* be = copier.backend;
  if (!be->event_create || !be->event_record || !be->event_synchronize) {
    // No events to tell when the copy is done: finish it now.
    copier.check(be->queue_synchronize(copier.plugin_index, queue), "to (pinned copy, no events)");
    return;
  }
  void* ev = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(spare_.begin(), spare_.end(), [&](const Use& u) { return u.ctx == &copier; });
    if (it != spare_.end()) {
      ev = it->event;
      *it = spare_.back();
      spare_.pop_back();
    }
  }
  if (!ev) copier.check(be->event_create(copier.plugin_index, &ev), "to (pinned copy: event_create)");
  vnn_status s = be->event_record(copier.plugin_index, ev, queue);
  if (s != VNN_STATUS_OK) {
    // Without the event the block could be reused under the copy: wait for it.
    (void)be->queue_synchronize(copier.plugin_index, queue);
    if (be->event_destroy) (void)be->event_destroy(copier.plugin_index, ev);
    copier.check(s, "to (pinned copy: event_record)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(block);
  if (it == blocks_.end()) {  // cannot happen for a block of this cache; keep the event for reuse
    spare_.push_back({&copier, queue, ev});
    return;
  }
  // On an in-order queue the newest event covers the older ones.
  for (Use& u : it->second.uses)
    if (u.ctx == &copier && u.queue == queue) {
      std::swap(u.event, ev);
      spare_.push_back({&copier, queue, ev});
      return;
    }
  it->second.uses.push_back({&copier, queue, ev});
}

void PinnedHostCache::empty(DeviceContext& pinner) {
  std::vector<void*> blocks;
  std::vector<Use> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    collect_completed();
    for (auto& [size, list] : free_)
      for (void* p : list) {
        forget(p, blocks_.at(p));
        blocks.push_back(p);
      }
    free_.clear();
    events.swap(spare_);
  }
  free_blocks(pinner, blocks);
  for (const Use& u : events)
    if (u.ctx->backend->event_destroy) (void)u.ctx->backend->event_destroy(u.ctx->plugin_index, u.event);
}

void PinnedHostCache::trim(DeviceContext& pinner, uint64_t limit) {
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shed(limit, 0, &blocks);
  }
  free_blocks(pinner, blocks);
}

PinnedHostStats PinnedHostCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void PinnedHostCache::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_reserved = reserved();
  stats_.peak_blocks = stats_.blocks_in_use + stats_.blocks_pending + stats_.blocks_cached;
}

}  // namespace vnn::detail
