// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A small strict JSON reader and string escaper. Self-contained (only
// vnn/error.h) so that the fuzz targets can compile it with instrumentation.
//
// Two layers: json::Reader, a bounds-checked token reader that callers drive
// (the safetensors header parser reads straight into its own structures with
// it, in one pass and without a generic tree), and json::parse, a small DOM
// for trusted files (the profiler's trace in tests).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vnn::io::json {

// Reads one JSON text in [text, text + size). Every read is checked against
// the end; every error is a FormatError "<source>: invalid JSON header at
// byte N: ...". Strings are decoded (escapes, surrogate pairs) and must be
// valid UTF-8 (RFC 8259 section 8.1): overlong forms, surrogates and code
// points above U+10FFFF are rejected.
class Reader {
 public:
  Reader(const char* text, size_t size, const std::string& source)
      : begin_(text), p_(text), end_(text + size), source_(source) {}

  [[noreturn]] void fail(const std::string& what) const;
  size_t offset() const { return size_t(p_ - begin_); }
  // The token functions below run once or more per header byte: they are
  // inline (a call through the PLT per byte was a fifth of the parse time
  // of a 100 MB header), their failure paths are not.
  // Skips whitespace; true when only whitespace is left.
  bool at_end() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    return p_ == end_;
  }
  // Skips whitespace and returns the next character (fails at the end).
  char peek() {
    if (at_end()) fail("unexpected end of header");
    return *p_;
  }
  // Skips whitespace; consumes c and returns true when it comes next.
  bool consume(char c) {
    if (at_end() || *p_ != c) return false;
    ++p_;
    return true;
  }
  // Skips whitespace and consumes c, else fails with "expected <what>".
  void expect(char c, const char* what) {
    if (!consume(c)) fail_expected(what);
  }
  // Consumes the literal word w (true, false, null) at the current position.
  void word(const char* w);
  // A string at the current position (after whitespace), decoded into out
  // (reserved once to the raw length, so a long string is never regrown).
  void string(std::string& out);
  // The same, for keys: a plain ASCII string is returned as a view of the
  // input itself (no copy); one with escapes or UTF-8 is decoded into
  // scratch and the view is of scratch.
  std::string_view key(std::string& scratch);

  struct Number {
    bool is_uint = false;  // integral, no sign/fraction/exponent, fits uint64
    uint64_t u = 0;
    const char* text = nullptr;  // the number's characters in the input
    size_t len = 0;
  };
  Number number();

  // Reads an object: f(key) is called with the reader positioned at each
  // member's value and must consume it. key is a std::string_view valid
  // during the call only. Handles '{', ':', ',' and '}'.
  template <class F>
  void object(F&& f) {
    expect('{', "'{'");
    if (consume('}')) return;
    std::string scratch;
    do {
      if (peek() != '"') fail("expected a string key");
      const std::string_view k = key(scratch);
      expect(':', "':' after a key");
      f(k);
    } while (consume(','));
    expect('}', "',' or '}' in an object");
  }
  // Reads an array: f() is called at each element and must consume it.
  template <class F>
  void array(F&& f) {
    expect('[', "'['");
    if (consume(']')) return;
    do f();
    while (consume(','));
    expect(']', "',' or ']' in an array");
  }

 private:
  [[noreturn]] void fail_expected(const char* what) const;
  // The end of the run of plain ASCII from q: the first quote, backslash,
  // control character or byte >= 0x80, or end_.
  const char* plain_run_end(const char* q) const;
  unsigned hex4();
  void utf8_sequence(std::string& out);

  const char* begin_;
  const char* p_;
  const char* end_;
  const std::string& source_;
};

// A generic tree, for trusted inputs (tests read the profiler's trace with
// it). Nesting is limited to 64 levels and duplicate keys are rejected.
struct Value {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool b = false;
  // Numbers: integral ones without sign, fraction or exponent that fit in
  // uint64 set is_uint; the rest keep only their text.
  bool is_uint = false;
  uint64_t u = 0;
  std::string s;  // string value, or number text
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // object, in file order

  const Value* find(const std::string& key) const;
};

const char* type_name(Value::Type t);

// Parses exactly one JSON value filling [text, text + size) (whitespace
// around it allowed).
Value parse(const char* text, size_t size, const std::string& source);

// Appends s as a quoted JSON string.
void append_quoted(std::string& out, const std::string& s);

}  // namespace vnn::io::json
