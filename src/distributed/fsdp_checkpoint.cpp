// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FullyShardedDataParallel's state: the full state dict gathered to rank 0,
// and sharded checkpoints (one file per rank plus an index, each written
// atomically) that load on any world size.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "autograd/autograd.hpp"
#include "distributed/fsdp_state.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/io/safetensors.h"
#include "vnn/random.h"

namespace vnn::nn {

namespace {

const char* const kFormat = "vnn-fsdp-sharded-1";

std::string rank_file(const std::string& dir, int rank, int world) {
  return dir + "/rank-" + std::to_string(rank) + "-of-" + std::to_string(world) + ".safetensors";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// Copies the part of `src` (elements [src_begin, src_begin + src.numel()) of
// a flat index space) that falls in [dst_begin, dst_begin + dst.numel()) into dst.
void copy_overlap(const Tensor& dst, int64_t dst_begin, const Tensor& src, int64_t src_begin) {
  const int64_t lo = std::max(dst_begin, src_begin);
  const int64_t hi = std::min(dst_begin + dst.numel(), src_begin + src.numel());
  if (hi <= lo) return;
  dst.narrow(0, lo - dst_begin, hi - lo).copy_(src.narrow(0, lo - src_begin, hi - lo));
}

int64_t meta_int(const io::Metadata& m, const std::string& key, const std::string& file) {
  auto it = m.find(key);
  VNN_CHECK(FormatError, it != m.end(), "load_sharded_checkpoint: ", file, " has no '", key, "' in its metadata");
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    VNN_THROW(FormatError, "load_sharded_checkpoint: ", file, ": '", key, "' = '", it->second, "' is not a number");
  }
}

// For each optimizer parameter (in state_dict numbering) the flat buffer it is.
std::vector<size_t> optimizer_flats(const optim::Optimizer& opt, const std::vector<FlatParam*>& flats,
                                    const char* who) {
  std::vector<size_t> out;
  for (auto& g : opt.param_groups())
    for (auto& p : g.params) {
      size_t k = 0;
      while (k < flats.size() && flats[k]->shard.impl() != p.impl()) ++k;
      VNN_CHECK(ValueError, k < flats.size(), who, ": the optimizer holds a parameter of shape ", p.sizes(),
                " that is not one of this FullyShardedDataParallel's shards; build it on fsdp->parameters()");
      out.push_back(k);
    }
  return out;
}

}  // namespace

StateDict FullyShardedDataParallel::full_state_dict(bool rank0_only) {
  State& st = *state_;
  autograd::NoGradGuard no_grad;
  const bool keep = !rank0_only || st.rank == 0;
  const Device cpu("cpu", 0);
  std::unordered_map<const void*, Tensor> value;
  for (FlatParam* f : st.all_flats()) {
    Tensor full = empty({f->padded}, TensorOptions(f->device).with(f->dtype));
    st.pg.allgather_into_tensor(full, f->shard.detach()).wait();
    if (!keep) continue;
    for (size_t i = 0; i < f->params.size(); ++i)
      value[f->params[i].impl()] =
          full.narrow(0, f->offsets[i], f->shapes[i].numel()).view(f->shapes[i]).clone().to(cpu);
  }
  StateDict out;
  if (!keep) return out;
  for (auto& [n, t] : module_->state_dict()) {
    auto it = value.find(t.impl());
    out.emplace_back(n, it != value.end() ? it->second : t.clone().to(cpu));
  }
  return out;
}

void FullyShardedDataParallel::load_full_state_dict(const StateDict& state, bool strict) {
  State& st = *state_;
  const char* who = "FullyShardedDataParallel::load_full_state_dict";
  std::unordered_map<std::string, Tensor> given;
  for (auto& [n, t] : state) given[n] = t;
  std::unordered_map<const void*, std::vector<std::string>> names_of;
  std::string missing, unexpected;
  StateDict mine = module_->state_dict();
  std::unordered_map<std::string, bool> known;
  for (auto& [n, t] : mine) {
    known[n] = true;
    names_of[t.impl()].push_back(n);
    if (!given.count(n)) missing += (missing.empty() ? "" : ", ") + n;
  }
  for (auto& [n, t] : state)
    if (!known.count(n)) unexpected += (unexpected.empty() ? "" : ", ") + n;
  if (strict && (!missing.empty() || !unexpected.empty()))
    VNN_THROW(ValueError, who, ": ", (missing.empty() ? "" : "missing keys: " + missing + ". "),
              (unexpected.empty() ? "" : "unexpected keys: " + unexpected + ". "),
              "Pass strict = false to load a partial state");
  for (auto& u : st.units) st.reshard(*u);
  autograd::NoGradGuard no_grad;
  for (FlatParam* f : st.all_flats())
    for (size_t i = 0; i < f->params.size(); ++i) {
      const Tensor* src = nullptr;
      for (auto& n : names_of[f->params[i].impl()])
        if (given.count(n)) src = &given[n];
      if (!src) continue;
      VNN_CHECK(ShapeError, src->sizes() == f->shapes[i], who, ": size mismatch for ", f->names[i], ": checkpoint ",
                src->sizes(), ", model ", f->shapes[i]);
      const int64_t n = f->shapes[i].numel();
      copy_overlap(f->shard, int64_t(st.rank) * f->shard_numel, src->to(f->device, f->dtype).reshape({n}),
                   f->offsets[i]);
    }
  for (auto& [n, t] : module_->named_buffers(true, false)) {
    auto it = given.find(n);
    if (it == given.end()) continue;
    VNN_CHECK(ShapeError, it->second.sizes() == t.sizes(), who, ": size mismatch for ", n, ": checkpoint ",
              it->second.sizes(), ", model ", t.sizes());
    Tensor(t).copy_(it->second);
  }
}

void FullyShardedDataParallel::save_sharded_checkpoint(const std::string& dir, const optim::Optimizer* optimizer,
                                                       const io::TrainingProgress& progress) {
  State& st = *state_;
  const char* who = "FullyShardedDataParallel::save_sharded_checkpoint";
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    VNN_THROW(FileError, who, ": cannot create the directory ", dir, ": ", std::strerror(errno));
  auto flats = st.all_flats();
  io::TensorMap mine, index;
  for (size_t k = 0; k < flats.size(); ++k) mine.emplace_back("flat." + std::to_string(k), flats[k]->shard.detach());
  if (optimizer) {
    std::vector<size_t> flat_of = optimizer_flats(*optimizer, flats, who);
    for (auto& [key, t] : optimizer->state_dict()) {
      if (key.compare(0, 6, "state.") != 0) {
        index.emplace_back("optim." + key, t);
        continue;
      }
      size_t dot = key.find('.', 6);
      size_t i = size_t(std::stoll(key.substr(6, dot - 6)));
      mine.emplace_back("optim." + std::to_string(flat_of.at(i)) + key.substr(dot), t);
    }
  }
  io::save(rank_file(dir, st.rank, st.world), mine,
           {{"format", kFormat}, {"rank", std::to_string(st.rank)}, {"world_size", std::to_string(st.world)}});
  st.pg.barrier().wait();
  if (st.rank == 0) {
    io::Metadata meta{{"format", kFormat},
                      {"world_size", std::to_string(st.world)},
                      {"flats", std::to_string(flats.size())},
                      {"optimizer", optimizer ? optimizer->name() : ""},
                      {"epoch", std::to_string(progress.epoch)},
                      {"step", std::to_string(progress.step)},
                      {"rng.seed", std::to_string(default_generator().seed())},
                      {"rng.offset", std::to_string(default_generator().offset())}};
    for (size_t k = 0; k < flats.size(); ++k) {
      meta["flat." + std::to_string(k) + ".numel"] = std::to_string(flats[k]->numel);
      meta["flat." + std::to_string(k) + ".names"] = join_names(flats[k]->names);
    }
    for (auto& [k, v] : progress.extra) meta["extra." + k] = v;
    for (auto& [n, t] : module_->named_buffers(true, false)) index.emplace_back("buffer." + n, t);
    io::save(dir + "/index.safetensors", index, meta);  // last: a checkpoint with an index is complete
  }
  st.pg.barrier().wait();
}

io::TrainingProgress FullyShardedDataParallel::load_sharded_checkpoint(const std::string& dir,
                                                                       optim::Optimizer* optimizer) {
  State& st = *state_;
  const char* who = "FullyShardedDataParallel::load_sharded_checkpoint";
  const std::string index_path = dir + "/index.safetensors";
  io::Metadata meta = io::load_metadata(index_path);
  VNN_CHECK(FormatError, meta["format"] == kFormat, who, ": ", index_path, " is not a vnn FSDP sharded checkpoint (format '",
            meta["format"], "', expected '", kFormat, "')");
  const int64_t old_world = meta_int(meta, "world_size", index_path);
  auto flats = st.all_flats();
  VNN_CHECK(ValueError, meta_int(meta, "flats", index_path) == int64_t(flats.size()), who, ": ", index_path,
            " holds ", meta["flats"], " flat buffers but this model has ", flats.size(),
            "; load it into the model (and wrap policy) that wrote it");
  for (size_t k = 0; k < flats.size(); ++k) {
    std::string key = "flat." + std::to_string(k);
    VNN_CHECK(ValueError, meta[key + ".names"] == join_names(flats[k]->names), who, ": flat buffer ", k, " of ",
              index_path, " holds [", meta[key + ".names"], "] but this model's holds [", join_names(flats[k]->names),
              "]; load it into the model (and wrap policy) that wrote it");
  }
  if (optimizer)
    VNN_CHECK(ValueError, meta["optimizer"] == optimizer->name(), who, ": ", index_path, " holds the state of ",
              (meta["optimizer"].empty() ? std::string("no optimizer") : meta["optimizer"]), ", not of ",
              optimizer->name());
  for (auto& u : st.units) st.reshard(*u);
  autograd::NoGradGuard no_grad;

  // New shards and optimizer state, filled from each old rank's file in turn.
  std::vector<Tensor> shard(flats.size());
  std::vector<std::map<std::string, Tensor>> state(flats.size());
  for (size_t k = 0; k < flats.size(); ++k)
    shard[k] = zeros({flats[k]->shard_numel}, TensorOptions(flats[k]->device).with(flats[k]->dtype));
  for (int64_t q = 0; q < old_world; ++q) {
    const std::string path = rank_file(dir, int(q), int(old_world));
    io::TensorMap file = io::load(path, flats.empty() ? Device("cpu", 0) : flats[0]->device);
    std::unordered_map<std::string, Tensor> by_name(file.begin(), file.end());
    for (size_t k = 0; k < flats.size(); ++k) {
      FlatParam& f = *flats[k];
      const int64_t old_shard = (f.numel + old_world - 1) / old_world, mine = int64_t(st.rank) * f.shard_numel;
      const std::string prefix = "optim." + std::to_string(k) + ".";
      auto it = by_name.find("flat." + std::to_string(k));
      VNN_CHECK(FormatError, it != by_name.end() && it->second.numel() == old_shard, who, ": ", path,
                " lacks flat buffer ", k, " of ", old_shard, " elements");
      copy_overlap(shard[k], mine, it->second.to(f.dtype), q * old_shard);
      for (auto& [name, t] : file) {
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        std::string buf = name.substr(prefix.size());
        if (buf == "step") {
          state[k][buf] = t;
          continue;
        }
        VNN_CHECK(FormatError, t.numel() == old_shard, who, ": ", path, ": '", name, "' has ", t.numel(),
                  " elements, expected ", old_shard);
        Tensor& dst = state[k][buf];
        if (!dst.defined()) dst = zeros({f.shard_numel}, TensorOptions(f.device).with(t.dtype()));
        copy_overlap(dst, mine, t, q * old_shard);
      }
    }
  }
  if (optimizer) {
    optim::StateDict dict;
    io::TensorMap index = io::load(index_path);
    for (auto& [name, t] : index)
      if (name.compare(0, 6, "optim.") == 0) dict.emplace_back(name.substr(6), t);
    std::vector<size_t> flat_of = optimizer_flats(*optimizer, flats, who);
    for (size_t i = 0; i < flat_of.size(); ++i)
      for (auto& [buf, t] : state[flat_of[i]]) dict.emplace_back("state." + std::to_string(i) + "." + buf, t);
    optimizer->load_state_dict(dict);
  }
  for (size_t k = 0; k < flats.size(); ++k) flats[k]->shard.copy_(shard[k]);
  {
    io::TensorMap index = io::load(index_path);
    std::unordered_map<std::string, Tensor> by_name(index.begin(), index.end());
    for (auto& [n, t] : module_->named_buffers(true, false)) {
      auto it = by_name.find("buffer." + n);
      VNN_CHECK(FormatError, it != by_name.end(), who, ": ", index_path, " lacks buffer ", n);
      Tensor(t).copy_(it->second);
    }
  }
  default_generator().manual_seed(uint64_t(std::stoull(meta["rng.seed"])));
  default_generator().set_offset(uint64_t(std::stoull(meta["rng.offset"])));
  io::TrainingProgress p;
  p.epoch = meta_int(meta, "epoch", index_path);
  p.step = meta_int(meta, "step", index_path);
  for (auto& [k, v] : meta)
    if (k.compare(0, 6, "extra.") == 0) p.extra[k.substr(6)] = v;
  return p;
}

}  // namespace vnn::nn
