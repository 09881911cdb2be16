// Helpers for the rank programs the distributed tests start (worker.cpp):
// the device under test, and checks that print what failed and exit 1.
#pragma once
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

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

}  // namespace vnn::test::dist
