// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Gloo engine: Gloo's TCP transport, full-mesh rendezvous through the
// group's store, and Gloo's own algorithms (ring allreduce, ...).
#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "distributed/engine.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

#ifdef VNN_HAVE_GLOO
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#endif

namespace vnn::distributed::detail {

size_t reducible_itemsize(DType dtype, const char* collective) {
  switch (dtype) {
    case kFloat32: case kFloat64: case kInt32: case kInt64: case kUInt8:
      return itemsize(dtype);
    default:
      VNN_THROW(DTypeError, collective, ": dtype ", vnn::name(dtype),
                " cannot be reduced; use float32, float64, int32, int64 or uint8 (convert with .to())");
  }
}

#ifdef VNN_HAVE_GLOO
bool gloo_available() { return true; }

namespace {

// Gloo's rendezvous talks to our store.
class GlooStore final : public ::gloo::rendezvous::Store {
 public:
  explicit GlooStore(detail::Store& s) : s_(s) {}
  void set(const std::string& key, const std::vector<char>& data) override { s_.set(key, data); }
  std::vector<char> get(const std::string& key) override { return s_.get(key); }
  void wait(const std::vector<std::string>& keys) override {
    for (auto& k : keys) s_.get(k);
  }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override { wait(keys); }

 private:
  detail::Store& s_;
};

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// The address of the interface that routes to the master: connecting a UDP
// socket sends nothing but picks the source address.
std::string local_address_towards(const std::string& master) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(master.c_str(), "9", &hints, &res) != 0 || !res) return "";
  std::string out;
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in me{};
    socklen_t len = sizeof me;
    char buf[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0 &&
        ::inet_ntop(AF_INET, &me.sin_addr, buf, sizeof buf))
      out = buf;
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(res);
  return out;
}

template <class T>
::gloo::AllreduceOptions::Func reduce_fn(ReduceOp op) {
  using F = void (*)(void*, const void*, const void*, size_t);
  switch (op) {
    case ReduceOp::sum: case ReduceOp::avg: return F(&::gloo::sum<T>);
    case ReduceOp::product: return F(&::gloo::product<T>);
    case ReduceOp::min: return F(&::gloo::min<T>);
    case ReduceOp::max: return F(&::gloo::max<T>);
  }
  return F(&::gloo::sum<T>);
}

template <class T>
void typed_allreduce(const std::shared_ptr<::gloo::Context>& ctx, void* data, size_t count, ReduceOp op,
                     Millis timeout, uint32_t tag) {
  ::gloo::AllreduceOptions o(ctx);
  o.setOutput(static_cast<T*>(data), count);
  o.setReduceFunction(reduce_fn<T>(op));
  o.setTimeout(timeout);
  o.setTag(tag);
  ::gloo::allreduce(o);
}

class GlooP2P final : public PendingP2P {
 public:
  GlooP2P(std::unique_ptr<::gloo::transport::UnboundBuffer> buf, bool is_send)
      : buf_(std::move(buf)), send_(is_send) {}
  void wait(Millis timeout) override {
    bool ok = send_ ? buf_->waitSend(timeout) : buf_->waitRecv(timeout);
    VNN_CHECK(DistributedError, ok, send_ ? "send" : "recv", " was aborted");
  }

 private:
  std::unique_ptr<::gloo::transport::UnboundBuffer> buf_;
  bool send_;
};

class GlooEngine final : public Engine {
 public:
  GlooEngine(const EngineConfig& cfg, Store& store) {
    ::gloo::transport::tcp::attr attr;
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) attr.iface = ifname;
    else if (cfg.master_addr.empty() || is_loopback(cfg.master_addr)) attr.hostname = "127.0.0.1";
    else {
      attr.hostname = local_address_towards(cfg.master_addr);
      if (attr.hostname.empty()) attr.hostname = cfg.master_addr;
    }
    auto device = ::gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<::gloo::rendezvous::Context>(cfg.rank, cfg.world_size);
    ctx->setTimeout(cfg.timeout);
    GlooStore gs(store);
    ctx->connectFullMesh(gs, device);
    ctx_ = ctx;
  }
  ~GlooEngine() override = default;

  const char* name() const override { return "gloo"; }
  int rank() const override { return ctx_->rank; }
  int size() const override { return ctx_->size; }

  void allreduce(void* data, size_t count, DType dtype, ReduceOp op, Millis timeout, uint32_t tag) override {
    switch (dtype) {
      case kFloat32: return typed_allreduce<float>(ctx_, data, count, op, timeout, tag);
      case kFloat64: return typed_allreduce<double>(ctx_, data, count, op, timeout, tag);
      case kInt32: return typed_allreduce<int32_t>(ctx_, data, count, op, timeout, tag);
      case kInt64: return typed_allreduce<int64_t>(ctx_, data, count, op, timeout, tag);
      case kUInt8: return typed_allreduce<uint8_t>(ctx_, data, count, op, timeout, tag);
      default: reducible_itemsize(dtype, "allreduce");
    }
  }
  void broadcast(void* data, size_t bytes, int root, Millis timeout, uint32_t tag) override {
    ::gloo::BroadcastOptions o(ctx_);
    o.setOutput(static_cast<uint8_t*>(data), bytes);
    o.setRoot(root);
    o.setTimeout(timeout);
    o.setTag(tag);
    ::gloo::broadcast(o);
  }
  void allgather(const void* in, void* out, size_t bytes, Millis timeout, uint32_t tag) override {
    ::gloo::AllgatherOptions o(ctx_);
    o.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), bytes);
    o.setOutput(static_cast<uint8_t*>(out), bytes * size_t(size()));
    o.setTimeout(timeout);
    o.setTag(tag);
    ::gloo::allgather(o);
  }
  // Gloo 0.5 has no reduce-scatter in its options API (only the older
  // halving-doubling algorithm class): allreduce a copy, keep our piece.
  void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op, Millis timeout,
                      uint32_t tag) override {
    size_t item = reducible_itemsize(dtype, "reduce_scatter");
    std::vector<char> all(static_cast<const char*>(in), static_cast<const char*>(in) + count * item * size_t(size()));
    allreduce(all.data(), count * size_t(size()), dtype, op, timeout, tag);
    std::memcpy(out, all.data() + size_t(rank()) * count * item, count * item);
  }
  void barrier(Millis timeout) override {
    ::gloo::BarrierOptions o(ctx_);
    o.setTimeout(timeout);
    ::gloo::barrier(o);
  }
  std::unique_ptr<PendingP2P> send(const void* data, size_t bytes, int dst, int tag) override {
    auto buf = ctx_->createUnboundBuffer(const_cast<void*>(data), bytes);
    buf->send(dst, slot(tag));
    return std::make_unique<GlooP2P>(std::move(buf), true);
  }
  std::unique_ptr<PendingP2P> recv(void* data, size_t bytes, int src, int tag) override {
    auto buf = ctx_->createUnboundBuffer(data, bytes);
    buf->recv(src, slot(tag));
    return std::make_unique<GlooP2P>(std::move(buf), false);
  }

 private:
  // User tags live above the slots Gloo's collectives use.
  static uint64_t slot(int tag) { return (uint64_t(1) << 56) | uint32_t(tag); }
  std::shared_ptr<::gloo::Context> ctx_;
};

}  // namespace

// Gloo's TCP pairs write with writev, which raises SIGPIPE when the peer has
// died; its default action ends this process before Gloo can report the broken
// pair. Python starts with SIGPIPE ignored, so PyTorch's Gloo never meets it; a
// C++ program does. Ignore it unless the program installed a handler of its own:
// writes then fail with EPIPE and the group throws DistributedError naming the
// dead rank. (Like Python's, the setting is process-wide and survives exec.)
static void ignore_sigpipe_unless_handled() {
  struct sigaction old {};
  if (::sigaction(SIGPIPE, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) return;
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGPIPE, &ign, nullptr);
}

std::unique_ptr<Engine> make_gloo_engine(const EngineConfig& cfg, Store& store) {
  ignore_sigpipe_unless_handled();
  try {
    return std::make_unique<GlooEngine>(cfg, store);
  } catch (const vnn::Error&) {
    throw;
  } catch (const std::exception& e) {
    VNN_THROW(DistributedError, "rank ", cfg.rank, ": gloo could not connect the ", cfg.world_size,
              " ranks: ", e.what());
  }
}

#else
bool gloo_available() { return false; }
std::unique_ptr<Engine> make_gloo_engine(const EngineConfig&, Store&) {
  VNN_THROW(Unsupported, "init_process_group: this vnn was built without Gloo (install libgloo-dev and rebuild)");
}
#endif

}  // namespace vnn::distributed::detail
