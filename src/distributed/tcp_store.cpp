// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A small TCP key-value store for rendezvous (torch's TCPStore protocol
// idea, not its wire format): one server thread on rank 0 answering set /
// get / add from every rank over blocking sockets. A get for a key that is
// not there yet is parked until some rank sets it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/store.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::distributed::detail {

std::string to_string(const Bytes& b) { return std::string(b.begin(), b.end()); }
Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

namespace {

enum Cmd : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kStopAccepting = 4 };

std::string errno_text() { return std::strerror(errno); }

// Whole-buffer socket I/O; false when the peer closed or failed.
bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= size_t(w);
  }
  return true;
}
bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= size_t(r);
  }
  return true;
}
bool write_blob(int fd, const Bytes& b) {
  uint64_t n = b.size();
  return write_all(fd, &n, sizeof n) && (n == 0 || write_all(fd, b.data(), n));
}
bool read_blob(int fd, Bytes& b, uint64_t limit = uint64_t(1) << 30) {
  uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n) || n > limit) return false;
  b.resize(n);
  return n == 0 || read_all(fd, b.data(), n);
}

class Server {
 public:
  Server(int port, Millis timeout) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0)
      VNN_THROW(DistributedError, "init_process_group: cannot create the store's socket: ", errno_text());
    int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 clients too
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(uint16_t(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(uint16_t(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0) {
      int e = errno;
      ::close(listen_fd_);
      VNN_CHECK(DistributedError, e != EADDRINUSE,
                "init_process_group: rank 0 cannot serve the rendezvous store: MASTER_PORT ", port,
                " is already in use on this host (another job, or a previous run still "
                "exiting); pick a free port (MASTER_PORT, vnn-run --master-port)");
      VNN_THROW(DistributedError, "init_process_group: rank 0 cannot bind MASTER_PORT ", port, ": ", std::strerror(e));
    }
    VNN_CHECK(DistributedError, ::listen(listen_fd_, 1024) == 0, "init_process_group: listen on MASTER_PORT ", port,
              " failed: ", errno_text());
    (void)timeout;
    thread_ = std::thread([this] { loop(); });
  }
  int clients() const { return clients_count_.load(); }
  ~Server() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (auto& c : clients_) ::close(c.fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

 private:
  struct Client {
    int fd;
  };
  struct Parked {
    int fd;
    std::string key;
  };

  void loop() {
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, short(listen_fd_ >= 0 ? POLLIN : 0), 0}};
      for (auto& c : clients_) fds.push_back({c.fd, POLLIN, 0});
      int n = ::poll(fds.data(), fds.size(), 100);
      if (n <= 0) continue;
      if (fds[0].revents & POLLIN) {
        int fd = ::accept(listen_fd_, nullptr, nullptr);
        if (fd >= 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients_.push_back({fd});
          clients_count_ = int(clients_.size());
        }
      }
      std::vector<int> dead;
      for (size_t i = 1; i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
          if (!serve(fds[i].fd)) dead.push_back(fds[i].fd);
      for (int fd : dead) drop(fd);
    }
  }

  void drop(int fd) {
    ::close(fd);
    for (size_t i = 0; i < clients_.size(); ++i)
      if (clients_[i].fd == fd) clients_.erase(clients_.begin() + long(i));
    clients_count_ = int(clients_.size());
    for (size_t i = parked_.size(); i-- > 0;)
      if (parked_[i].fd == fd) parked_.erase(parked_.begin() + long(i));
  }

  // One request from fd; false when the client is gone or spoke nonsense.
  bool serve(int fd) {
    uint8_t cmd = 0;
    Bytes key, value;
    if (!read_all(fd, &cmd, 1) || !read_blob(fd, key, 1 << 16)) return false;
    std::string k = to_string(key);
    switch (cmd) {
      case kSet: {
        if (!read_blob(fd, value)) return false;
        data_[k] = value;
        for (size_t i = parked_.size(); i-- > 0;)  // wake gets waiting on k
          if (parked_[i].key == k) {
            int pfd = parked_[i].fd;
            parked_.erase(parked_.begin() + long(i));
            if (!write_blob(pfd, value)) drop(pfd);
          }
        return write_blob(fd, {});
      }
      case kGet: {
        auto it = data_.find(k);
        if (it == data_.end()) {
          parked_.push_back({fd, k});
          return true;
        }
        return write_blob(fd, it->second);
      }
      case kStopAccepting:
        if (listen_fd_ >= 0) ::close(listen_fd_);
        listen_fd_ = -1;
        return write_blob(fd, {});
      case kAdd: {
        int64_t delta = 0;
        if (!read_all(fd, &delta, sizeof delta)) return false;
        int64_t now = 0;
        auto it = data_.find(k);
        if (it != data_.end() && it->second.size() == sizeof now) std::memcpy(&now, it->second.data(), sizeof now);
        now += delta;
        Bytes b(sizeof now);
        std::memcpy(b.data(), &now, sizeof now);
        data_[k] = b;
        return write_blob(fd, b);
      }
      default:
        return false;
    }
  }

  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> clients_count_{0};
  std::thread thread_;
  std::vector<Client> clients_;
  std::vector<Parked> parked_;
  std::map<std::string, Bytes> data_;
};

class TcpStore final : public Store {
 public:
  TcpStore(const std::string& host, int port, bool is_server, int rank, Millis timeout)
      : host_(host), port_(port), rank_(rank), timeout_(timeout) {
    if (is_server) server_ = std::make_unique<Server>(port, timeout);
    connect_with_retry();
  }
  ~TcpStore() override {
    if (fd_ >= 0) ::close(fd_);
    server_.reset();
  }

  void set(const std::string& key, const Bytes& value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    uint8_t c = kSet;
    Bytes ack;
    if (!write_all(fd_, &c, 1) || !write_blob(fd_, to_bytes(key)) || !write_blob(fd_, value) || !reply(ack, key))
      lost("set", key);
  }
  Bytes get(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    uint8_t c = kGet;
    Bytes value;
    if (!write_all(fd_, &c, 1) || !write_blob(fd_, to_bytes(key)) || !reply(value, key)) lost("get", key);
    return value;
  }
  int64_t add(const std::string& key, int64_t delta) override {
    std::lock_guard<std::mutex> lock(mutex_);
    uint8_t c = kAdd;
    Bytes value;
    if (!write_all(fd_, &c, 1) || !write_blob(fd_, to_bytes(key)) || !write_all(fd_, &delta, sizeof delta) ||
        !reply(value, key) || value.size() != sizeof(int64_t))
      lost("add", key);
    int64_t v;
    std::memcpy(&v, value.data(), sizeof v);
    return v;
  }
  void set_timeout(Millis t) override { timeout_ = t; }
  Millis timeout() const override { return timeout_; }
  void linger(Millis limit) override {
    if (!server_) return;
    auto until = std::chrono::steady_clock::now() + limit;
    while (server_->clients() > 1 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  void stop_accepting() override {
    if (!server_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    uint8_t c = kStopAccepting;
    Bytes ack;
    if (!write_all(fd_, &c, 1) || !write_blob(fd_, {}) || !reply(ack, "(stop)")) lost("stop_accepting", "");
  }

 private:
  std::string where() const { return host_ + ":" + std::to_string(port_); }

  // Waits up to the timeout for the answer.
  bool reply(Bytes& out, const std::string& key) {
    pollfd p{fd_, POLLIN, 0};
    int n;
    do n = ::poll(&p, 1, int(timeout_.count()));
    while (n < 0 && errno == EINTR);
    VNN_CHECK(DistributedError, n != 0, "rank ", rank_, ": the rendezvous store at ", where(), " had no key '", key,
              "' after ", timeout_.count(),
              " ms: a rank did not arrive (did every rank start, with the same WORLD_SIZE, "
              "MASTER_ADDR and MASTER_PORT?)");
    return read_blob(fd_, out);
  }
  [[noreturn]] void lost(const char* what, const std::string& key) {
    VNN_THROW(DistributedError, "rank ", rank_, ": the rendezvous store at ", where(), " closed the connection during ",
              what, "('", key, "'): rank 0 exited or failed");
  }

  void connect_with_retry() {
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    std::string last = "no attempt";
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    while (true) {
      addrinfo* res = nullptr;
      int g = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &res);
      if (g != 0) {
        VNN_THROW(DistributedError, "rank ", rank_, ": MASTER_ADDR '", host_, "' does not resolve: ", gai_strerror(g));
      }
      for (addrinfo* a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          fd_ = fd;
          break;
        }
        last = errno_text();
        ::close(fd);
      }
      ::freeaddrinfo(res);
      if (fd_ >= 0) return;
      if (std::chrono::steady_clock::now() >= deadline)
        VNN_THROW(DistributedError, "rank ", rank_, ": cannot reach the rendezvous store at ", where(), " within ",
                  timeout_.count(), " ms (", last,
                  "); is rank 0 running, and are MASTER_ADDR / MASTER_PORT the same on every rank?");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string host_;
  int port_, rank_;
  Millis timeout_;
  std::unique_ptr<Server> server_;
  int fd_ = -1;
  std::mutex mutex_;
};

class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, Store& base) : prefix_(std::move(prefix) + "/"), base_(base) {}
  void set(const std::string& k, const Bytes& v) override { base_.set(prefix_ + k, v); }
  Bytes get(const std::string& k) override { return base_.get(prefix_ + k); }
  int64_t add(const std::string& k, int64_t d) override { return base_.add(prefix_ + k, d); }
  void set_timeout(Millis t) override { base_.set_timeout(t); }
  Millis timeout() const override { return base_.timeout(); }

 private:
  std::string prefix_;
  Store& base_;
};

}  // namespace

std::unique_ptr<Store> make_tcp_store(const std::string& host, int port, bool is_server, int rank, Millis timeout) {
  return std::make_unique<TcpStore>(host, port, is_server, rank, timeout);
}
std::unique_ptr<Store> make_prefix_store(const std::string& prefix, Store& base) {
  return std::make_unique<PrefixStore>(prefix, base);
}

}  // namespace vnn::distributed::detail
