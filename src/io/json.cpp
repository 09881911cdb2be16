// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Strict JSON (RFC 8259): every read is bounds-checked against the end
// pointer, so hostile input can only produce FormatError.
#include "io/json.hpp"

#include <cstring>
#include <unordered_set>

#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::io::json {

void Reader::fail(const std::string& what) const {
  VNN_THROW(FormatError, source_, ": invalid JSON header at byte ", p_ - begin_, ": ", what);
}

void Reader::fail_expected(const char* what) const {
  if (p_ == end_) fail(std::string("unexpected end of header, expected ") + what);
  fail(std::string("expected ") + what);
}

void Reader::word(const char* w) {
  size_t n = std::strlen(w);
  if (size_t(end_ - p_) < n || std::memcmp(p_, w, n) != 0) fail(std::string("expected '") + w + "'");
  p_ += n;
}

Reader::Number Reader::number() {
  Number v;
  at_end();
  const char* start = p_;
  bool negative = false, integral = true, overflow = false;
  if (p_ != end_ && *p_ == '-') { negative = true; ++p_; }
  if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) fail("a number needs digits");
  if (*p_ == '0' && p_ + 1 != end_ && p_[1] >= '0' && p_[1] <= '9') fail("numbers have no leading zeros");
  uint64_t u = 0;
  while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
    uint64_t d = uint64_t(*p_ - '0');
    if (u > (UINT64_MAX - d) / 10) overflow = true;
    u = u * 10 + d;
    ++p_;
  }
  if (p_ != end_ && *p_ == '.') {
    integral = false;
    ++p_;
    if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) fail("digits expected after '.'");
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
    integral = false;
    ++p_;
    if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) fail("digits expected in exponent");
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  v.text = start;
  v.len = size_t(p_ - start);
  v.is_uint = integral && !negative && !overflow;
  v.u = v.is_uint ? u : 0;
  return v;
}

unsigned Reader::hex4() {
  if (end_ - p_ < 4) fail("truncated \\u escape");
  unsigned x = 0;
  for (int i = 0; i < 4; ++i, ++p_) {
    char c = *p_;
    x <<= 4;
    if (c >= '0' && c <= '9') x |= unsigned(c - '0');
    else if (c >= 'a' && c <= 'f') x |= unsigned(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') x |= unsigned(c - 'A' + 10);
    else fail("bad hex digit in \\u escape");
  }
  return x;
}

namespace {
void put_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}
}  // namespace

// One raw multi-byte UTF-8 sequence starting at p_ (lead byte >= 0x80),
// checked against the well-formed table of Unicode 15, section 3.9.
void Reader::utf8_sequence(std::string& out) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(p_[i]); };
  unsigned char c = b(0);
  int n;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 1;
  else if (c >= 0xE0 && c <= 0xEF) { n = 2; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
  else if (c >= 0xF0 && c <= 0xF4) { n = 3; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
  else fail("invalid UTF-8 lead byte in a string");
  if (end_ - p_ <= n) fail("truncated UTF-8 sequence in a string");
  if (b(1) < lo || b(1) > hi) fail("invalid UTF-8 sequence in a string");
  for (int i = 2; i <= n; ++i)
    if (b(size_t(i)) < 0x80 || b(size_t(i)) > 0xBF) fail("invalid UTF-8 sequence in a string");
  out.append(p_, size_t(n + 1));
  p_ += n + 1;
}

const char* Reader::plain_run_end(const char* q) const {
  while (q != end_) {
    unsigned char c = static_cast<unsigned char>(*q);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
    ++q;
  }
  return q;
}

std::string_view Reader::key(std::string& scratch) {
  if (peek() != '"') fail("expected a string");
  const char* run = p_ + 1;
  const char* q = plain_run_end(run);
  if (q != end_ && *q == '"') {  // plain ASCII: a view of the input
    p_ = q + 1;
    return std::string_view(run, size_t(q - run));
  }
  string(scratch);
  return scratch;
}

void Reader::string(std::string& out) {
  out.clear();
  if (peek() != '"') fail("expected a string");
  ++p_;
  bool reserved = false;
  for (;;) {
    // Plain ASCII runs are copied in one append.
    const char* run = p_;
    p_ = plain_run_end(p_);
    if (p_ != end_ && *p_ == '"' && !reserved) {  // the common case: plain ASCII, one exact copy
      out.assign(run, size_t(p_ - run));
      ++p_;
      return;
    }
    if (!reserved) {
      // Escapes or UTF-8 ahead: reserve up to the closing quote once (the
      // decoded text is never longer), so a long string is never regrown.
      const char* close = p_;
      while (close != end_ && *close != '"') close += *close == '\\' && close + 1 != end_ ? 2 : 1;
      out.reserve(size_t(p_ - run) + size_t(close - p_));
      reserved = true;
    }
    out.append(run, size_t(p_ - run));
    if (p_ == end_) fail("unterminated string");
    unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') { ++p_; return; }
    if (c < 0x20) fail("control character inside a string");
    if (c >= 0x80) { utf8_sequence(out); continue; }
    ++p_;  // backslash
    if (p_ == end_) fail("unterminated escape");
    char e = *p_++;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = hex4();
        if (cp >= 0xD800 && cp < 0xDC00) {
          if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') fail("unpaired surrogate in \\u escape");
          p_ += 2;
          unsigned low = hex4();
          if (low < 0xDC00 || low > 0xDFFF) fail("bad low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail("unpaired low surrogate in \\u escape");
        }
        put_utf8(out, cp);
        break;
      }
      default: --p_; fail("unknown escape");
    }
  }
}

// ---- the generic tree ----------------------------------------------------------

const Value* Value::find(const std::string& key) const {
  for (auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

const char* type_name(Value::Type t) {
  switch (t) {
    case Value::Type::null: return "null";
    case Value::Type::boolean: return "boolean";
    case Value::Type::number: return "number";
    case Value::Type::string: return "string";
    case Value::Type::array: return "array";
    case Value::Type::object: return "object";
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 64;

Value tree(Reader& r, int depth) {
  if (depth > kMaxDepth) r.fail("nesting deeper than 64 levels");
  Value v;
  char c = r.peek();
  if (c == '{') {
    v.type = Value::Type::object;
    std::unordered_set<std::string> keys;  // duplicate check, linear overall
    r.object([&](std::string_view key) {
      if (!keys.emplace(key).second) r.fail("duplicate key \"" + std::string(key) + "\"");
      v.members.emplace_back(std::string(key), tree(r, depth + 1));
    });
  } else if (c == '[') {
    v.type = Value::Type::array;
    r.array([&] { v.items.push_back(tree(r, depth + 1)); });
  } else if (c == '"') {
    v.type = Value::Type::string;
    r.string(v.s);
  } else if (c == 't') {
    r.word("true");
    v.type = Value::Type::boolean;
    v.b = true;
  } else if (c == 'f') {
    r.word("false");
    v.type = Value::Type::boolean;
  } else if (c == 'n') {
    r.word("null");
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    Reader::Number n = r.number();
    v.type = Value::Type::number;
    v.is_uint = n.is_uint;
    v.u = n.u;
    v.s.assign(n.text, n.len);
  } else {
    r.fail(std::string("unexpected character '") + (c >= 32 && c < 127 ? std::string(1, c) : "?") + "'");
  }
  return v;
}

}  // namespace

Value parse(const char* text, size_t size, const std::string& source) {
  Reader r(text, size, source);
  Value v = tree(r, 0);
  if (!r.at_end()) r.fail("unexpected data after the top-level value");
  return v;
}

void append_quoted(std::string& out, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20) { out += "\\u00"; out += hex[c >> 4]; out += hex[c & 15]; }
    else out += char(c);
  }
  out += '"';
}

}  // namespace vnn::io::json
