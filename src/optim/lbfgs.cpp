// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// L-BFGS: torch/optim/lbfgs.py ported step for step (two-loop recursion,
// PyTorch's first step size, the strong-Wolfe search with cubic
// interpolation, the same termination tests). Vectors stay flat tensors on
// the parameters' device; their dot products and norms are read back, as
// PyTorch reads them.
#include "vnn/optim/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "optim/optim_util.hpp"
#include "vnn/autograd.h"
#include "vnn/composite.h"
#include "vnn/indexing.h"

namespace vnn::optim {

using util::one_group;
using util::require;

namespace {

double dot_host(const Tensor& a, const Tensor& b) { return dot(a, b).item(); }
double max_abs(const Tensor& t) { return t.abs().max().item(); }

// The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to [lo, hi].
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  const double lo = bounds ? bounds->first : std::min(x1, x2), hi = bounds ? bounds->second : std::max(x1, x2);
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2.0;
  const double d2 = std::sqrt(d2_square);
  const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                  : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(min_pos, lo), hi);
}

// One point of the line search: step t, loss f, flat gradient g, directional derivative gtd.
struct Point {
  double t, f;
  Tensor g;
  double gtd;
};

struct SearchResult {
  double f;
  Tensor g;
  double t;
  int64_t evals;
};

// PyTorch's _strong_wolfe: obj(t) is the loss and flat gradient at x + t d.
SearchResult strong_wolfe(const std::function<std::pair<double, Tensor>(double)>& obj, const Tensor& d, double t,
                          double f, const Tensor& g, double gtd, double tolerance_change, int64_t max_ls,
                          double c1 = 1e-4, double c2 = 0.9) {
  const double d_norm = max_abs(d);
  auto eval = [&](double at) {
    auto [fn, gn] = obj(at);
    return Point{at, fn, gn, dot_host(gn, d)};
  };
  Point cur = eval(t), prev{0.0, f, g, gtd};
  int64_t evals = 1, ls_iter = 0;
  bool done = false;
  std::vector<Point> bracket;
  while (ls_iter < max_ls) {
    if (cur.f > f + c1 * cur.t * gtd || (ls_iter > 1 && cur.f >= prev.f)) {
      bracket = {prev, cur};
      break;
    }
    if (std::abs(cur.gtd) <= -c2 * gtd) {
      bracket = {cur};
      done = true;
      break;
    }
    if (cur.gtd >= 0) {
      bracket = {prev, cur};
      break;
    }
    const double next = cubic_interpolate(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd,
                                          std::make_pair(cur.t + 0.01 * (cur.t - prev.t), cur.t * 10));
    prev = cur;
    cur = eval(next);
    ++evals;
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {Point{0.0, f, g, gtd}, cur};

  // Zoom: shrink the bracket until a point satisfies the strong Wolfe conditions.
  bool insuf_progress = false;
  size_t low = 0, high = 1;
  if (bracket.size() == 2 && bracket[0].f > bracket[1].f) std::swap(low, high);
  while (!done && ls_iter < max_ls && bracket.size() == 2) {
    if (std::abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change) break;
    double at = cubic_interpolate(bracket[0].t, bracket[0].f, bracket[0].gtd, bracket[1].t, bracket[1].f,
                                  bracket[1].gtd);
    const double bmax = std::max(bracket[0].t, bracket[1].t), bmin = std::min(bracket[0].t, bracket[1].t);
    const double eps = 0.1 * (bmax - bmin);
    if (std::min(bmax - at, at - bmin) < eps) {
      if (insuf_progress || at >= bmax || at <= bmin) {
        at = std::abs(at - bmax) < std::abs(at - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    Point p = eval(at);
    ++evals;
    ++ls_iter;
    if (p.f > f + c1 * p.t * gtd || p.f >= bracket[low].f) {
      bracket[high] = p;
      low = bracket[0].f <= bracket[1].f ? 0 : 1;
      high = 1 - low;
    } else {
      if (std::abs(p.gtd) <= -c2 * gtd)
        done = true;
      else if (p.gtd * (bracket[high].t - bracket[low].t) >= 0)
        bracket[high] = bracket[low];
      bracket[low] = p;
    }
  }
  const Point& best = bracket.size() == 1 ? bracket[0] : bracket[low];
  return {best.f, best.g, best.t, evals};
}

}  // namespace

LBFGSOptions& LBFGSOptions::line_search_fn(std::optional<std::string> v) {
  VNN_CHECK(ValueError, !v || *v == "strong_wolfe", "LBFGSOptions: line_search_fn must be \"strong_wolfe\" or none, got \"",
            *v, "\"");
  values["line_search_fn"] = v ? 1.0 : 0.0;
  return *this;
}

LBFGS::LBFGS(std::vector<Tensor> params, const LBFGSOptions& options) : LBFGS(one_group(std::move(params)), options) {}

LBFGS::LBFGS(std::vector<ParamGroup> groups, const LBFGSOptions& defaults) : Optimizer("LBFGS", defaults.values) {
  VNN_CHECK(ValueError, groups.size() == 1, "LBFGS: expected one parameter group, got ", groups.size(),
            " (LBFGS doesn't support per-parameter options)");
  init(std::move(groups));
}

void LBFGS::validate(const std::map<std::string, double>& o) const {
  require("LBFGS", "lr", o, 0.0);
  require("LBFGS", "max_iter", o, 1.0);
  require("LBFGS", "max_eval", o, 0.0);
  require("LBFGS", "tolerance_grad", o, 0.0);
  require("LBFGS", "tolerance_change", o, 0.0);
  require("LBFGS", "history_size", o, 1.0);
  require("LBFGS", "line_search_fn", o, 0.0, 1.0);
}

void LBFGS::update(const Tensor&, const Tensor&, ParamState&, const std::map<std::string, double>&) {
  VNN_THROW(ValueError, "LBFGS.step: LBFGS re-evaluates the loss; call step(closure) with a closure that zeroes the ",
            "gradients, computes the loss, calls backward and returns the loss");
}

bool LBFGS::is_scalar_state(const std::string& name) const {
  return name == "func_evals" || name == "n_iter" || name == "t" || name == "H_diag" || name == "prev_loss" ||
         name.rfind("ro.", 0) == 0;
}

bool LBFGS::state_shape_ok(const std::string&, const Tensor& buffer, const Tensor&) const {
  return buffer.dim() == 1 && buffer.numel() == numel();
}

int64_t LBFGS::numel() const {
  int64_t n = 0;
  for (auto& p : param_groups()[0].params) n += p.numel();
  return n;
}

Tensor LBFGS::flat_grad() const {
  std::vector<Tensor> views;
  for (auto& p : param_groups()[0].params) {
    Tensor g = p.grad();
    views.push_back(g.defined() ? g.detach().reshape({-1}) : zeros({p.numel()}, TensorOptions(p.dtype()).with(p.device())));
  }
  Tensor flat = cat(views, 0);
  if (views.size() == 1 && flat.impl() == views[0].impl()) flat = flat.clone();
  return param_groups()[0].options.at("maximize") != 0.0 ? flat.neg() : flat;
}

void LBFGS::add_to_params(double step, const Tensor& direction) {
  autograd::NoGradGuard no_grad;
  int64_t offset = 0;
  for (auto& p : param_groups()[0].params) {
    p.detach().add_(direction.narrow(0, offset, p.numel()).reshape(p.sizes()), step);
    offset += p.numel();
  }
}

double LBFGS::evaluate(const LossClosure& closure, bool maximize) {
  Tensor loss = closure();
  VNN_CHECK(ValueError, loss.defined() && loss.numel() == 1, "LBFGS.step: the closure must return the loss, a ",
            "one-element tensor");
  return maximize ? -loss.item() : loss.item();
}

Tensor LBFGS::step(const LossClosure& closure) {
  VNN_CHECK(ValueError, bool(closure), "LBFGS.step: the closure is empty");
  auto& params = param_groups()[0].params;
  const auto& o = param_groups()[0].options;
  const double lr = o.at("lr"), tol_grad = o.at("tolerance_grad"), tol_change = o.at("tolerance_change");
  const int64_t max_iter = int64_t(o.at("max_iter")), history = int64_t(o.at("history_size"));
  const int64_t max_eval = o.at("max_eval") > 0 ? int64_t(o.at("max_eval")) : max_iter * 5 / 4;
  const bool wolfe = o.at("line_search_fn") != 0.0, maximize = o.at("maximize") != 0.0;

  ParamState& st = state_of(params[0]);
  auto& sc = st.scalars;
  sc.emplace("func_evals", 0.0);
  sc.emplace("n_iter", 0.0);

  Tensor orig_loss = closure();
  VNN_CHECK(ValueError, orig_loss.defined() && orig_loss.numel() == 1,
            "LBFGS.step: the closure must return the loss, a one-element tensor");
  double loss = maximize ? -orig_loss.item() : orig_loss.item();
  int64_t current_evals = 1;
  sc["func_evals"] += 1;
  Tensor g = flat_grad();
  if (max_abs(g) <= tol_grad) return orig_loss;

  // The saved state: direction, step, curvature pairs, previous gradient and loss.
  auto& buf = st.buffers;
  Tensor d = buf.count("d") ? buf["d"] : Tensor();
  Tensor prev_flat_grad = buf.count("prev_flat_grad") ? buf["prev_flat_grad"] : Tensor();
  double t = sc.count("t") ? sc["t"] : lr, h_diag = sc.count("H_diag") ? sc["H_diag"] : 1.0;
  double prev_loss = sc.count("prev_loss") ? sc["prev_loss"] : loss;
  std::deque<Tensor> old_dirs, old_stps;
  std::deque<double> ro;
  for (size_t k = 0; buf.count("old_dirs." + std::to_string(k)); ++k) {
    old_dirs.push_back(buf["old_dirs." + std::to_string(k)]);
    old_stps.push_back(buf.at("old_stps." + std::to_string(k)));
    ro.push_back(sc.at("ro." + std::to_string(k)));
  }

  bool opt_cond = false;
  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    sc["n_iter"] += 1;
    if (sc["n_iter"] == 1) {
      d = g.neg();
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
      h_diag = 1.0;
    } else {
      Tensor y = g.sub(prev_flat_grad), s = d.mul(t);
      const double ys = dot_host(y, s);
      if (ys > 1e-10) {
        if (int64_t(old_dirs.size()) == history) {
          old_dirs.pop_front();
          old_stps.pop_front();
          ro.pop_front();
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(1.0 / ys);
        h_diag = ys / dot_host(y, y);
      }
      // The two-loop recursion: d = -H g.
      const size_t num_old = old_dirs.size();
      std::vector<double> al(num_old);
      Tensor q = g.neg();
      for (size_t i = num_old; i-- > 0;) {
        al[i] = dot_host(old_stps[i], q) * ro[i];
        q.add_(old_dirs[i], -al[i]);
      }
      d = q.mul(h_diag);
      for (size_t i = 0; i < num_old; ++i) d.add_(old_stps[i], al[i] - dot_host(old_dirs[i], d) * ro[i]);
    }
    prev_flat_grad = g.clone();
    prev_loss = loss;
    t = sc["n_iter"] == 1 ? std::min(1.0, 1.0 / g.abs().sum().item()) * lr : lr;
    const double gtd = dot_host(g, d);
    if (gtd > -tol_change) break;

    int64_t ls_evals = 0;
    if (wolfe) {
      std::vector<Tensor> x_init;
      for (auto& p : params) x_init.push_back(p.detach().clone());
      auto obj = [&](double at) {
        add_to_params(at, d);
        const double f = evaluate(closure, maximize);
        Tensor fg = flat_grad();
        autograd::NoGradGuard no_grad;
        for (size_t i = 0; i < params.size(); ++i) params[i].detach().copy_(x_init[i]);
        return std::make_pair(f, fg);
      };
      SearchResult r = strong_wolfe(obj, d, t, loss, g, gtd, tol_change, max_eval - current_evals);
      loss = r.f;
      g = r.g;
      t = r.t;
      ls_evals = r.evals;
      add_to_params(t, d);
      opt_cond = max_abs(g) <= tol_grad;
    } else {
      add_to_params(t, d);
      if (n_iter != max_iter) {
        loss = evaluate(closure, maximize);
        g = flat_grad();
        opt_cond = max_abs(g) <= tol_grad;
        ls_evals = 1;
      }
    }
    current_evals += ls_evals;
    sc["func_evals"] += double(ls_evals);
    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (max_abs(d.mul(t)) <= tol_change) break;
    if (std::abs(loss - prev_loss) < tol_change) break;
  }

  // Saved for the next step (and state_dict): the history as numbered entries.
  for (auto it = buf.begin(); it != buf.end();)
    it = it->first.rfind("old_", 0) == 0 ? buf.erase(it) : std::next(it);
  for (auto it = sc.begin(); it != sc.end();) it = it->first.rfind("ro.", 0) == 0 ? sc.erase(it) : std::next(it);
  for (size_t k = 0; k < old_dirs.size(); ++k) {
    buf["old_dirs." + std::to_string(k)] = old_dirs[k];
    buf["old_stps." + std::to_string(k)] = old_stps[k];
    sc["ro." + std::to_string(k)] = ro[k];
  }
  buf["d"] = d;
  buf["prev_flat_grad"] = prev_flat_grad;
  sc["t"] = t;
  sc["H_diag"] = h_diag;
  sc["prev_loss"] = prev_loss;
  return orig_loss;
}

}  // namespace vnn::optim
