// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Helpers for the rank programs the distributed tests start (worker.cpp):
// the device under test, and checks that print what failed and exit 1.
#pragma once
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "vnn/distributed.h"
#include "vnn/vnn.h"

namespace vnn::test::dist {

inline Device device_from_env() {
  const char* b = std::getenv("VNN_TEST_BACKEND");
  return Device(b && *b ? b : "cpu", 0);
}

[[noreturn]] inline void fail(const std::string& what) {
  std::cerr << "FAIL: " << what << std::endl;
  std::exit(1);
}

#define DIST_CHECK(cond, msg)                                                                  \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::ostringstream os_;                                                                  \
      os_ << __FILE__ << ":" << __LINE__ << ": " << #cond << ": " << msg;                      \
      ::vnn::test::dist::fail(os_.str());                                                      \
    }                                                                                          \
  } while (0)

// Runs f, which must throw E whose text contains every needle.
template <class E, class F>
void expect_throw(F&& f, std::initializer_list<const char*> needles, const std::string& what) {
  try {
    f();
  } catch (const E& e) {
    std::string text = e.what();
    for (const char* n : needles)
      DIST_CHECK(text.find(n) != std::string::npos, what << ": message lacks '" << n << "': " << text);
    return;
  } catch (const std::exception& e) {
    fail(what + ": threw the wrong type: " + e.what());
  }
  fail(what + ": did not throw");
}

// main() of a rank program `PROGRAM SCENARIO [ARG]`: sets `dev` to the
// device under test (exit 77 without it), then runs table[SCENARIO](ARG)
// between init_process_group and destroy_process_group (under mpirun it
// checks the group runs on the MPI engine), or own_init[SCENARIO](ARG),
// which sets up (or fails to set up) the process group itself.
using Scenario = std::function<int(const std::string&)>;
using Scenarios = std::map<std::string, Scenario>;
inline int run_scenario(int argc, char** argv, Device& dev, const Scenarios& table, const Scenarios& own_init = {}) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " SCENARIO [ARG]\n";
    return 2;
  }
  std::string scenario = argv[1], arg = argc > 2 ? argv[2] : "";
  dev = device_from_env();
  if (!is_available(dev)) {
    std::cout << "SKIP: no " << dev.str() << " device" << std::endl;
    return 77;
  }
  try {
    if (auto own = own_init.find(scenario); own != own_init.end()) return own->second(arg);
    auto it = table.find(scenario);
    if (it == table.end()) fail("unknown scenario " + scenario);
    distributed::init_process_group();
    const std::string engine = distributed::group().engine();
    if (distributed::launched_by_mpirun()) DIST_CHECK(engine == "mpi", "under mpirun the engine is " << engine);
    int rc = it->second(arg);
    distributed::destroy_process_group();
    return rc;
  } catch (const std::exception& e) {
    fail(scenario + ": unexpected exception: " + e.what());
  }
}

// A scenario without an argument, for the tables above.
inline Scenario plain(int (*f)()) {
  return [f](const std::string&) { return f(); };
}

}  // namespace vnn::test::dist
