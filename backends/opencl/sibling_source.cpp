// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "sibling_source.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

namespace vnn_opencl {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// s without its comments (newlines kept, so that lines stay lines).
std::string strip_comments(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      for (size_t j = i; j < std::min(end, s.size()); ++j)
        if (s[j] == '\n') out += '\n';
      i = end == std::string::npos ? s.size() : end + 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// The identifiers of code text, in order of first appearance.
std::vector<std::string> identifiers(const std::string& code) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (size_t i = 0; i < code.size();) {
    if (ident_start(code[i]) && (i == 0 || !ident_char(code[i - 1]))) {
      size_t j = i;
      while (j < code.size() && ident_char(code[j])) ++j;
      std::string id = code.substr(i, j - i);
      if (seen.insert(id).second) ids.push_back(std::move(id));
      i = j;
    } else {
      ++i;
    }
  }
  return ids;
}

// The word after position i (skipping blanks), or "".
std::string word_at(const std::string& s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  size_t j = i;
  while (j < s.size() && ident_char(s[j])) ++j;
  return s.substr(i, j - i);
}

// Names of the macros a code text #defines, and of its typedefs and inline
// functions (a line "inline <type> name(...": the name before the first
// parenthesis, unless pasted with ## inside a macro).
void declarations(const std::string& code, std::vector<std::string>* macros, std::vector<std::string>* names) {
  for (size_t line = 0; line < code.size();) {
    size_t end = code.find('\n', line);
    if (end == std::string::npos) end = code.size();
    size_t i = line;
    while (i < end && (code[i] == ' ' || code[i] == '\t')) ++i;
    if (i < end && code[i] == '#' && word_at(code, i + 1) == "define") {
      const size_t at = code.find("define", i);
      macros->push_back(word_at(code, at + 6));
    } else if (word_at(code, i) == "inline") {
      const size_t paren = code.find('(', i);
      if (paren < end) {
        size_t j = paren;
        while (j > i && (code[j - 1] == ' ' || code[j - 1] == '\t')) --j;
        size_t k = j;
        while (k > i && ident_char(code[k - 1])) --k;
        if (k < j && !(k >= 2 && code.compare(k - 2, 2, "##") == 0)) names->push_back(code.substr(k, j - k));
      }
    }
    line = end + 1;
  }
  // typedef ... NAME;  (the last identifier before the semicolon)
  for (size_t at = code.find("typedef"); at != std::string::npos; at = code.find("typedef", at + 7)) {
    if ((at > 0 && ident_char(code[at - 1])) || ident_char(code[at + 7])) continue;
    const size_t semi = code.find(';', at);
    if (semi == std::string::npos) break;
    size_t j = semi;
    while (j > at && !ident_char(code[j - 1])) --j;
    size_t k = j;
    while (k > at && ident_char(code[k - 1])) --k;
    names->push_back(code.substr(k, j - k));
  }
}

// "-DA=1 -DB" as {{"A", "1"}, {"B", "1"}}.
std::vector<std::pair<std::string, std::string>> defines_of(const std::string& options) {
  std::vector<std::pair<std::string, std::string>> defs;
  for (size_t at = options.find("-D"); at != std::string::npos; at = options.find("-D", at + 2)) {
    if (at > 0 && options[at - 1] != ' ') continue;
    size_t end = options.find(' ', at);
    if (end == std::string::npos) end = options.size();
    const std::string def = options.substr(at + 2, end - at - 2);
    const size_t eq = def.find('=');
    defs.emplace_back(def.substr(0, eq), eq == std::string::npos ? "1" : def.substr(eq + 1));
  }
  return defs;
}

}  // namespace

std::string sibling_kernel_name(const char* kernel_name, size_t index) {
  return std::string(kernel_name) + "__" + std::to_string(index);
}

std::string sibling_source(const std::string& shared, const std::string& body, const std::string& options,
                           const std::vector<std::string>& variants) {
  const std::string code = strip_comments(body);
  std::set<std::string> shared_ids;
  for (std::string& id : identifiers(strip_comments(shared))) shared_ids.insert(std::move(id));
  std::vector<std::string> macros, renamed;
  declarations(code, &macros, &renamed);
  // Also every vnn_* name that the shared part does not declare (kernels,
  // helpers made by macros); the shared part's helpers and macros' locals stay.
  for (const std::string& id : identifiers(code))
    if (id.compare(0, 4, "vnn_") == 0 && !shared_ids.count(id)) renamed.push_back(id);
  std::set<std::string> unique;
  renamed.erase(std::remove_if(renamed.begin(), renamed.end(),
                               [&](const std::string& n) { return shared_ids.count(n) || !unique.insert(n).second; }),
                renamed.end());
  std::set<std::string> keep;  // the shared options' macros
  for (const auto& def : defines_of(options)) keep.insert(def.first);

  std::string out;
  for (size_t v = 0; v < variants.size(); ++v) {
    const auto defs = defines_of(variants[v]);
    out += "\n// variant " + std::to_string(v) + ": " + variants[v] + "\n";
    for (const auto& def : defs) out += "#define " + def.first + " " + def.second + "\n";
    for (const std::string& name : renamed) out += "#define " + name + " " + sibling_kernel_name(name.c_str(), v) + "\n";
    out += body;
    out += "\n";
    for (const std::string& name : renamed) out += "#undef " + name + "\n";
    for (const std::string& name : macros)
      if (!keep.count(name)) out += "#undef " + name + "\n";
    for (const auto& def : defs) out += "#undef " + def.first + "\n";
  }
  return out;
}

}  // namespace vnn_opencl
