// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A TCP port that is free now on this host, for a rendezvous on one node
// (vnn-run, the distributed tests); plain POSIX, header-only: vnn-run links
// nothing of libvnn.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>

namespace vnn::tools {

// Binds a TCP socket to port (0: the kernel picks one) and closes it: the
// port bound, or -1.
inline int probe_port(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(uint16_t(port));
  socklen_t len = sizeof a;
  int bound = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    bound = ntohs(a.sin_port);
  ::close(fd);
  return bound;
}

// A random port below the kernel's ephemeral range (ip_local_port_range,
// 32768 by default) that binds now; where that range starts too low to
// leave room, or 64 tries found none, one the kernel picks; -1 when no
// socket binds. The port is released before the ranks start, as torchrun's
// is, so another program may take it in between (rank 0 then reports it in
// use); below the ephemeral range no outgoing connection takes it as its
// source port, which a port the kernel hands out could meet at once: two
// distributed tests side by side under ctest -j2 collided so.
inline int free_port() {
  int low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> low;
  const int first = std::max(1024, low / 2);
  if (low - first >= 1024) {
    std::mt19937 rng(std::random_device{}() ^ unsigned(::getpid()));
    for (int attempt = 0; attempt < 64; ++attempt)
      if (int port = probe_port(first + int(rng() % unsigned(low - first))); port > 0) return port;
  }
  return probe_port(0);
}

}  // namespace vnn::tools
