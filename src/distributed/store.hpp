// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rendezvous key-value stores for process groups: the TCP store rank 0
// serves on MASTER_ADDR:MASTER_PORT (the role of torch's TCPStore; Gloo in
// Debian 12 ships File / Hash / Prefix / Redis stores but no TCP one), and
// an adapter that hands any of them to Gloo. Stores carry only rendezvous
// data (addresses, NCCL unique ids, agreement checks); tensors travel over
// the engines.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vnn::distributed::detail {

using Bytes = std::vector<char>;
using Millis = std::chrono::milliseconds;

class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Blocks until the key exists; DistributedError after the timeout.
  virtual Bytes get(const std::string& key) = 0;
  // Atomically adds delta to an integer key (created as 0); returns the sum.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  virtual void set_timeout(Millis timeout) = 0;
  virtual Millis timeout() const = 0;
  // The server takes no new connections (so that a rank re-initialising
  // after destroy cannot reach a store about to go away). No-op elsewhere.
  virtual void stop_accepting() {}
  // On the server: waits (at most `limit`) until the other ranks hung up, so
  // that a rank 0 failing in rendezvous lets the others read their answers.
  virtual void linger(Millis limit) { (void)limit; }
};

// Rank 0 (is_server) binds port on every interface and serves; every rank,
// rank 0 included, is a client. Throws DistributedError when the port is
// taken or the server cannot be reached within the timeout.
std::unique_ptr<Store> make_tcp_store(const std::string& host, int port, bool is_server, int rank,
                                      Millis timeout);
// Keys under "prefix/" of another store (one namespace per group or purpose).
std::unique_ptr<Store> make_prefix_store(const std::string& prefix, Store& base);

std::string to_string(const Bytes& b);
Bytes to_bytes(const std::string& s);

}  // namespace vnn::distributed::detail
