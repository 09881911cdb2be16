// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::utils::SummaryWriter: the files are valid TFRecords (both CRCs), the
// events decode to what was logged, several threads can log at once,
// flushing is periodic, and a corrupt file left in logdir is harmless.
#include <catch2/catch.hpp>
#include <vnn/vnn.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "utils/event_file.hpp"

namespace fs = std::filesystem;
using vnn::utils::SummaryWriter;

namespace {
fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("vnn_summary_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}
std::vector<fs::path> event_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) out.push_back(e.path());
  return out;
}
}  // namespace

TEST_CASE("crc32c matches the Castagnoli check value") {
  CHECK(vnn::utils::crc32c("123456789", 9) == 0xE3069283u);
  CHECK(vnn::utils::crc32c("", 0) == 0u);
  uint32_t c = vnn::utils::crc32c("123456789", 9);
  CHECK(vnn::utils::masked_crc32c("123456789", 9) == uint32_t(((c >> 15) | (c << 17)) + 0xa282ead8u));
}

TEST_CASE("add_scalar writes one event per point, decoded back") {
  fs::path dir = fresh_dir("scalar");
  std::string path;
  {
    SummaryWriter w(dir.string());
    path = w.file_path();
    for (int s = 0; s < 5; ++s) w.add_scalar("loss/train", 1.0 / (s + 1), s, 1000.0 + s);
    w.close();
  }
  auto ev = evtest::summary_events(path);
  REQUIRE(ev.size() == 5);
  for (int s = 0; s < 5; ++s) {
    CHECK(ev[size_t(s)].step == s);
    CHECK(ev[size_t(s)].wall_time == 1000.0 + s);
    CHECK(ev[size_t(s)].tag == "loss/train");
    CHECK(ev[size_t(s)].value.f32(2) == float(1.0 / (s + 1)));
  }
  fs::remove_all(dir);
}

TEST_CASE("add_scalars writes each series into <logdir>/<main_tag>_<key>") {
  fs::path dir = fresh_dir("scalars");
  {
    SummaryWriter w(dir.string());
    w.add_scalars("acc/run", {{"train", 0.5}, {"test", 0.25}}, 3);
    w.add_scalars("acc/run", {{"train", 0.75}, {"test", 0.5}}, 4);
  }
  for (auto [key, first] : std::vector<std::pair<std::string, float>>{{"train", 0.5f}, {"test", 0.25f}}) {
    auto files = event_files(dir / ("acc_run_" + key));
    REQUIRE(files.size() == 1);
    auto ev = evtest::summary_events(files[0].string());
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].tag == "acc/run");
    CHECK(ev[0].step == 3);
    CHECK(ev[0].value.f32(2) == first);
    CHECK(ev[1].step == 4);
  }
  SummaryWriter w(dir.string());
  CHECK_THROWS_AS(w.add_scalars("x", {{"a/b", 1.0}}, 0), vnn::ValueError);
  fs::remove_all(dir);
}

TEST_CASE("add_histogram: numpy-style buckets and the moments") {
  fs::path dir = fresh_dir("histo");
  std::string path;
  {
    SummaryWriter w(dir.string());
    path = w.file_path();
    w.add_histogram("w", std::vector<double>{0, 1, 1, 2, 3, 4}, 7, 4);
    w.add_histogram("t", vnn::arange(0, 10, 1), 8, 5);  // a tensor, 0..9
    w.add_histogram("one", std::vector<double>{2.5}, 9, 3);
    CHECK_THROWS_AS(w.add_histogram("nan", std::vector<double>{1, std::nan("")}, 0), vnn::ValueError);
    CHECK_THROWS_AS(w.add_histogram("empty", std::vector<double>{}, 0), vnn::ValueError);
    CHECK_THROWS_AS(w.add_histogram("bins", std::vector<double>{1}, 0, 0), vnn::ValueError);
    CHECK_THROWS_AS(w.add_histogram("bins", std::vector<double>{1}, 0, 2000000000), vnn::ValueError);
  }
  auto ev = evtest::summary_events(path);
  REQUIRE(ev.size() == 3);
  auto unpack = [](const std::string& b) {
    std::vector<double> v(b.size() / 8);
    std::memcpy(v.data(), b.data(), b.size());
    return v;
  };
  evtest::Fields h = evtest::decode(ev[0].value.one(5));
  CHECK(ev[0].step == 7);
  CHECK(h.f64(1) == 0);
  CHECK(h.f64(2) == 4);
  CHECK(h.f64(3) == 6);
  CHECK(h.f64(4) == 11);
  CHECK(h.f64(5) == 31);
  CHECK(unpack(h.one(6)) == std::vector<double>{1, 2, 3, 4});
  CHECK(unpack(h.one(7)) == std::vector<double>{1, 2, 1, 2});  // [0,1) [1,2) [2,3) [3,4]
  evtest::Fields t = evtest::decode(ev[1].value.one(5));
  CHECK(unpack(t.one(7)) == std::vector<double>{2, 2, 2, 2, 2});
  CHECK(t.f64(4) == 45);
  evtest::Fields one = evtest::decode(ev[2].value.one(5));
  CHECK(unpack(one.one(6)) == std::vector<double>{2 + 1.0 / 3, 2 + 2.0 / 3, 3});
  CHECK(unpack(one.one(7)) == std::vector<double>{0, 1, 0});
  fs::remove_all(dir);
}

TEST_CASE("add_text is a DT_STRING tensor for the text plugin") {
  fs::path dir = fresh_dir("text");
  std::string path;
  {
    SummaryWriter w(dir.string());
    path = w.file_path();
    w.add_text("notes", "**hello** tensorboard", 2);
  }
  auto ev = evtest::summary_events(path);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].tag == "notes/text_summary");
  evtest::Fields tensor = evtest::decode(ev[0].value.one(8));
  CHECK(tensor.ints.find(1)->second == 7u);
  CHECK(tensor.one(8) == "**hello** tensorboard");
  evtest::Fields meta = evtest::decode(ev[0].value.one(9));
  CHECK(evtest::decode(meta.one(1)).one(1) == "text");
}

TEST_CASE("many threads log at once; every record is intact") {
  fs::path dir = fresh_dir("threads");
  std::string path;
  {
    vnn::utils::SummaryWriterOptions o;
    o.max_queue = 7;
    SummaryWriter w(dir.string(), o);
    path = w.file_path();
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&w, t] {
        for (int i = 0; i < 250; ++i) w.add_scalar("thread" + std::to_string(t), i, i);
      });
    for (auto& t : ts) t.join();
  }
  auto ev = evtest::summary_events(path);
  REQUIRE(ev.size() == 1000);
  std::map<std::string, int> per_tag;
  for (auto& e : ev) ++per_tag[e.tag];
  CHECK(per_tag.size() == 4);
  for (auto& kv : per_tag) CHECK(kv.second == 250);
  fs::remove_all(dir);
}

TEST_CASE("events reach the file by max_queue, flush() and the periodic flush") {
  fs::path dir = fresh_dir("flush");
  vnn::utils::SummaryWriterOptions o;
  o.max_queue = 3;
  o.flush_secs = 0.05;
  SummaryWriter w(dir.string(), o);
  CHECK(evtest::summary_events(w.file_path()).empty());  // the file_version event is on disk at once
  w.add_scalar("a", 1, 0);
  w.add_scalar("a", 2, 1);
  w.add_scalar("a", 3, 2);  // the queue's third: written
  CHECK(evtest::summary_events(w.file_path()).size() == 3);
  w.add_scalar("a", 4, 3);
  size_t seen = 0;
  for (int i = 0; i < 200 && seen < 4; ++i) {  // the background flush, within seconds on a loaded machine
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    seen = evtest::summary_events(w.file_path()).size();
  }
  CHECK(seen == 4);
  w.add_scalar("a", 5, 4);
  w.flush();
  CHECK(evtest::summary_events(w.file_path()).size() == 5);
  w.close();
  CHECK_THROWS_AS(w.add_scalar("a", 6, 5), vnn::ValueError);
  CHECK_NOTHROW(w.close());  // twice is fine
  fs::remove_all(dir);
}

TEST_CASE("a corrupt or truncated event file in logdir does not disturb a new writer") {
  fs::path dir = fresh_dir("corrupt");
  fs::create_directories(dir);
  std::string old;
  {
    SummaryWriter w(dir.string());
    old = w.file_path();
    w.add_scalar("x", 1, 0);
  }
  // Truncate the old file mid-record and add a garbage one with the same prefix.
  fs::resize_file(old, fs::file_size(old) - 5);
  std::ofstream(dir / "events.out.tfevents.0000000000.host.1.0", std::ios::binary) << "\xff\xff\xff garbage";
  CHECK_THROWS(evtest::records(old));
  std::string path;
  {
    SummaryWriter w(dir.string());
    path = w.file_path();
    CHECK(path != old);
    w.add_scalar("x", 2, 1);
  }
  auto ev = evtest::summary_events(path);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].value.f32(2) == 2.0f);
  fs::remove_all(dir);
}

TEST_CASE("bad arguments are typed errors") {
  fs::path dir = fresh_dir("errors");
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  CHECK_THROWS_AS(SummaryWriter((dir / "file").string()), vnn::ValueError);         // logdir is a file
  CHECK_THROWS_AS(SummaryWriter((dir / "file" / "sub").string()), vnn::ValueError);  // under a file
  CHECK_THROWS_AS(SummaryWriter(""), vnn::ValueError);
  SummaryWriter w((dir / "ok").string());
  CHECK_THROWS_AS(w.add_scalar("", 1, 0), vnn::ValueError);
  CHECK_THROWS_AS(w.add_histogram("b", vnn::full({2}, 1.0).to(vnn::kBool), 0), vnn::DTypeError);
  w.close();
  fs::remove_all(dir);
}
