// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn-run: starts one process per rank with torchrun's environment contract.
//
//   vnn-run --nproc-per-node N [--nnodes M --node-rank R --master-addr A
//           --master-port P] [--grace-period S] PROGRAM ARGS...
//
// - Each rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
//   GROUP_RANK (= node rank), ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR and
//   MASTER_PORT; on one node without --master-port a free port is chosen.
//   OMP_NUM_THREADS=1 is set when N > 1 and it is unset (torchrun does too:
//   N ranks with all cores each oversubscribe the machine).
// - Every line a rank writes to stdout / stderr comes out on vnn-run's
//   stdout / stderr as "[rankK]: line" (read through pipes, one write per
//   line, so lines of different ranks never interleave); a "\r" redraw (a
//   progress bar) is prefixed likewise.
// - SIGINT / SIGTERM / SIGHUP sent to vnn-run go to every rank.
// - When a rank exits non-zero (or is killed), the others get SIGTERM, then
//   SIGKILL after the grace period; vnn-run exits with that rank's code and
//   prints its last error line.
// - Each rank is the leader of its own process group and the whole group is
//   signalled, so what a rank started is ended with it: no process is left
//   behind. Ranks read stdin from /dev/null.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "free_port.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int nproc_per_node = 0;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;
  int master_port = 0;  // 0: choose (one node) or 29500 (several nodes)
  double grace_s = 5.0;
  std::vector<std::string> argv;  // PROGRAM ARGS...
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr,
               "vnn-run: %s\n"
               "usage: vnn-run --nproc-per-node N [--nnodes M --node-rank R --master-addr A --master-port P]\n"
               "               [--grace-period SECONDS] PROGRAM ARGS...\n",
               msg.c_str());
  std::exit(2);
}

long parse_int(const std::string& flag, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
    usage_error(flag + " wants an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v +
                "'");
  return x;
}

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      std::printf(
          "usage: vnn-run --nproc-per-node N [--nnodes M --node-rank R --master-addr A --master-port P]\n"
          "               [--grace-period SECONDS] PROGRAM ARGS...\n"
          "Starts N ranks of PROGRAM on this node with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
          "GROUP_RANK, MASTER_ADDR and MASTER_PORT set (torchrun's contract). Output lines are prefixed\n"
          "with [rankK]:. When a rank fails the others are ended (SIGTERM, SIGKILL after the grace period,\n"
          "default 5 s) and vnn-run exits with the failed rank's code.\n");
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0) break;  // PROGRAM
    std::string flag = a, value;
    auto eq = a.find('=');
    if (eq != std::string::npos) {
      flag = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else {
      if (i + 1 >= argc) usage_error(flag + " wants a value");
      value = argv[++i];
    }
    for (auto& c : flag)
      if (c == '_') c = '-';  // torchrun spells them both ways
    if (flag == "--nproc-per-node")
      o.nproc_per_node = int(parse_int(flag, value, 1, 4096));
    else if (flag == "--nnodes")
      o.nnodes = int(parse_int(flag, value, 1, 65536));
    else if (flag == "--node-rank")
      o.node_rank = int(parse_int(flag, value, 0, 65535));
    else if (flag == "--master-addr")
      o.master_addr = value;
    else if (flag == "--master-port")
      o.master_port = int(parse_int(flag, value, 1, 65535));
    else if (flag == "--grace-period") {
      char* end = nullptr;
      o.grace_s = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(o.grace_s >= 0) || o.grace_s > 3600)
        usage_error("--grace-period wants seconds in [0, 3600], got '" + value + "'");
    } else
      usage_error("unknown option " + flag);
  }
  for (; i < argc; ++i) o.argv.emplace_back(argv[i]);
  if (o.nproc_per_node == 0) usage_error("--nproc-per-node N is required");
  if (o.argv.empty()) usage_error("no PROGRAM given");
  if (o.node_rank >= o.nnodes)
    usage_error("--node-rank " + std::to_string(o.node_rank) + " must be below --nnodes " + std::to_string(o.nnodes));
  if (int64_t(o.nproc_per_node) * o.nnodes > (1 << 24)) usage_error("world size nproc-per-node x nnodes is too large");
  if (o.nnodes > 1 && o.master_addr.empty())
    usage_error("--nnodes " + std::to_string(o.nnodes) +
                " needs --master-addr: the address of node 0, which every node can reach");
  if (o.master_addr.empty()) o.master_addr = "127.0.0.1";
  return o;
}

// Writes all of s to fd (retrying on EINTR / short writes).
void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // our stdout is gone (closed pipe): nothing useful left to do
    }
    off += size_t(n);
  }
}

// One output stream of one rank: splits what arrives into lines.
struct Stream {
  int fd = -1;      // read end of the pipe; -1 after EOF
  int out_fd = 1;   // where prefixed lines go
  std::string partial;
  std::string last_line;  // last non-empty line, for the failure message

  // Longer lines are passed on in pieces so memory stays bounded.
  static constexpr size_t kMaxLine = 64 * 1024;

  // `end` is "\n", or "\r" for a progress bar redrawn in place: each
  // redraw is prefixed too, so the bar still works on a terminal.
  void emit(const std::string& prefix, const std::string& line, const char* end = "\n") {
    write_all(out_fd, prefix + line + end);
    if (line.find_first_not_of(" \t") != std::string::npos) last_line = line;
  }
  void feed(const std::string& prefix, const char* data, size_t n) {
    partial.append(data, n);
    size_t start = 0;
    for (size_t i = 0; i < partial.size(); ++i) {
      char c = partial[i];
      if (c == '\n') {
        emit(prefix, partial.substr(start, i - start));
        start = i + 1;
      } else if (c == '\r') {
        if (i + 1 == partial.size()) break;  // "\r\n" or "\r": the next read tells
        if (partial[i + 1] == '\n') {
          emit(prefix, partial.substr(start, i - start));
          ++i;
        } else {
          emit(prefix, partial.substr(start, i - start), "\r");
        }
        start = i + 1;
      }
    }
    partial.erase(0, start);
    while (partial.size() >= kMaxLine) {
      emit(prefix, partial.substr(0, kMaxLine));
      partial.erase(0, kMaxLine);
    }
  }
  void finish(const std::string& prefix) {
    if (!partial.empty()) emit(prefix, partial);
    partial.clear();
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Rank {
  int global = 0, local = 0;
  pid_t pid = -1;        // also its process group id
  bool running = false;
  int status = 0;        // from waitpid
  std::string prefix;
  Stream out, err;
};

int signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  (void)!::write(signal_pipe[1], &b, 1);
  errno = saved;
}

void set_cloexec_nonblock(int fd, bool nonblock) {
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (nonblock) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int s = WTERMSIG(status);
    const char* name = ::strsignal(s);
    return "was killed by signal " + std::to_string(s) + (name ? std::string(" (") + name + ")" : "");
  }
  return "ended with status " + std::to_string(status);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// The child: own process group, pipes on fds 1 and 2, the contract in the
// environment, then exec. Only async-signal-safe calls after fork, except
// setenv, which is fine since this process has one thread.
[[noreturn]] void exec_rank(const Options& o, const Rank& r, int out_w, int err_w, const std::string& port) {
  ::setpgid(0, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) ::sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Ranks live in background process groups: reading the terminal would stop
  // them (SIGTTIN), so stdin is /dev/null, as under mpirun.
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, 0);
  ::dup2(out_w, 1);
  ::dup2(err_w, 2);
  const int world = o.nproc_per_node * o.nnodes;
  auto set = [](const char* k, const std::string& v) { ::setenv(k, v.c_str(), 1); };
  set("RANK", std::to_string(r.global));
  set("WORLD_SIZE", std::to_string(world));
  set("LOCAL_RANK", std::to_string(r.local));
  set("LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node));
  set("GROUP_RANK", std::to_string(o.node_rank));
  set("ROLE_RANK", std::to_string(r.global));
  set("ROLE_WORLD_SIZE", std::to_string(world));
  set("MASTER_ADDR", o.master_addr);
  set("MASTER_PORT", port);
  std::vector<char*> args;
  for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::string msg = "vnn-run: cannot start '" + o.argv[0] + "': " + std::strerror(errno) + "\n";
  write_all(2, msg);
  ::_exit(127);
}

class Launcher {
 public:
  explicit Launcher(Options o) : o_(std::move(o)) {}

  int run() {
    int port = o_.master_port;
    if (port == 0) port = o_.nnodes == 1 ? vnn::tools::free_port() : 29500;  // torchrun's multi-node default
    if (port <= 0) {
      std::fprintf(stderr, "vnn-run: could not find a free TCP port (%s); pass --master-port\n", std::strerror(errno));
      return 1;
    }
    if (o_.nproc_per_node > 1 && !std::getenv("OMP_NUM_THREADS")) {
      ::setenv("OMP_NUM_THREADS", "1", 1);
      std::fprintf(stderr, "vnn-run: OMP_NUM_THREADS=1 for each of the %d ranks (set it to choose another)\n",
                   o_.nproc_per_node);
    }
    if (!install_signals()) return 1;
    // Orphans of a rank (its children, once it died) become ours, not
    // init's: they are reaped here instead of lingering as zombies.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    ranks_.resize(size_t(o_.nproc_per_node));
    for (int l = 0; l < o_.nproc_per_node; ++l) {
      Rank& r = ranks_[size_t(l)];
      r.local = l;
      r.global = o_.node_rank * o_.nproc_per_node + l;
      r.prefix = "[rank" + std::to_string(r.global) + "]: ";
      r.out.out_fd = 1;
      r.err.out_fd = 2;
      if (!spawn(r, std::to_string(port))) {
        begin_shutdown(SIGTERM);
        failed_code_ = 1;
        break;
      }
    }
    loop();
    return finish();
  }

 private:
  bool install_signals() {
    if (::pipe(signal_pipe) != 0) {
      std::perror("vnn-run: pipe");
      return false;
    }
    set_cloexec_nonblock(signal_pipe[0], true);
    set_cloexec_nonblock(signal_pipe[1], true);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) ::sigaction(s, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    return true;
  }

  bool spawn(Rank& r, const std::string& port) {
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) {
      std::fprintf(stderr, "vnn-run: pipe for rank %d: %s\n", r.global, std::strerror(errno));
      return false;
    }
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "vnn-run: fork for rank %d: %s\n", r.global, std::strerror(errno));
      for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
      return false;
    }
    if (pid == 0) {
      ::close(out[0]);
      ::close(err[0]);
      ::close(signal_pipe[0]);
      ::close(signal_pipe[1]);
      for (const Rank& other : ranks_)
        for (int fd : {other.out.fd, other.err.fd})
          if (fd >= 0) ::close(fd);
      exec_rank(o_, r, out[1], err[1], port);
    }
    // Also in the parent, so a signal sent right after fork finds the group.
    ::setpgid(pid, pid);
    ::close(out[1]);
    ::close(err[1]);
    r.pid = pid;
    r.running = true;
    r.out.fd = out[0];
    r.err.fd = err[0];
    set_cloexec_nonblock(r.out.fd, true);
    set_cloexec_nonblock(r.err.fd, true);
    return true;
  }

  void signal_all(int sig, bool include_ended) {
    for (const Rank& r : ranks_)
      if (r.pid > 0 && (r.running || include_ended)) ::kill(-r.pid, sig);
  }

  void begin_shutdown(int sig) {
    if (shutting_down_) return;
    shutting_down_ = true;
    signal_all(sig, true);
    kill_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.grace_s));
  }

  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      for (Rank& r : ranks_) {
        if (r.pid != pid) continue;
        r.running = false;
        r.status = status;
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && failed_ < 0 && !signalled_) {
          failed_ = int(&r - ranks_.data());
          std::fprintf(stderr, "vnn-run: rank %d (local rank %d, pid %d) %s; ending the other ranks\n", r.global,
                       r.local, int(pid), describe(status).c_str());
          begin_shutdown(SIGTERM);
        }
      }
    }
  }

  bool any_running() const {
    for (const Rank& r : ranks_)
      if (r.running) return true;
    return false;
  }

  void handle_signals() {
    unsigned char buf[64];
    ssize_t n;
    while ((n = ::read(signal_pipe[0], buf, sizeof(buf))) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        int sig = buf[i];
        if (sig == SIGCHLD) continue;
        if (signalled_) {  // a second signal: no more waiting
          signal_all(SIGKILL, true);
          continue;
        }
        signalled_ = sig;
        std::fprintf(stderr, "vnn-run: got %s, passing it to the ranks\n", ::strsignal(sig));
        // Forward the signal itself; SIGKILL follows after the grace period.
        if (!shutting_down_) begin_shutdown(sig);
        else signal_all(sig, false);
      }
    }
    reap();
  }

  void read_stream(Rank& r, Stream& s) {
    char buf[16384];
    for (;;) {
      ssize_t n = ::read(s.fd, buf, sizeof(buf));
      if (n > 0) {
        s.feed(r.prefix, buf, size_t(n));
        continue;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) s.finish(r.prefix);
      return;
    }
  }

  // Until every rank has ended and every pipe is closed (a process a rank
  // started may hold its pipe: it is ended with the rank's group).
  void loop() {
    bool swept = false;
    for (;;) {
      std::vector<pollfd> fds{{signal_pipe[0], POLLIN, 0}};
      std::vector<std::pair<Rank*, Stream*>> who{{nullptr, nullptr}};
      for (Rank& r : ranks_)
        for (Stream* s : {&r.out, &r.err})
          if (s->fd >= 0) {
            fds.push_back({s->fd, POLLIN, 0});
            who.emplace_back(&r, s);
          }
      bool running = any_running();
      if (!running && fds.size() == 1) return;
      if (!running && !swept) {
        // Every rank has exited; leftovers of theirs still hold pipes.
        // After a failure or signal they are killed; otherwise they get the
        // grace period to close their ends.
        if (!shutting_down_) begin_shutdown(SIGTERM);
        swept = true;
      }
      int timeout_ms = -1;
      if (shutting_down_ && !killed_) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at_ - Clock::now()).count();
        if (left <= 0) {
          signal_all(SIGKILL, true);
          killed_ = true;
          // The groups are gone; pipes now reach EOF.
        } else {
          timeout_ms = int(std::min<long long>(left, 1000));
        }
      }
      if (killed_ && !running) timeout_ms = 1000;  // only pipes left: do not wait forever
      int n = ::poll(fds.data(), fds.size(), timeout_ms);
      if (n < 0 && errno != EINTR) {
        std::perror("vnn-run: poll");
        signal_all(SIGKILL, true);
        return;
      }
      if (n == 0 && killed_ && !running) {
        for (Rank& r : ranks_) {
          r.out.finish(r.prefix);
          r.err.finish(r.prefix);
        }
        return;
      }
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        if (i == 0)
          handle_signals();
        else
          read_stream(*who[i].first, *who[i].second);
      }
      reap();
    }
  }

  int finish() {
    // Leftovers of a rank that exited 0 (its own children) go with it.
    signal_all(SIGKILL, true);
    auto deadline = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < deadline) {
      pid_t p = ::waitpid(-1, nullptr, WNOHANG);
      if (p < 0) break;  // ECHILD: nothing of ours is left
      if (p == 0) ::usleep(2000);
    }
    if (failed_ >= 0) {
      const Rank& r = ranks_[size_t(failed_)];
      const std::string& last = !r.err.last_line.empty() ? r.err.last_line : r.out.last_line;
      std::fprintf(stderr, "vnn-run: failed: rank %d %s%s%s\n", r.global, describe(r.status).c_str(),
                   last.empty() ? " (it wrote nothing)" : "; its last error line: ", last.c_str());
      return exit_code_of(r.status) ? exit_code_of(r.status) : 1;
    }
    if (failed_code_) return failed_code_;
    if (signalled_) return 128 + signalled_;
    for (const Rank& r : ranks_)
      if (exit_code_of(r.status) != 0) return exit_code_of(r.status);
    return 0;
  }

  Options o_;
  std::vector<Rank> ranks_;
  int failed_ = -1;         // index of the first rank that failed
  int failed_code_ = 0;     // vnn-run's own failure (fork, pipe)
  int signalled_ = 0;       // the signal vnn-run got
  bool shutting_down_ = false, killed_ = false;
  Clock::time_point kill_at_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  return Launcher(std::move(o)).run();
}
