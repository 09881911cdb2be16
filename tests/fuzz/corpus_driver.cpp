// Runs the fuzz entry point over a corpus of corrupted files built here:
// every truncation and many byte flips of valid files, plus hand-made
// hostile headers. Always runs (no clang needed).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
std::string file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(uint64_t(header.size()) >> (8 * i));
  return out + header + data;
}
void run(const std::string& s) {
  // A heap copy of exactly the input size, so ASan (when on) sees overreads.
  std::vector<uint8_t> buf(s.begin(), s.end());
  LLVMFuzzerTestOneInput(buf.empty() ? nullptr : buf.data(), buf.size());
}
}  // namespace

int main() {
  std::vector<std::string> seeds{
      file(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"__metadata__":{"k":"v"}})", std::string(16, 'x')),
      file(R"({"w":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]},"b":{"dtype":"I64","shape":[],"data_offsets":[6,14]}})", std::string(14, 'y')),
      file(R"({"s":{"dtype":"BOOL","shape":[0],"data_offsets":[0,0]},"u":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "z"),
      file(R"({"e\u00e9\ud83d\ude00":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", std::string(8, 'q')),
  };
  size_t cases = 0;
  for (auto& s : seeds) {
    for (size_t n = 0; n <= s.size(); ++n, ++cases) run(s.substr(0, n));
    for (size_t i = 0; i < s.size(); ++i)
      for (int bit : {0, 1, 4, 7}) {
        std::string m = s;
        m[i] = char(m[i] ^ (1 << bit));
        run(m);
        ++cases;
      }
    for (size_t i = 8; i < s.size(); ++i) {
      for (char c : {'"', '{', '}', '[', ']', ',', ':', '-', '9', '\\', '\0'}) {
        std::string m = s;
        m[i] = c;
        run(m);
        ++cases;
      }
    }
  }
  std::string huge(8, '\xff');
  run(huge);
  run(huge + "{}");
  run(file(std::string(100000, '['), ""));
  cases += 3;
  std::printf("safetensors corpus: %zu inputs, no crash\n", cases);
  return 0;
}
