// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Numeric CSV: every field but the label column parses as a number.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "data/host_util.hpp"
#include "vnn/data/readers.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::data {

namespace {
std::vector<std::string> split(const std::string& line, char delim) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == delim) out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  for (auto& f : out) {  // trim blanks and one pair of quotes
    size_t a = f.find_first_not_of(" \t"), b = f.find_last_not_of(" \t");
    f = a == std::string::npos ? std::string() : f.substr(a, b - a + 1);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
  }
  return out;
}
CsvTable read_csv_impl(const std::string& path, const CsvOptions& opt) {
  std::ifstream in(path);
  VNN_CHECK(FileError, in, "read_csv: cannot open ", path, ": ", std::strerror(errno));
  std::string line;
  std::vector<std::string> names;
  int64_t lineno = 0;
  std::vector<float> feats;
  std::vector<int64_t> labels;
  int64_t label_col = -1, rows = 0;
  auto setup = [&](size_t n) {
    if (names.empty())
      for (size_t i = 0; i < n; ++i) names.push_back("c" + std::to_string(i));
    if (!opt.label_column.empty()) {
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == opt.label_column) label_col = int64_t(i);
      if (label_col < 0) VNN_THROW(ValueError, "read_csv: ", path, " has no column \"", opt.label_column, "\"");
    }
  };
  bool ready = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto f = split(line, opt.delimiter);
    if (!ready && opt.header) {
      names = f;
      setup(f.size());
      ready = true;
      continue;
    }
    if (!ready) { setup(f.size()); ready = true; }
    VNN_CHECK(FormatError, f.size() == names.size(), "read_csv: ", path, ":", lineno, ": expected ", names.size(),
              " fields, got ", f.size());
    for (size_t c = 0; c < f.size(); ++c) {
      const char* s = f[c].c_str();
      char* end = nullptr;
      errno = 0;
      if (int64_t(c) == label_col) {
        long long v = std::strtoll(s, &end, 10);
        if (f[c].empty() || *end != '\0' || errno == ERANGE)
          VNN_THROW(FormatError, "read_csv: ", path, ":", lineno, " column \"", names[c], "\": \"", f[c],
                    "\" is not an integer label");
        labels.push_back(v);
      } else {
        double v = std::strtod(s, &end);
        if (f[c].empty() || *end != '\0')
          VNN_THROW(FormatError, "read_csv: ", path, ":", lineno, " column \"", names[c], "\": \"", f[c],
                    "\" is not a number");
        feats.push_back(float(v));
      }
    }
    ++rows;
  }
  VNN_CHECK(FormatError, ready, "read_csv: ", path, " is empty");
  CsvTable t;
  for (size_t i = 0; i < names.size(); ++i)
    if (int64_t(i) != label_col) t.feature_names.push_back(names[i]);
  t.features = from_blob(feats.data(), {rows, int64_t(t.feature_names.size())}, kFloat32);
  if (label_col >= 0) t.labels = from_blob(labels.data(), {rows}, kInt64);
  return t;
}
}  // namespace

CsvTable read_csv(const std::string& path, const CsvOptions& opt) {
  return detail::host_memory_guard("read_csv: " + path, [&] { return read_csv_impl(path, opt); });
}

}  // namespace vnn::data
