// A small strict JSON reader and string escaper, enough for safetensors
// headers. Self-contained (only vnn/error.h) so that the fuzz target can
// compile it with instrumentation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vnn::io::json {

struct Value {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool b = false;
  // Numbers: integral ones without sign, fraction or exponent that fit in
  // uint64 set is_uint; the rest keep only their text (never needed here).
  bool is_uint = false;
  uint64_t u = 0;
  std::string s;  // string value, or number text
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // object, in file order

  const Value* find(const std::string& key) const;
};

const char* type_name(Value::Type t);

// Parses exactly one JSON value filling [text, text + size) (whitespace
// around it allowed). Throws FormatError("<source>: invalid JSON header at
// byte N: ...") on any syntax error, nesting deeper than 64, duplicate
// object keys, or invalid UTF-8 escapes.
Value parse(const char* text, size_t size, const std::string& source);

// Appends s as a quoted JSON string.
void append_quoted(std::string& out, const std::string& s);

}  // namespace vnn::io::json
