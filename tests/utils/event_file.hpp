// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Test-side reader of TensorBoard event files: checks each TFRecord's two
// masked CRC-32Cs and decodes protobuf fields generically, so the writer is
// verified without TensorBoard (tensorboard_read.py checks with it too).
#pragma once
#include <vnn/utils/summary_writer.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace evtest {

// Field number -> raw values (varints as uint64 in `ints`, fixed64/fixed32
// and length-delimited payloads as bytes in `bytes`).
struct Fields {
  std::multimap<int, uint64_t> ints;
  std::multimap<int, std::string> bytes;
  std::string one(int f) const {
    auto it = bytes.find(f);
    if (it == bytes.end()) throw std::runtime_error("missing field " + std::to_string(f));
    return it->second;
  }
  double f64(int f) const {
    double d;
    std::string b = one(f);
    std::memcpy(&d, b.data(), 8);
    return d;
  }
  float f32(int f) const {
    float v;
    std::string b = one(f);
    std::memcpy(&v, b.data(), 4);
    return v;
  }
  bool has(int f) const { return ints.count(f) || bytes.count(f); }
};

inline uint64_t varint(const std::string& s, size_t& i) {
  uint64_t v = 0;
  for (int shift = 0; i < s.size(); shift += 7) {
    auto b = uint8_t(s[i++]);
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw std::runtime_error("truncated varint");
}

inline Fields decode(const std::string& s) {
  Fields out;
  size_t i = 0;
  while (i < s.size()) {
    uint64_t key = varint(s, i);
    int field = int(key >> 3), wire = int(key & 7);
    if (wire == 0) {
      out.ints.emplace(field, varint(s, i));
    } else if (wire == 1 || wire == 5) {
      size_t n = wire == 1 ? 8 : 4;
      if (i + n > s.size()) throw std::runtime_error("truncated fixed field");
      out.bytes.emplace(field, s.substr(i, n));
      i += n;
    } else if (wire == 2) {
      uint64_t n = varint(s, i);
      if (n > s.size() - i) throw std::runtime_error("truncated bytes field");
      out.bytes.emplace(field, s.substr(i, n));
      i += n;
    } else {
      throw std::runtime_error("unexpected wire type " + std::to_string(wire));
    }
  }
  return out;
}

// Every record's payload; throws on a bad CRC or a truncated record.
inline std::vector<std::string> records(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string d = ss.str();
  std::vector<std::string> out;
  size_t i = 0;
  while (i < d.size()) {
    if (d.size() - i < 12) throw std::runtime_error("truncated record header");
    uint64_t len;
    uint32_t lcrc, dcrc;
    std::memcpy(&len, d.data() + i, 8);
    std::memcpy(&lcrc, d.data() + i + 8, 4);
    if (lcrc != vnn::utils::masked_crc32c(d.data() + i, 8)) throw std::runtime_error("bad length CRC");
    if (len > d.size() - i - 16) throw std::runtime_error("truncated record");
    std::string payload = d.substr(i + 12, len);
    std::memcpy(&dcrc, d.data() + i + 12 + len, 4);
    if (dcrc != vnn::utils::masked_crc32c(payload.data(), payload.size())) throw std::runtime_error("bad data CRC");
    out.push_back(payload);
    i += 16 + len;
  }
  return out;
}

// One decoded summary event: step, the value's tag and its fields.
struct Event {
  int64_t step = 0;
  double wall_time = 0;
  std::string tag;
  Fields value;
};

// The events of a file after the leading file_version one (checked).
inline std::vector<Event> summary_events(const std::string& path) {
  auto recs = records(path);
  if (recs.empty() || decode(recs[0]).one(3) != "brain.Event:2")
    throw std::runtime_error("the first event is not file_version brain.Event:2");
  std::vector<Event> out;
  for (size_t k = 1; k < recs.size(); ++k) {
    Fields e = decode(recs[k]);
    Event ev;
    ev.wall_time = e.f64(1);
    ev.step = e.ints.count(2) ? int64_t(e.ints.find(2)->second) : 0;
    Fields value = decode(decode(e.one(5)).one(1));
    ev.tag = value.one(1);
    ev.value = value;
    out.push_back(ev);
  }
  return out;
}

}  // namespace evtest
