// Strict recursive-descent JSON (RFC 8259): every read is bounds-checked
// against the end pointer, so hostile headers can only produce FormatError.
#include "io/json.hpp"

#include <cstring>

#include "vnn/error.h"

namespace vnn::io::json {

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

class Parser {
 public:
  Parser(const char* p, size_t n, const std::string& source) : begin_(p), p_(p), end_(p + n), source_(source) {}

  Value run() {
    Value v = value(0);
    skip_ws();
    if (p_ != end_) fail("unexpected data after the top-level value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(source_ + ": invalid JSON header at byte " + std::to_string(p_ - begin_) + ": " + what);
  }
  void skip_ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  char peek() {
    if (p_ == end_) fail("unexpected end of header");
    return *p_;
  }
  void expect_word(const char* w) {
    size_t n = std::strlen(w);
    if (size_t(end_ - p_) < n || std::memcmp(p_, w, n) != 0) fail(std::string("expected '") + w + "'");
    p_ += n;
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than 64 levels");
    skip_ws();
    Value v;
    char c = peek();
    if (c == '{') {
      v.type = Value::Type::object;
      ++p_;
      skip_ws();
      if (peek() == '}') { ++p_; return v; }
      for (;;) {
        skip_ws();
        if (peek() != '"') fail("expected a string key");
        std::string key = string();
        if (v.find(key)) fail("duplicate key \"" + key + "\"");
        skip_ws();
        if (peek() != ':') fail("expected ':' after key \"" + key + "\"");
        ++p_;
        v.members.emplace_back(std::move(key), value(depth + 1));
        skip_ws();
        char d = peek();
        ++p_;
        if (d == '}') return v;
        if (d != ',') { --p_; fail("expected ',' or '}' in object"); }
      }
    }
    if (c == '[') {
      v.type = Value::Type::array;
      ++p_;
      skip_ws();
      if (peek() == ']') { ++p_; return v; }
      for (;;) {
        v.items.push_back(value(depth + 1));
        skip_ws();
        char d = peek();
        ++p_;
        if (d == ']') return v;
        if (d != ',') { --p_; fail("expected ',' or ']' in array"); }
      }
    }
    if (c == '"') { v.type = Value::Type::string; v.s = string(); return v; }
    if (c == 't') { expect_word("true"); v.type = Value::Type::boolean; v.b = true; return v; }
    if (c == 'f') { expect_word("false"); v.type = Value::Type::boolean; return v; }
    if (c == 'n') { expect_word("null"); return v; }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("unexpected character '") + (c >= 32 && c < 127 ? std::string(1, c) : "?") + "'");
  }

  Value number() {
    Value v;
    v.type = Value::Type::number;
    const char* start = p_;
    bool negative = false, integral = true, overflow = false;
    if (*p_ == '-') { negative = true; ++p_; }
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
    v.s.assign(start, p_);
    v.is_uint = integral && !negative && !overflow;
    v.u = v.is_uint ? u : 0;
    return v;
  }

  unsigned hex4() {
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

  static void put_utf8(std::string& out, unsigned cp) {
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

  std::string string() {
    ++p_;  // opening quote
    std::string out;
    for (;;) {
      if (p_ == end_) fail("unterminated string");
      char c = *p_++;
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character inside a string");
      if (c != '\\') { out += c; continue; }
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
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("bad low surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
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

  const char* begin_;
  const char* p_;
  const char* end_;
  const std::string& source_;
};

}  // namespace

Value parse(const char* text, size_t size, const std::string& source) { return Parser(text, size, source).run(); }

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
