// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Validation of safetensors headers. Self-contained (JSON reader, error
// classes and checked_size.h only) so the libFuzzer targets can compile it
// instrumented.
//
// The header is read in one pass straight into Header, without a generic
// JSON tree: time is linear in the header size, and memory is the entries
// themselves (about 2x the header text at worst, see tests/io/header_bounds.cpp).
// Only the structure safetensors writes is accepted, so hostile structure
// (nesting, long arrays, unknown keys) fails at the first byte that breaks it.
#include <algorithm>
#include <cstring>
#include <functional>

#include "io/json.hpp"
#include "vnn/checked_size.h"
#include "vnn/detail/message.h"
#include "vnn/io/safetensors.h"

namespace vnn::io {

namespace {
// s == lit without strlen (keys are compared once per entry).
template <size_t N>
bool is(std::string_view s, const char (&lit)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

constexpr uint64_t kMaxHeader = 100ull * 1000 * 1000;
constexpr size_t kMaxDims = 8;
// The shortest tensor entry, "a":{"dtype":"U8","shape":[],"data_offsets":[0,0]},
// is 50 bytes: a header of n bytes holds at most n / 50 + 1 entries.
constexpr size_t kMinEntryBytes = 50;
// Metadata is a handful of strings in practice; each entry costs a map node
// (~100 bytes) for as little as 7 header bytes, so the count is capped to
// keep memory a small multiple of the header.
constexpr size_t kMaxMetadataEntries = 16384;

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  VNN_THROW(FormatError, source, ": not a valid safetensors file: ", what);
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// "tensor \"<name>\": <what>", built only for an error message (a string
// per entry or number would cost time and memory).
struct Where {
  const std::string& name;
  std::string operator+(const std::string& what) const { return "tensor \"" + name + "\": " + what; }
};

// A non-negative integer (shape entries, offsets); anything else names `what`.
uint64_t uint_value(json::Reader& r, const std::string& source, const Where& where, const char* what) {
  char c = r.peek();
  if (c != '-' && !(c >= '0' && c <= '9')) bad(source, where + what + " must be non-negative integers");
  json::Reader::Number n = r.number();
  if (!n.is_uint) bad(source, where + what + " must be non-negative integers, got " + std::string(n.text, n.len));
  return n.u;
}

void read_metadata(json::Reader& r, Metadata& out, const std::string& source) {
  if (r.peek() != '{') bad(source, "__metadata__ must be an object of strings");
  std::string value;
  r.object([&](std::string_view k) {
    const std::string key(k);
    if (r.peek() != '"') bad(source, "__metadata__[\"" + key + "\"] is not a string");
    r.string(value);
    if (out.size() == kMaxMetadataEntries)
      bad(source, "__metadata__ has more than " + std::to_string(kMaxMetadataEntries) + " entries");
    if (!out.emplace(key, value).second) bad(source, "duplicate __metadata__ key \"" + key + "\"");
  });
}

// Reads one entry named `name` (copied once, into the entry).
TensorEntry read_entry(json::Reader& r, std::string_view name, uint64_t data_size, const std::string& source) {
  TensorEntry e;
  e.name.assign(name.data(), name.size());
  const Where where{e.name};
  if (e.name.empty()) bad(source, "a tensor has an empty name");
  if (e.name.find('\0') != std::string::npos) bad(source, where + "the name contains a NUL character");
  if (r.peek() != '{') bad(source, where + "entry is not an object");
  bool has_dtype = false, has_shape = false, has_offsets = false;
  r.object([&](std::string_view key) {
    if (is(key, "dtype")) {
      if (has_dtype) bad(source, where + "duplicate key \"dtype\"");
      has_dtype = true;
      if (r.peek() != '"') bad(source, where + "\"dtype\" must be a string");
      r.string(e.dtype);
    } else if (is(key, "shape")) {
      if (has_shape) bad(source, where + "duplicate key \"shape\"");
      has_shape = true;
      if (r.peek() != '[') bad(source, where + "\"shape\" must be an array");
      r.array([&] {
        if (e.shape.size() == kMaxDims) bad(source, where + "more than 8 dimensions");
        uint64_t d = uint_value(r, source, where, "shape entries");
        if (d > uint64_t(INT64_MAX)) bad(source, where + "shape entry " + std::to_string(d) + " exceeds 2^63 - 1");
        e.shape.push_back(int64_t(d));
      });
    } else if (is(key, "data_offsets")) {
      if (has_offsets) bad(source, where + "duplicate key \"data_offsets\"");
      has_offsets = true;
      if (r.peek() != '[') bad(source, where + "\"data_offsets\" must be an array [begin, end]");
      int count = 0;
      r.array([&] {
        if (count == 2) bad(source, where + "\"data_offsets\" must be an array [begin, end]");
        (count++ == 0 ? e.begin : e.end) = uint_value(r, source, where, "data_offsets");
      });
      if (count != 2) bad(source, where + "\"data_offsets\" must be an array [begin, end]");
    } else {
      bad(source, where + "unknown key \"" + std::string(key) + "\" (an entry holds dtype, shape and data_offsets)");
    }
  });
  if (!has_dtype) bad(source, where + "missing string \"dtype\"");
  if (!has_shape) bad(source, where + "missing array \"shape\"");
  if (!has_offsets) bad(source, where + "\"data_offsets\" must be an array [begin, end]");
  size_t isz = dtype_size(e.dtype);
  if (isz == 0) bad(source, where + "unknown dtype \"" + e.dtype + "\" (expected F32, F64, I32, I64, I16, I8, U8, BOOL, F16 or BF16)");
  const int nd = int(e.shape.size());
  int64_t numel = 0, bytes = 0, strides[kMaxDims];
  // A tensor of this shape must be addressable: element count, byte size
  // and contiguous strides all within int64 ([2^62, 2^62, 0] is empty but
  // its strides are not).
  if (!checked::numel(e.shape.data(), nd, &numel) || !checked::contiguous_strides(e.shape.data(), nd, strides) ||
      !checked::bytes(numel, int64_t(isz), &bytes))
    bad(source, where + "shape " + shape_str(e.shape) + " x " + e.dtype + " overflows 64-bit sizes or strides");
  if (e.begin > e.end) bad(source, where + "data_offsets begin " + std::to_string(e.begin) + " > end " + std::to_string(e.end));
  if (e.end > data_size)
    bad(source, where + "data_offsets end " + std::to_string(e.end) + " lies past the " + std::to_string(data_size) +
                    " data bytes (truncated file?)");
  if (e.end - e.begin != uint64_t(bytes))
    bad(source, where + "data_offsets cover " + std::to_string(e.end - e.begin) + " bytes but shape " +
                    shape_str(e.shape) + " x " + e.dtype + " needs " + std::to_string(bytes));
  return e;
}

// Duplicate names in linear time: open addressing over (entry index, hash
// bits) slots, 8 bytes each at load <= 1/2, no copies of the names; names
// are compared only when the stored hash bits agree, so probing seldom
// touches the (large) entry array.
//
// For 2M names the table is 32 MB, past any cache, and each insert missed
// on its slot: that was a tenth of a 100 MB header's parse. The hashes are
// computed kAhead entries early and their slots prefetched, so the misses
// overlap instead of queueing.
void check_unique_names(const std::vector<TensorEntry>& t, const std::string& source) {
  size_t cap = 16;
  while (cap < 2 * t.size()) cap *= 2;
  std::vector<std::pair<uint32_t, uint32_t>> slot(cap, {UINT32_MAX, 0});
  std::hash<std::string> hash;
  constexpr uint32_t kAhead = 16;  // a power of two: the ring index is a mask
  size_t ahead[kAhead];
  const uint32_t n = uint32_t(t.size());
  auto hash_and_prefetch = [&](uint32_t k) {
    ahead[k & (kAhead - 1)] = hash(t[k].name);
    __builtin_prefetch(&slot[ahead[k & (kAhead - 1)] & (cap - 1)]);
  };
  for (uint32_t k = 0; k < std::min(n, kAhead); ++k) hash_and_prefetch(k);
  for (uint32_t i = 0; i < n; ++i) {
    const size_t h = ahead[i & (kAhead - 1)];
    if (i + kAhead < n) hash_and_prefetch(i + kAhead);
    const uint32_t tag = uint32_t(h >> 32) ^ uint32_t(h);
    size_t j = h & (cap - 1);
    while (slot[j].first != UINT32_MAX) {
      if (slot[j].second == tag && t[slot[j].first].name == t[i].name)
        bad(source, "duplicate tensor name \"" + t[i].name + "\"");
      j = (j + 1) & (cap - 1);
    }
    slot[j] = {i, tag};
  }
}

// Sorts the ranges themselves, not indices into the entries: an index sort
// compares through random accesses to a large array (seconds for 2M
// entries), this one streams. Names are looked up only for the message.
void check_no_overlap(const std::vector<TensorEntry>& t, const std::string& source) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  ranges.reserve(t.size());
  for (auto& e : t) ranges.emplace_back(e.begin, e.end);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first >= ranges[i - 1].second) continue;
    const std::string* names[2] = {nullptr, nullptr};
    for (auto& e : t)
      for (int k = 0; k < 2; ++k) {
        const auto& r = ranges[i - 1 + size_t(k)];
        if (!names[k] && e.begin == r.first && e.end == r.second && (k == 0 || &e.name != names[0])) names[k] = &e.name;
      }
    bad(source, "tensors \"" + (names[0] ? *names[0] : std::string("?")) + "\" and \"" +
                    (names[1] ? *names[1] : std::string("?")) + "\" overlap in the data section");
  }
}
}  // namespace

size_t dtype_size(const std::string& d) {
  if (d == "F32" || d == "I32") return 4;
  if (d == "F64" || d == "I64") return 8;
  if (d == "U8" || d == "I8" || d == "BOOL") return 1;
  if (d == "F16" || d == "BF16" || d == "I16") return 2;
  return 0;
}

uint64_t header_length(const uint8_t* data, size_t size, uint64_t file_size, const std::string& source) {
  if (size < 8 || file_size < 8)
    bad(source, "file is " + std::to_string(file_size) + " bytes, shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  if (n > kMaxHeader) bad(source, "header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n > file_size - 8)
    bad(source, "header length " + std::to_string(n) + " runs past the end of the " + std::to_string(file_size) +
                    "-byte file (truncated?)");
  return n;
}

Header parse_header(const uint8_t* data, size_t size, uint64_t file_size, const std::string& source) {
  uint64_t n = header_length(data, size, file_size, source);
  if (n > size - 8) bad(source, "header truncated: " + std::to_string(size - 8) + " of " + std::to_string(n) + " bytes");
  json::Reader r(reinterpret_cast<const char*>(data + 8), size_t(n), source);
  if (r.at_end() || r.peek() != '{') bad(source, "the header is not an object (it must be a JSON object of tensor entries)");
  Header h;
  h.data_start = 8 + n;
  const uint64_t data_size = file_size - h.data_start;
  // An upper bound, so the vector never reallocates (a reallocation would
  // briefly hold 3x the entries); pages never written cost no memory.
  h.tensors.reserve(size_t(n / kMinEntryBytes + 1));
  bool have_metadata = false;
  r.object([&](std::string_view name) {
    if (is(name, "__metadata__")) {
      if (have_metadata) bad(source, "duplicate key \"__metadata__\"");
      have_metadata = true;
      read_metadata(r, h.metadata, source);
    } else {
      h.tensors.push_back(read_entry(r, name, data_size, source));
    }
  });
  if (!r.at_end()) r.fail("unexpected data after the top-level object");
  check_unique_names(h.tensors, source);
  check_no_overlap(h.tensors, source);
  return h;
}

}  // namespace vnn::io
