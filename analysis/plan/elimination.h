// Exact min-sum over a graph of discrete choices (variable elimination): each variable takes one
// of `domain[v]` values, each factor adds a cost over the values of a few variables, and the
// minimum of the total is found by eliminating the variables one at a time in a greedy order
// (smallest resulting table first), which costs the size of the largest table built, not the
// product of every domain. The planner uses it for module bodies whose ops keep many tensors alive
// at once (search.cpp): there a dynamic programme over the ops in order multiplies the layouts of
// every live tensor, while here tensors that never meet an op together never share a table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace shardlens::plan::detail {

class MinSumElimination {
 public:
  static constexpr double kInfeasible = std::numeric_limits<double>::infinity();
  struct Factor {
    std::vector<int> vars;       // distinct
    std::vector<double> values;  // row-major over vars, the last var fastest; kInfeasible: not allowed
  };

  explicit MinSumElimination(std::vector<int> domain) : domain_(std::move(domain)) {}
  void add(Factor f) { factors_.push_back(std::move(f)); }
  // Eliminates every variable not in `keep` (in the order given there). False, with nothing kept,
  // if some table would hold more than `max_table` entries: the caller searches another way.
  bool run(const std::vector<int>& keep, size_t max_table);
  // Over the kept variables (row-major in keep order, the last fastest): the least total with them
  // so, the other variables at their best.
  const std::vector<double>& kept_table() const { return kept_; }
  // Fills every eliminated variable of `assignment` (kept ones set by the caller) with its best
  // value given the rest. Equal costs go to the lowest value, deciding the variables eliminated
  // last first.
  void complete(std::vector<int>& assignment) const;
  // The largest table built (entries), for benchmarks and tests.
  size_t largest_table() const { return largest_; }
  // Entries visited over every elimination step (the run's cost, for the planner's bookkeeping).
  size_t work() const { return work_; }

 private:
  struct Step {
    int var = -1;
    std::vector<int> rest;       // the other variables of the table it was eliminated from
    std::vector<int32_t> best;   // per assignment of rest (row-major): the variable's best value
  };
  std::vector<int> domain_;
  std::vector<Factor> factors_;
  std::vector<Step> steps_;
  std::vector<double> kept_;
  size_t largest_ = 0;
  size_t work_ = 0;
};

}  // namespace shardlens::plan::detail
