// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Issue 21: hostile files and failed loads. Each of the issue's points has a
// regression test here (the linear-bound test is tests/io/header_bounds.cpp,
// the fuzz seed corpus tests/fuzz/).
#include <catch2/catch.hpp>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>

#include "vnn/vnn.h"

using namespace vnn;

namespace {

std::string file_of(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(uint64_t(header.size()) >> (8 * i));
  return out + header + data;
}
std::string write(const std::string& name, const std::string& bytes) {
  std::string path = "vnn_test_hostile_" + name + ".safetensors";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}
// Runs f and reports which exception type escaped: only vnn errors may.
std::string escaped(const std::function<void()>& f) {
  try {
    f();
  } catch (const FormatError& e) {
    return std::string("FormatError: ") + e.what();
  } catch (const Error& e) {
    return std::string("vnn::Error: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("FOREIGN ") + typeid(e).name() + ": " + e.what();
  }
  return "none";
}
bool starts(const std::string& s, const char* p) { return s.compare(0, std::strlen(p), p) == 0; }

}  // namespace

// ---- point 3: only vnn errors; reads only the ranges the header names ------------

TEST_CASE("hostile: a 1-byte tensor followed by 1 TB of sparse bytes loads at once, without reading the tail") {
  std::string path = write("sparse", file_of(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "\x2a"));
  int fd = ::open(path.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  const off_t tera = off_t(1) << 40;
  int rc = ::ftruncate(fd, tera);
  ::close(fd);
  if (rc != 0) {
    WARN("this filesystem cannot hold a sparse 1 TB file; the test runs with what it has");
    SUCCEED();
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  io::TensorMap m = io::load(path);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s < 1.0);
  CHECK(m.at("a").to_vector<uint8_t>() == std::vector<uint8_t>{42});
  CHECK(io::load_metadata(path).empty());
  std::remove(path.c_str());
}

TEST_CASE("hostile: the header length is checked against the file size before anything is allocated") {
  // Claims a 99 MB header in a 20-byte file.
  std::string bytes(8, '\0');
  uint64_t n = 99ull * 1000 * 1000;
  for (int i = 0; i < 8; ++i) bytes[size_t(i)] = char(n >> (8 * i));
  std::string path = write("len", bytes + "{}          ");
  std::string e = escaped([&] { io::load(path); });
  CHECK(starts(e, "FormatError"));
  CHECK(e.find("runs past the end") != std::string::npos);
}

// ---- point 5: values from a file ---------------------------------------------------

TEST_CASE("hostile: BOOL bytes other than 0 and 1 are rejected, naming the tensor and element") {
  const std::string h = R"({"b":{"dtype":"BOOL","shape":[4],"data_offsets":[0,4]}})";
  CHECK(io::load(write("bool_ok", file_of(h, std::string("\0\1\1\0", 4)))).at("b").to_vector<bool>() ==
        std::vector<bool>{false, true, true, false});
  for (char bad : {'\2', '\xff'}) {
    std::string e = escaped([&] { io::load(write("bool_bad", file_of(h, std::string("\0\1", 2) + bad + '\0'))); });
    INFO(e);
    CHECK(starts(e, "FormatError"));
    CHECK(e.find("tensor \"b\"") != std::string::npos);
    CHECK(e.find("element 2") != std::string::npos);
  }
}

TEST_CASE("hostile: shapes whose element count, bytes or strides overflow are rejected") {
  for (const char* shape : {"[9223372036854775807,9223372036854775807,0]", "[4611686018427387904,4,0]",
                            "[4294967296,4294967296]", "[9223372036854775807]", "[9223372036854775808]",
                            "[18446744073709551616]", "[1,2,3,4,5,6,7,8,9]", "[-1]", "[1.5]"}) {
    std::string h = std::string(R"({"a":{"dtype":"F32","shape":)") + shape + R"(,"data_offsets":[0,0]}})";
    std::string e = escaped([&] { io::load(write("shape", file_of(h))); });
    INFO(shape << ": " << e);
    CHECK(starts(e, "FormatError"));
  }
  // An empty shape with a huge but representable extent is fine (as in PyTorch).
  auto m = io::load(write("shape_ok", file_of(R"({"a":{"dtype":"F32","shape":[0,1000000000000],"data_offsets":[0,0]}})")));
  CHECK(m.at("a").numel() == 0);
}

TEST_CASE("hostile: tensor names must be valid UTF-8 without NUL") {
  auto header = [](const std::string& name) {
    return "{\"" + name + R"(":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  };
  for (const char* name : {"\xff", "a\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80", "\x80", "a\\u0000b",
                           "\\ud800", "\\udc00x"}) {
    std::string e = escaped([&] { io::load(write("name", file_of(header(name), "x"))); });
    INFO(name << ": " << e);
    CHECK(starts(e, "FormatError"));
  }
  auto m = io::load(write("name_ok", file_of(header("e\xc3\xa9\xf0\x9f\x98\x80\\u00e9"), "x")));
  CHECK(m.count("e\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9") == 1);
}

TEST_CASE("hostile: tensor entries hold only dtype, shape and data_offsets, each once") {
  for (const char* h : {R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}})",
                        R"({"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                        R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})",
                        R"({"a":{"dtype":"U8","shape":[1]}})", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                        R"({"__metadata__":{},"__metadata__":{}})", R"({"__metadata__":{"k":"a","k":"b"}})",
                        R"({"__metadata__":{"k":1}})", R"([])", R"({"a":[[[[[[[[]]]]]]]]})"}) {
    std::string e = escaped([&] { io::load(write("entry", file_of(h, "x"))); });
    INFO(h << ": " << e);
    CHECK(starts(e, "FormatError"));
  }
}

// ---- point 3 / 4: training checkpoints -----------------------------------------------

namespace {

struct Trainer {
  nn::Sequential model{nullptr};
  std::unique_ptr<optim::Adam> opt;
  std::unique_ptr<optim::StepLR> sched;
  explicit Trainer(uint64_t seed, int steps) {
    Generator g(seed);
    model = nn::Sequential{nn::Linear(4, 8, true, &g), nn::ReLU(), nn::Linear(8, 2, true, &g)};
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(0.01));
    sched = std::make_unique<optim::StepLR>(*opt, 2, 0.5);
    Tensor x = randn({16, 4}, TensorOptions(), &g), y = randint(0, 2, {16}, TensorOptions().with(kInt64), &g);
    for (int i = 0; i < steps; ++i) {
      opt->zero_grad();
      nn::cross_entropy(model->forward(x), y).backward();
      opt->step();
      sched->step();
    }
  }
};

// Every value of a state dict, flattened, to compare before and after.
std::vector<double> values(const std::vector<std::pair<std::string, Tensor>>& sd) {
  std::vector<double> out;
  for (auto& [k, t] : sd)
    for (double v : t.to(kFloat64).cpu().contiguous().to_vector<double>()) out.push_back(v);
  return out;
}
struct Snapshot {
  std::vector<double> model, opt, sched;
  uint64_t seed, offset;
  Snapshot(const Trainer& t, const Generator& g)
      : model(values(t.model->state_dict())), opt(values(t.opt->state_dict())), sched(values(t.sched->state_dict())),
        seed(g.seed()), offset(g.offset()) {}
  bool operator==(const Snapshot& o) const {
    return model == o.model && opt == o.opt && sched == o.sched && seed == o.seed && offset == o.offset;
  }
};

}  // namespace

TEST_CASE("hostile: a failed load_training_checkpoint changes nothing; every field is checked first") {
  Trainer src(1, 3);
  Generator src_rng(77);
  src_rng.set_offset(12);
  const std::string good = "vnn_test_hostile_ckpt.safetensors";
  io::save_training_checkpoint(good, *src.model, src.opt.get(), src.sched.get(), {3, 3, {{"note", "x"}}}, &src_rng);
  const io::TensorMap tensors = io::load(good);
  const io::Metadata meta = io::load_metadata(good);

  // The target differs from the checkpoint everywhere (weights, Adam state,
  // scheduler epoch, generator), so a partial restore would show.
  Trainer dst(2, 1);
  Generator dst_rng(5);
  const Snapshot before(dst, dst_rng);
  REQUIRE_FALSE(before == Snapshot(src, src_rng));

  using Edit = std::function<void(io::TensorMap&, io::Metadata&)>;
  auto set_meta = [](const char* k, const char* v) { return Edit([=](io::TensorMap&, io::Metadata& m) { m[k] = v; }); };
  auto drop_meta = [](const char* k) { return Edit([=](io::TensorMap&, io::Metadata& m) { m.erase(k); }); };
  auto set_tensor = [](const char* k, Tensor v) { return Edit([=](io::TensorMap& t, io::Metadata&) { t[k] = v; }); };
  auto drop_tensor = [](const char* k) { return Edit([=](io::TensorMap& t, io::Metadata&) { t.erase(k); }); };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto f64 = [](double v) { return full({}, v, TensorOptions(kFloat64)); };
  const std::vector<std::pair<const char*, Edit>> edits = {
      {"rng.seed -5", set_meta("rng.seed", "-5")},
      {"rng.seed text", set_meta("rng.seed", "abc")},
      {"rng.seed empty", set_meta("rng.seed", "")},
      {"rng.seed 2^64", set_meta("rng.seed", "18446744073709551616")},
      {"rng.offset missing", drop_meta("rng.offset")},
      {"rng.seed missing", drop_meta("rng.seed")},
      {"rng.offset trailing", set_meta("rng.offset", "12x")},
      {"epoch missing", drop_meta("epoch")},
      {"epoch negative", set_meta("epoch", "-1")},
      {"epoch blank", set_meta("epoch", " 3")},
      {"step 2^63", set_meta("step", "9223372036854775808")},
      {"format", set_meta("format", "other")},
      {"model key missing", drop_tensor("model.2.bias")},
      {"model key unexpected", set_tensor("model.9.weight", zeros({2}))},
      {"model shape", set_tensor("model.2.weight", zeros({2, 7}))},
      {"stray top-level key", set_tensor("other", zeros({1}))},
      {"optimizer lr missing", drop_tensor("optimizer.param_groups.0.lr")},
      {"optimizer lr negative", set_tensor("optimizer.param_groups.0.lr", f64(-1))},
      {"optimizer state shape", set_tensor("optimizer.state.0.exp_avg", zeros({3}))},
      {"optimizer step NaN", set_tensor("optimizer.state.1.step", f64(nan))},
      {"optimizer step negative", set_tensor("optimizer.state.1.step", f64(-4))},
      {"optimizer unknown key", set_tensor("optimizer.state.0.bogus.x", zeros({1}))},
      {"scheduler last_epoch missing", drop_tensor("scheduler.last_epoch")},
      {"scheduler last_epoch NaN", set_tensor("scheduler.last_epoch", f64(nan))},
      {"scheduler last_epoch 1e300", set_tensor("scheduler.last_epoch", f64(1e300))},
      {"scheduler step_size 0", set_tensor("scheduler.step_size", f64(0))},
      {"scheduler step_size 0.5", set_tensor("scheduler.step_size", f64(0.5))},
      {"scheduler two values", set_tensor("scheduler.gamma", zeros({2}))},
  };
  const std::string bad = "vnn_test_hostile_ckpt_bad.safetensors";
  for (auto& [what, edit] : edits) {
    io::TensorMap t = tensors;
    io::Metadata m = meta;
    edit(t, m);
    io::save(bad, t, m);
    std::string e = escaped([&] { io::load_training_checkpoint(bad, *dst.model, dst.opt.get(), dst.sched.get(), &dst_rng); });
    INFO(what << ": " << e);
    CHECK((starts(e, "FormatError") || starts(e, "vnn::Error")));
    CHECK(Snapshot(dst, dst_rng) == before);
  }
  // The unedited file restores everything (so the edits above were the only
  // reason for the failures).
  io::TrainingProgress p = io::load_training_checkpoint(good, *dst.model, dst.opt.get(), dst.sched.get(), &dst_rng);
  CHECK(p.epoch == 3);
  CHECK(p.extra.at("note") == "x");
  CHECK(Snapshot(dst, dst_rng) == Snapshot(src, src_rng));
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("hostile: Module::load_state_dict validates every entry before changing any") {
  Trainer a(1, 0), b(2, 0);
  const std::vector<double> before = values(b.model->state_dict());
  nn::StateDict sd = a.model->state_dict();
  sd.back().second = zeros({5});  // the last entry is wrong: the first ones must not have been applied
  CHECK_THROWS_AS(b.model->load_state_dict(sd), ShapeError);
  CHECK(values(b.model->state_dict()) == before);
  sd = a.model->state_dict();
  sd.back().second = Tensor();
  CHECK_THROWS_AS(b.model->load_state_dict(sd), ValueError);
  CHECK(values(b.model->state_dict()) == before);
}

TEST_CASE("hostile: optimizer and scheduler load_state_dict leave the object unchanged when they throw") {
  Trainer a(1, 2), b(2, 1);
  const std::vector<double> opt_before = values(b.opt->state_dict()), sched_before = values(b.sched->state_dict());
  optim::StateDict o = a.opt->state_dict();
  o.emplace_back("state.0.step", full({}, -1.0, TensorOptions(kFloat64)));
  CHECK_THROWS_AS(b.opt->load_state_dict(o), ValueError);
  CHECK(values(b.opt->state_dict()) == opt_before);
  optim::StateDict s = a.sched->state_dict();
  for (auto& [k, v] : s)
    if (k == "step_size") v = full({}, 0.0, TensorOptions(kFloat64));  // would divide by zero in step()
  CHECK_THROWS_AS(b.sched->load_state_dict(s), ValueError);
  CHECK(values(b.sched->state_dict()) == sched_before);
}

// ---- point 6: temporary files --------------------------------------------------------

namespace {
std::vector<std::string> temps_of(const std::string& base) {
  std::vector<std::string> out;
  DIR* d = ::opendir(".");
  while (struct dirent* e = d ? ::readdir(d) : nullptr)
    if (std::strncmp(e->d_name, (base + ".vnn-tmp-").c_str(), base.size() + 9) == 0) out.push_back(e->d_name);
  if (d) ::closedir(d);
  return out;
}
}  // namespace

TEST_CASE("hostile: a save killed by SIGKILL leaves its temp file, and the next save removes it") {
  const std::string path = "vnn_test_hostile_killed.safetensors";
  for (auto& t : temps_of(path)) std::remove(t.c_str());
  int out[2];
  REQUIRE(::pipe(out) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::execl(VNN_SAVE_CHILD, VNN_SAVE_CHILD, path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  char c = 0;
  REQUIRE(::read(out[0], &c, 1) == 1);  // mid-save: 1 MB of the temp file written
  CHECK(c == 'w');
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out[0]);
  REQUIRE(WIFSIGNALED(status));
  auto left = temps_of(path);
  REQUIRE(left.size() == 1);  // the killed writer's <file>.vnn-tmp-<pid>-<rand>
  CHECK(left[0].find(".vnn-tmp-" + std::to_string(pid) + "-") != std::string::npos);

  // A temp file of a live process (this one) is not touched.
  std::string live = path + ".vnn-tmp-" + std::to_string(::getpid()) + "-live";
  std::ofstream(live) << "in progress";
  io::save(path, {{"x", ones({3})}});
  CHECK(temps_of(path) == std::vector<std::string>{live.substr(0)});
  CHECK(io::load(path).at("x").to_vector<float>() == std::vector<float>{1, 1, 1});
  std::remove(live.c_str());
  std::remove(path.c_str());
}

// ---- IDX and CSV readers: only vnn errors ---------------------------------------------

TEST_CASE("hostile: corrupt IDX and CSV files raise only vnn errors") {
  auto idx = [](const std::string& bytes) {
    std::string p = "vnn_test_hostile.idx";
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  };
  const std::string hdr("\0\0\x08\x01\0\0\0\x04", 8);
  for (const std::string& f : {std::string(), std::string("\0\0", 2), hdr, hdr + "abc", hdr + "abcde",
                               std::string("\0\0\x08\x09", 4), std::string("\0\0\x0b\x01", 4),
                               std::string("\0\0\x08\x02\xff\xff\xff\xff\xff\xff\xff\xff", 12),
                               std::string("\x1f\x8b\x08\0\0\0\0\0", 8) + "garbage"}) {
    std::string e = escaped([&] { data::read_idx(idx(f)); });
    INFO(e);
    CHECK(!starts(e, "FOREIGN"));
    CHECK(e != "none");
  }
  // Found by the IDX fuzz target: 22 bytes declaring [2, 3111630118] float32
  // asked for 24 GB before reading; now the file size bounds the shape.
  std::string e = escaped([&] {
    data::read_idx(idx(std::string("\0\0\x0d\x02\0\0\0\x02\xb9\x77\xb5\x26", 12) + std::string(10, 'x')));
  });
  CHECK(starts(e, "FormatError"));
  CHECK(e.find("needs 24893040944 data bytes") != std::string::npos);
  for (const std::string& csv : {std::string("a,b\n1,2\n3\n"), std::string("a,b\n1,x\n"), std::string(""),
                                 std::string("a,label\n1,99999999999999999999\n")}) {
    std::ofstream("vnn_test_hostile.csv") << csv;
    data::CsvOptions o;
    o.label_column = csv.find("label") != std::string::npos ? "label" : "";
    std::string e = escaped([&] { data::read_csv("vnn_test_hostile.csv", o); });
    INFO(csv << ": " << e);
    CHECK(!starts(e, "FOREIGN"));
    CHECK(e != "none");
  }
}
