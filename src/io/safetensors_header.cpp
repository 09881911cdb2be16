// Validation of safetensors headers. Self-contained (JSON reader + error
// classes only) so the libFuzzer target can compile it instrumented.
#include <algorithm>
#include <cstring>

#include "io/json.hpp"
#include "vnn/io/safetensors.h"

namespace vnn::io {

namespace {
constexpr uint64_t kMaxHeader = 100ull * 1000 * 1000;
constexpr size_t kMaxDims = 8;

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw FormatError(source + ": not a valid safetensors file: " + what);
}
}  // namespace

size_t dtype_size(const std::string& d) {
  if (d == "F32" || d == "I32") return 4;
  if (d == "F64" || d == "I64") return 8;
  if (d == "U8" || d == "BOOL") return 1;
  if (d == "F16" || d == "BF16") return 2;
  return 0;
}

Header parse_header(const uint8_t* data, size_t size, uint64_t file_size, const std::string& source) {
  if (size < 8 || file_size < 8)
    bad(source, "file is " + std::to_string(file_size) + " bytes, shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  if (n > kMaxHeader) bad(source, "header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n > file_size - 8)
    bad(source, "header length " + std::to_string(n) + " runs past the end of the " + std::to_string(file_size) +
                    "-byte file (truncated?)");
  if (n > size - 8) bad(source, "header truncated: " + std::to_string(size - 8) + " of " + std::to_string(n) + " bytes");
  json::Value root = json::parse(reinterpret_cast<const char*>(data + 8), size_t(n), source);
  if (root.type != json::Value::Type::object) bad(source, "the header is a JSON " + std::string(json::type_name(root.type)) + ", not an object");
  Header h;
  h.data_start = 8 + n;
  uint64_t data_size = file_size - h.data_start;
  for (auto& [name, v] : root.members) {
    if (name == "__metadata__") {
      if (v.type != json::Value::Type::object) bad(source, "__metadata__ must be an object of strings");
      for (auto& [k, s] : v.members) {
        if (s.type != json::Value::Type::string) bad(source, "__metadata__[\"" + k + "\"] is not a string");
        h.metadata[k] = s.s;
      }
      continue;
    }
    std::string where = "tensor \"" + name + "\": ";
    if (name.empty()) bad(source, "a tensor has an empty name");
    if (v.type != json::Value::Type::object) bad(source, where + "entry is not an object");
    const json::Value* dt = v.find("dtype");
    const json::Value* sh = v.find("shape");
    const json::Value* off = v.find("data_offsets");
    if (!dt || dt->type != json::Value::Type::string) bad(source, where + "missing string \"dtype\"");
    if (!sh || sh->type != json::Value::Type::array) bad(source, where + "missing array \"shape\"");
    if (!off || off->type != json::Value::Type::array || off->items.size() != 2)
      bad(source, where + "\"data_offsets\" must be an array [begin, end]");
    TensorEntry e;
    e.name = name;
    e.dtype = dt->s;
    size_t isz = dtype_size(e.dtype);
    if (isz == 0) bad(source, where + "unknown dtype \"" + e.dtype + "\" (expected F32, F64, I32, I64, U8, BOOL, F16 or BF16)");
    if (sh->items.size() > kMaxDims) bad(source, where + "more than 8 dimensions");
    uint64_t bytes = isz;
    bool overflow = false;
    for (auto& d : sh->items) {
      if (d.type != json::Value::Type::number || !d.is_uint || d.u > uint64_t(INT64_MAX))
        bad(source, where + "shape entries must be non-negative integers");
      e.shape.push_back(int64_t(d.u));
      if (d.u != 0 && bytes > UINT64_MAX / d.u) overflow = true;
      else bytes *= d.u;
    }
    for (auto& d : e.shape)
      if (d == 0) { bytes = 0; overflow = false; }
    for (int i = 0; i < 2; ++i)
      if (off->items[i].type != json::Value::Type::number || !off->items[i].is_uint)
        bad(source, where + "data_offsets must be non-negative integers");
    e.begin = off->items[0].u;
    e.end = off->items[1].u;
    if (e.begin > e.end) bad(source, where + "data_offsets begin " + std::to_string(e.begin) + " > end " + std::to_string(e.end));
    if (e.end > data_size)
      bad(source, where + "data_offsets end " + std::to_string(e.end) + " lies past the " + std::to_string(data_size) +
                      " data bytes (truncated file?)");
    if (overflow || e.end - e.begin != bytes)
      bad(source, where + "data_offsets cover " + std::to_string(e.end - e.begin) + " bytes but shape x " + e.dtype +
                      " needs " + (overflow ? std::string("more than 2^64") : std::to_string(bytes)));
    h.tensors.push_back(std::move(e));
  }
  std::vector<const TensorEntry*> order;
  for (auto& e : h.tensors) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->begin < b->begin || (a->begin == b->begin && a->end < b->end); });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->begin < order[i - 1]->end)
      bad(source, "tensors \"" + order[i - 1]->name + "\" and \"" + order[i]->name + "\" overlap in the data section");
  return h;
}

}  // namespace vnn::io
