// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The character corpus of the text examples (train_gpt, char_lstm): Debian's
// `fortunes` text read in a fixed order, and its byte vocabulary with a
// 90% / 10% train / validation split.
#pragma once
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <vnn/error.h>

namespace fortunes {

// Every fortune file of `dir` (the text files: no extension, not the
// ASCII-art ones), records separated by "%" lines, joined by blank lines;
// sorted by file name so every run reads the same text.
inline std::string read_corpus(const std::string& dir, const std::string& program) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n[0] == '.' || n.find('.') != std::string::npos || n.find("art") != std::string::npos) continue;
      names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const auto& n : names) {
    std::ifstream in(dir + "/" + n);
    std::string line;
    while (std::getline(in, line)) {
      if (line == "%") {
        text += "\n";
        continue;
      }
      for (char ch : line)  // printable ASCII and tabs as spaces; other bytes dropped
        if (ch == '\t') text += ' ';
        else if (ch >= 32 && ch < 127) text += ch;
      text += '\n';
    }
  }
  if (text.size() < 10000)
    throw vnn::Error(program + ": found no text in " + dir +
                     " (install Debian's fortunes package: apt-get install fortunes, or pass --data DIR)");
  return text;
}

struct Corpus {
  std::string chars;                // the vocabulary, sorted
  std::vector<int64_t> train, val;  // token ids, 90% / 10%
};

inline Corpus tokenize(const std::string& text) {
  Corpus c;
  std::vector<bool> seen(256, false);
  for (unsigned char ch : text) seen[ch] = true;
  int id[256];
  for (int b = 0; b < 256; ++b)
    if (seen[size_t(b)]) id[b] = int(c.chars.size()), c.chars += char(b);
  const size_t n_train = text.size() * 9 / 10;
  for (size_t i = 0; i < text.size(); ++i) (i < n_train ? c.train : c.val).push_back(id[(unsigned char)text[i]]);
  return c;
}

}  // namespace fortunes
