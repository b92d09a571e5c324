#include "plan/elimination.h"

#include <algorithm>

namespace shardlens::plan::detail {

namespace {

// Entries of a table over `vars`, saturating just above `cap`.
size_t table_size(const std::vector<int>& domain, const std::vector<int>& vars, size_t cap) {
  size_t n = 1;
  for (int v : vars) {
    n *= static_cast<size_t>(domain[static_cast<size_t>(v)]);
    if (n > cap) return cap + 1;
  }
  return n;
}

// Per factor, the stride of each of `vars` in it (0: not among its variables).
std::vector<size_t> strides_in(const MinSumElimination::Factor& f, const std::vector<int>& domain, const std::vector<int>& vars) {
  std::vector<size_t> out(vars.size(), 0);
  size_t stride = 1;
  for (size_t k = f.vars.size(); k-- > 0;) {
    auto it = std::find(vars.begin(), vars.end(), f.vars[k]);
    if (it != vars.end()) out[static_cast<size_t>(it - vars.begin())] = stride;
    stride *= static_cast<size_t>(domain[static_cast<size_t>(f.vars[k])]);
  }
  return out;
}

// Calls visit(index, offsets) for every assignment of `vars` in row-major order (the last
// fastest), with each factor's entry offset for it.
template <typename Visit>
void for_each_assignment(const std::vector<int>& domain, const std::vector<int>& vars, const std::vector<std::vector<size_t>>& strides,
                         Visit&& visit) {
  std::vector<int> digit(vars.size(), 0);
  std::vector<size_t> offset(strides.size(), 0);
  for (size_t index = 0;; ++index) {
    visit(index, offset);
    size_t k = vars.size();
    for (; k-- > 0;) {
      const int d = domain[static_cast<size_t>(vars[k])];
      if (++digit[k] < d) {
        for (size_t f = 0; f < strides.size(); ++f) offset[f] += strides[f][k];
        break;
      }
      for (size_t f = 0; f < strides.size(); ++f) offset[f] -= strides[f][k] * static_cast<size_t>(d - 1);
      digit[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

}  // namespace

bool MinSumElimination::run(const std::vector<int>& keep, size_t max_table) {
  const size_t nvars = domain_.size();
  std::vector<char> kept(nvars, 0), done(nvars, 0), alive(factors_.size(), 1);
  for (int v : keep) kept[static_cast<size_t>(v)] = 1;
  std::vector<std::vector<int>> factors_of(nvars);
  for (size_t f = 0; f < factors_.size(); ++f)
    for (int v : factors_[f].vars) factors_of[static_cast<size_t>(v)].push_back(static_cast<int>(f));
  // The variables sharing a live factor with v, v included, sorted.
  auto neighbourhood = [&](int v) {
    std::vector<int> u;
    for (int f : factors_of[static_cast<size_t>(v)])
      if (alive[static_cast<size_t>(f)]) u.insert(u.end(), factors_[static_cast<size_t>(f)].vars.begin(), factors_[static_cast<size_t>(f)].vars.end());
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    return u;
  };
  std::vector<size_t> score(nvars, 0);
  std::vector<char> dirty(nvars, 1);
  for (size_t left = std::count(kept.begin(), kept.end(), 0); left > 0; --left) {
    // The variable whose elimination builds the smallest table; among equals the latest, so that
    // completing an assignment decides the earliest ops first.
    int v = -1;
    for (size_t c = 0; c < nvars; ++c) {
      if (kept[c] || done[c]) continue;
      if (dirty[c]) {
        score[c] = table_size(domain_, neighbourhood(static_cast<int>(c)), max_table);
        dirty[c] = 0;
      }
      if (v < 0 || score[c] <= score[static_cast<size_t>(v)]) v = static_cast<int>(c);
    }
    const std::vector<int> u = neighbourhood(v);
    if (score[static_cast<size_t>(v)] > max_table) {
      steps_.clear();
      kept_.clear();
      return false;
    }
    largest_ = std::max(largest_, score[static_cast<size_t>(v)]);
    work_ += score[static_cast<size_t>(v)] * static_cast<size_t>(domain_[static_cast<size_t>(v)]);
    Step step;
    step.var = v;
    for (int w : u)
      if (w != v) step.rest.push_back(w);
    std::vector<int> joined;  // the factors over v
    for (int f : factors_of[static_cast<size_t>(v)])
      if (alive[static_cast<size_t>(f)]) joined.push_back(f);
    std::vector<std::vector<size_t>> strides;
    std::vector<size_t> v_stride;
    for (int f : joined) {
      strides.push_back(strides_in(factors_[static_cast<size_t>(f)], domain_, step.rest));
      v_stride.push_back(strides_in(factors_[static_cast<size_t>(f)], domain_, {v})[0]);
    }
    Factor made;
    made.vars = step.rest;
    const size_t entries = table_size(domain_, step.rest, max_table);
    made.values.assign(entries, kInfeasible);
    step.best.assign(entries, 0);
    const int dv = domain_[static_cast<size_t>(v)];
    for_each_assignment(domain_, step.rest, strides, [&](size_t index, const std::vector<size_t>& offset) {
      double best = kInfeasible;
      int32_t arg = 0;
      for (int x = 0; x < dv; ++x) {
        double sum = 0;
        for (size_t j = 0; j < joined.size() && sum < kInfeasible; ++j)
          sum += factors_[static_cast<size_t>(joined[j])].values[offset[j] + v_stride[j] * static_cast<size_t>(x)];
        if (sum < best) {
          best = sum;
          arg = x;
        }
      }
      made.values[index] = best;
      step.best[index] = arg;
    });
    for (int f : joined) {
      alive[static_cast<size_t>(f)] = 0;
      factors_[static_cast<size_t>(f)].values = {};
    }
    done[static_cast<size_t>(v)] = 1;
    for (int w : step.rest) dirty[static_cast<size_t>(w)] = 1;
    const int id = static_cast<int>(factors_.size());
    for (int w : made.vars) factors_of[static_cast<size_t>(w)].push_back(id);
    factors_.push_back(std::move(made));
    alive.push_back(1);
    steps_.push_back(std::move(step));
  }
  // What is left lies over kept variables only (or none: constants).
  std::vector<int> live;
  std::vector<std::vector<size_t>> strides;
  for (size_t f = 0; f < factors_.size(); ++f)
    if (alive[f]) {
      live.push_back(static_cast<int>(f));
      strides.push_back(strides_in(factors_[f], domain_, keep));
    }
  const size_t entries = table_size(domain_, keep, max_table);
  if (entries > max_table) {
    steps_.clear();
    return false;
  }
  kept_.assign(entries, 0);
  for_each_assignment(domain_, keep, strides, [&](size_t index, const std::vector<size_t>& offset) {
    double sum = 0;
    for (size_t j = 0; j < live.size() && sum < kInfeasible; ++j) sum += factors_[static_cast<size_t>(live[j])].values[offset[j]];
    kept_[index] = sum;
  });
  return true;
}

void MinSumElimination::complete(std::vector<int>& assignment) const {
  for (size_t s = steps_.size(); s-- > 0;) {
    const Step& step = steps_[s];
    size_t index = 0;
    for (int w : step.rest) index = index * static_cast<size_t>(domain_[static_cast<size_t>(w)]) + static_cast<size_t>(assignment[static_cast<size_t>(w)]);
    assignment[static_cast<size_t>(step.var)] = step.best[index];
  }
}

}  // namespace shardlens::plan::detail
