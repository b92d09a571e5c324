#include "torch/plan_check.h"

#include "ir/module_path.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace shardlens::torchgraph {
namespace {

// Raised in a device's thread when another device failed: its run stops at the next collective.
struct Aborted : std::runtime_error {
  Aborted() : std::runtime_error("stopped: another device failed") {}
};

// Every device meets every other at each collective and at each component boundary (SPMD: they
// all walk the same steps in the same order); the last to arrive combines the values.
class Rendezvous {
 public:
  explicit Rendezvous(int n) : n_(n), slots_(static_cast<size_t>(n)) {}

  at::Tensor exchange(int device, at::Tensor value, const std::function<void(std::vector<at::Tensor>&)>& combine) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (failed_) throw Aborted();
    uint64_t generation = generation_;
    slots_[static_cast<size_t>(device)] = std::move(value);
    if (++arrived_ == n_) {
      try {
        combine(slots_);
      } catch (...) {
        failed_ = true;
        cv_.notify_all();
        throw;
      }
      results_ = slots_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      // SPMD devices meet at every collective; a device that never comes took another path.
      if (!cv_.wait_for(lock, std::chrono::seconds(120), [&] { return generation_ != generation || failed_; })) {
        failed_ = true;
        cv_.notify_all();
        throw std::runtime_error("the devices did not all reach the same collective within 120 s: their forward() took "
                                 "different paths (control flow on values that differ between devices)");
      }
      if (generation_ == generation) throw Aborted();
    }
    return results_[static_cast<size_t>(device)];
  }

  void fail() {
    std::lock_guard<std::mutex> lock(mutex_);
    failed_ = true;
    cv_.notify_all();
  }

 private:
  int n_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool failed_ = false;
  std::vector<at::Tensor> slots_, results_;
  std::mutex mutex_;
  std::condition_variable cv_;
};

struct Mesh {
  std::vector<std::string> axes;
  std::vector<int64_t> sizes;
  int devices = 1;
  int64_t coordinate(int device, size_t axis) const {
    int64_t stride = 1;
    for (size_t a = axis + 1; a < sizes.size(); ++a) stride *= sizes[a];
    return (device / stride) % sizes[axis];
  }
  // The block a device holds when a dim is split over `over` (in that order): index and count.
  std::pair<int64_t, int64_t> block(int device, const std::vector<std::string>& over) const {
    int64_t index = 0, count = 1;
    for (auto& name : over)
      for (size_t a = 0; a < axes.size(); ++a)
        if (axes[a] == name) {
          index = index * sizes[a] + coordinate(device, a);
          count *= sizes[a];
        }
    return {index, count};
  }
  // Devices that share every coordinate off `over`: one collective group each.
  std::vector<std::vector<int>> groups(const std::vector<std::string>& over) const {
    std::map<std::vector<int64_t>, std::vector<int>> by_rest;
    for (int d = 0; d < devices; ++d) {
      std::vector<int64_t> rest;
      for (size_t a = 0; a < axes.size(); ++a)
        if (std::find(over.begin(), over.end(), axes[a]) == over.end()) rest.push_back(coordinate(d, a));
      by_rest[rest].push_back(d);
    }
    std::vector<std::vector<int>> out;
    for (auto& [rest, members] : by_rest) {
      std::vector<int> m = members;
      std::sort(m.begin(), m.end(), [&](int a, int b) { return block(a, over).first < block(b, over).first; });
      out.push_back(m);
    }
    return out;
  }
};

struct Layout {
  std::string kind = "replicated";  // replicated | partial | sharded
  int dim = -1;
  int segments = 0;
};

Layout layout_from(const nlohmann::json& j) {
  Layout l;
  if (!j.is_object()) return l;
  l.kind = j.value("kind", "replicated");
  l.dim = j.value("dim", -1);
  l.segments = j.value("segments", 0);
  return l;
}

// The collective a change of layout needs (SHARDING.md §3; the planner's transition rule): a
// plan whose kind disagrees with its own from/to layouts contradicts itself, and running its
// layouts would check a collective the plan does not name. Empty when they agree.
std::string kind_disagreement(const std::string& kind, const Layout& from, const Layout& to, const std::string& why) {
  auto text = [](const Layout& l) {
    return l.kind + (l.kind == "sharded" ? " on dim " + std::to_string(l.dim) + (l.segments ? " (" + std::to_string(l.segments) + " segments)" : "") : "");
  };
  std::string needed;
  if (from.kind == "partial" && to.kind == "replicated") needed = "all_reduce";
  else if (from.kind == "partial" && to.kind == "sharded") needed = "reduce_scatter";
  else if (from.kind == "sharded" && to.kind == "replicated") needed = "all_gather";
  else if (from.kind == "sharded" && to.kind == "sharded" && (from.dim != to.dim || from.segments != to.segments)) needed = "all_to_all";
  else if (from.kind == "replicated" && to.kind == "sharded") needed = "slice";
  if (needed == kind) return "";
  // A norm over a sharded dim: the value stays as it is, a small all-reduce of its statistics
  // (SHARDING.md §3) normalises it over the whole dim.
  if (kind == "all_reduce" && from.kind == "sharded" && why.find("statistics") != std::string::npos) return "";
  return "from " + text(from) + " to " + text(to) + (needed.empty() ? " is no collective" : " is a " + needed) + ", not a " + kind;
}

std::vector<std::string> split_axes(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ','))
    if (!part.empty()) out.push_back(part);
  return out;
}

// Keeps block `index` of `count` along `dim` (of each of `segments` concatenated parts); zeros elsewhere.
at::Tensor keep_block(const at::Tensor& t, int dim, int64_t index, int64_t count, int segments) {
  if (dim < 0) dim += static_cast<int>(t.dim());
  if (dim < 0 || dim >= t.dim())
    throw std::runtime_error("dim " + std::to_string(dim) + " is out of range for a tensor of rank " + std::to_string(t.dim()));
  int64_t parts = std::max(segments, 1);
  int64_t size = t.size(dim);
  if (size % parts != 0 || (size / parts) % count != 0)
    throw std::runtime_error("dim " + std::to_string(dim) + " of size " + std::to_string(size) + " does not split into " +
                             (parts > 1 ? std::to_string(parts) + " segments of " : std::string()) + std::to_string(count) +
                             " blocks");
  int64_t segment = size / parts, width = segment / count;
  at::Tensor out = at::zeros_like(t);
  for (int64_t p = 0; p < parts; ++p) {
    int64_t start = p * segment + index * width;
    out.narrow(dim, start, width).copy_(t.narrow(dim, start, width));
  }
  return out;
}

double max_abs(const at::Tensor& t) {
  if (t.numel() == 0) return 0;
  return t.abs().max().item<double>();
}

bool is_float(const at::Tensor& t) { return t.is_floating_point() || t.is_complex(); }

double distance(const at::Tensor& a, const at::Tensor& b) {
  if (!a.sizes().equals(b.sizes())) return std::numeric_limits<double>::infinity();
  if (!is_float(a) || !is_float(b)) return at::ne(a, b).any().item<bool>() ? std::numeric_limits<double>::infinity() : 0.0;
  at::Tensor d = (a.to(at::kDouble) - b.to(at::kDouble)).abs();
  if (d.numel() == 0) return 0;
  // A NaN where the reference has a number is as wrong as it gets.
  if (at::isnan(d).any().item<bool>()) return std::numeric_limits<double>::infinity();
  return d.max().item<double>();
}

// Where the first tensor of a step's values is (a tuple's first tensor element included): the
// value holding it, and its index in that tuple (SIZE_MAX: the value itself). Null when none.
c10::IValue* first_tensor(std::vector<c10::IValue>& values, size_t* element) {
  for (auto& v : values) {
    if (v.isTensor()) {
      *element = SIZE_MAX;
      return &v;
    }
    if (v.isTuple()) {
      const auto& elems = v.toTupleRef().elements();
      for (size_t i = 0; i < elems.size(); ++i)
        if (elems[i].isTensor()) {
          *element = i;
          return &v;
        }
    }
  }
  return nullptr;
}

bool read_first(std::vector<c10::IValue>& values, at::Tensor& out) {
  size_t element = 0;
  c10::IValue* holder = first_tensor(values, &element);
  if (!holder) return false;
  out = element == SIZE_MAX ? holder->toTensor() : holder->toTupleRef().elements()[element].toTensor();
  return true;
}

void write_first(std::vector<c10::IValue>& values, const at::Tensor& t) {
  size_t element = 0;
  c10::IValue* holder = first_tensor(values, &element);
  if (!holder) return;
  if (element == SIZE_MAX) {
    *holder = t;
    return;
  }
  std::vector<c10::IValue> elems(holder->toTupleRef().elements().begin(), holder->toTupleRef().elements().end());
  elems[element] = t;
  *holder = c10::ivalue::Tuple::create(std::move(elems));
}

struct PlanCollective {
  std::string kind, at, applies_to, why;
  int input = -1;
  Layout from, to;
  std::vector<std::string> axes;
  SourceSpan span;
  std::set<int> modules;  // module instances matching `at`
  // How steps are matched, the strictest that finds any: the call of one of its modules (1 span, 2
  // where the span starts: TorchScript's range of a call is its callee, the planner's the whole
  // call), an op one of its modules runs (3, 4), an op of any module (5, 6: a collective placed on
  // a module list); 0 not found.
  int tier = 0;
  // At a where-the-span-starts tier (2, 4, 6), the end of the steps it takes: several calls start
  // where `x.pow(2).mean(-1)` starts (pow and mean; TorchScript's range of each is its callee),
  // and the planner's span names the outermost that fits in it. 0: any end (while counting).
  uint32_t step_end_line = 0, step_end_column = 0;
  int count = 0;
  std::string describe() const {
    return kind + " at " + at + (span.valid() ? " (line " + std::to_string(span.line) + ")" : "");
  }
};


bool same_start(const SourceSpan& a, const SourceSpan& b) { return a.valid() && a.line == b.line && a.column == b.column; }
bool same_span(const SourceSpan& a, const SourceSpan& b) {
  return same_start(a, b) && a.end_line == b.end_line && a.end_column == b.end_column;
}

// A module's forward() called (not a helper method such as Conv2d._conv_forward on itself).
bool is_forward_call(const Step& step) {
  return step.callee >= 0 && step.node->kind() == c10::prim::CallMethod && step.node->s(c10::attr::name) == "forward";
}

struct Component {
  std::string pattern;
  int instances = 0;
  double max_abs = 0, max_rel = 0;
  bool mismatch = false;
  std::vector<std::string> with;  // checked together with (deferred to) these
  std::string not_checked;
};

class Checker {
 public:
  Checker(LoadedModel& model, const nlohmann::json& plan, const CheckOptions& options, CheckReport& report)
      : model_(model), plan_(plan), options_(options), report_(report) {}

  void run() {
    auto start = std::chrono::steady_clock::now();
    if (!read_plan()) return;
    if (!make_weights()) return;
    if (!make_inputs()) return;
    if (!reference()) return;
    devices();
    summarize();
    report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  // ---- the plan ------------------------------------------------------------------------------

  bool plan_error(const std::string& message) {
    report_.error = message;
    report_.error_kind = 5;
    return false;
  }

  bool read_plan() {
    if (!plan_.is_object() || !plan_.contains("meshes") || !plan_["meshes"].is_array())
      return plan_error("not a plan: no \"meshes\" (give the JSON that `shardlens plan --format json` prints)");
    const nlohmann::json* chosen = nullptr;
    std::vector<std::string> have;
    for (auto& m : plan_["meshes"]) {
      if (!m.contains("shape") || !m["shape"].is_array() || m["shape"].size() != 2) continue;
      int64_t r = m["shape"][0].get<int64_t>(), c = m["shape"][1].get<int64_t>();
      have.push_back(std::to_string(r) + "x" + std::to_string(c));
      if (r == options_.rows && c == options_.cols) chosen = &m;
    }
    std::string want = std::to_string(options_.rows) + "x" + std::to_string(options_.cols);
    if (!chosen) {
      std::string list;
      for (auto& h : have) list += (list.empty() ? "" : ", ") + h;
      return plan_error("the plan has no mesh " + want + " (it has: " + (list.empty() ? "none" : list) + ")");
    }
    const nlohmann::json& m = *chosen;
    mesh_.axes = m.value("axes", std::vector<std::string>{"batch", "model"});
    mesh_.sizes = {options_.rows, options_.cols};
    if (mesh_.axes.size() != 2) return plan_error("the plan's mesh must have two axes");
    mesh_.devices = static_cast<int>(options_.rows * options_.cols);
    if (mesh_.devices < 2 || mesh_.devices > 64)
      return plan_error("verify runs one thread per device: the mesh must have 2 to 64 devices, not " + std::to_string(mesh_.devices));
    report_.devices = mesh_.devices;
    std::map<std::string, int> by_name;
    for (size_t i = 0; i < model_.parameters.size(); ++i) by_name[model_.parameters[i].name] = static_cast<int>(i);
    for (size_t i = 0; i < model_.modules.size(); ++i) module_by_name_[model_.modules[i].name] = static_cast<int>(i);
    layouts_.assign(model_.parameters.size(), nullptr);
    static const nlohmann::json kNone = nlohmann::json::array();
    // References into the plan (kept in layouts_), not copies.
    for (auto& p : m.contains("parameters") && m["parameters"].is_array() ? m["parameters"] : kNone) {
      std::string name = p.value("name", "");
      auto it = by_name.find(name);
      // A plan made for the full-size model checked on a reduced config (fewer layers) lists more.
      if (it == by_name.end()) {
        if (extra_.empty()) extra_ = name;
        ++extra_count_;
        continue;
      }
      layouts_[static_cast<size_t>(it->second)] = &p;
    }
    int missing = 0;
    for (auto* l : layouts_) missing += l == nullptr;
    if (missing == static_cast<int>(layouts_.size()) && !layouts_.empty())
      return plan_error("the plan does not fit this model: none of its parameters is in the plan" +
                        (extra_.empty() ? std::string() : " (the plan has e.g. '" + extra_ + "')"));
    if (missing) report_.notes.push_back(std::to_string(missing) + " parameter(s) the plan does not list run replicated");
    if (extra_count_)
      report_.notes.push_back(std::to_string(extra_count_) + " parameter(s) of the plan are not in this model (e.g. " + extra_ +
                              "): a plan for a bigger config of it, checked on this one");
    // The axes tensor parallelism uses (the planner's 2-D mode shards over both).
    plan_axes_ = {"model"};
    for (auto& c : m.value("collectives", nlohmann::json::array()))
      if (c.value("axis", "model").find(',') != std::string::npos) plan_axes_ = split_axes(c.value("axis", "model"));
    // Collectives, then the slices: a replicated value each device cuts to its block (no collective).
    nlohmann::json moves = m.value("collectives", nlohmann::json::array());
    size_t collective_count = moves.size();
    for (auto& s : m.value("slices", nlohmann::json::array())) moves.push_back(s);
    for (size_t k = 0; k < moves.size(); ++k) {
      const nlohmann::json& c = moves[k];
      PlanCollective pc;
      pc.kind = k < collective_count ? c.value("kind", "") : "slice";
      pc.at = c.value("at", "");
      pc.why = c.value("why", "");
      pc.applies_to = c.value("applies_to", "");
      pc.input = c.value("input", -1);
      pc.from = layout_from(c.value("from", nlohmann::json()));
      pc.to = layout_from(c.value("to", nlohmann::json()));
      pc.axes = split_axes(c.value("axis", "model"));
      if (c.contains("span") && c["span"].is_object()) {
        pc.span.line = c["span"].value("line", 0u);
        pc.span.column = c["span"].value("column", 0u);
        pc.span.end_line = c["span"].value("end_line", 0u);
        pc.span.end_column = c["span"].value("end_column", 0u);
      }
      if (c.contains("from")) {
        std::string wrong = kind_disagreement(pc.kind, pc.from, pc.to, pc.why);
        if (!wrong.empty()) {
          report_.error = "the plan contradicts itself: the " + pc.describe() + " goes " + wrong +
                          "; re-plan, or correct its kind or layouts";
          report_.error_kind = 6;
          return false;
        }
      }
      if (pc.applies_to.empty()) {
        // A plan from before collectives said what they do: the usual reading of each kind.
        if (pc.at == "output") pc.applies_to = "model_output";
        else pc.applies_to = "output";
        if (!c.contains("from")) pc.from.kind = pc.kind == "all_gather" ? "sharded" : "partial";
        if (pc.kind == "all_gather") {
          report_.not_checked.push_back(pc.describe() + ": the plan does not say which dim it gathers (re-plan with this version)");
          continue;
        }
      }
      // The modules it occurs in when the plan names them (a pattern covers instances whose
      // layouts differ: the first block receives the embedding's), else every match of `at`.
      std::vector<std::string> instances;
      for (auto& name : c.value("instances", nlohmann::json::array())) instances.push_back(name.get<std::string>());
      if (instances.empty()) {
        for (size_t i = 0; i < model_.modules.size(); ++i) {
          const std::string& name = model_.modules[i].name;
          if (name.empty() ? pc.at == plan_.value("model", "") : ir::module_pattern_matches(pc.at, name)) pc.modules.insert(static_cast<int>(i));
        }
      }
      for (auto& instance : instances) {
        auto star = instance.find('*');
        if (star == std::string::npos) {
          if (auto it = module_by_name_.find(instance); it != module_by_name_.end()) pc.modules.insert(it->second);
          continue;
        }
        std::string prefix = instance.substr(0, star);
        for (size_t i = 0; i < model_.modules.size(); ++i)
          if (model_.modules[i].name.compare(0, prefix.size(), prefix) == 0 && ir::module_pattern_matches(instance, model_.modules[i].name))
            pc.modules.insert(static_cast<int>(i));
      }
      collectives_.push_back(std::move(pc));
    }
    // Components: the plan's top-level items; a module instance matching one is compared at its output.
    is_component_.assign(model_.modules.size(), -1);
    for (auto& c : m.value("components", nlohmann::json::array())) {
      std::string pattern = c.value("module", "");
      int index = -1;
      for (size_t k = 0; k < components_.size(); ++k)
        if (components_[k].pattern == pattern) index = static_cast<int>(k);
      if (index < 0) {
        index = static_cast<int>(components_.size());
        components_.emplace_back();
        components_.back().pattern = pattern;
      }
      for (size_t i = 1; i < model_.modules.size(); ++i)
        if (ir::module_pattern_matches(pattern, model_.modules[i].name)) is_component_[i] = index;
    }
    output_component_ = static_cast<int>(components_.size());
    components_.emplace_back();
    components_.back().pattern = "(model output)";
    return true;
  }

  int component_of_path(const std::string& path) const {
    for (size_t k = 0; k + 1 < components_.size(); ++k) {
      const std::string& p = components_[k].pattern;
      // "h.*" covers "h.*.attn.proj" and "h.3.mlp.fc".
      for (size_t i = 0; i < model_.modules.size(); ++i) {
        if (is_component_[i] != static_cast<int>(k)) continue;
        const std::string& name = model_.modules[i].name;
        if (path == p || path.rfind(p + ".", 0) == 0 || path == name || path.rfind(name + ".", 0) == 0) return static_cast<int>(k);
      }
    }
    return -1;
  }

  void not_checkable(const std::string& path, const std::string& why) {
    report_.not_checked.push_back(why);
    int k = component_of_path(path);
    if (k >= 0 && components_[k].not_checked.empty()) components_[k].not_checked = why;
  }

  // ---- weights -------------------------------------------------------------------------------

  bool make_weights() {
    double bytes = 0;
    for (auto& p : model_.parameters) bytes += static_cast<double>(p.tensor.numel()) * 4;
    if (bytes * (mesh_.devices + 1) > options_.max_weight_bytes) {
      report_.error = "the weights take " + std::to_string(static_cast<int64_t>(bytes / (1 << 20))) + " MiB in float32; with one copy per device (" +
                      std::to_string(mesh_.devices + 1) + " copies) that exceeds what verify allows: export a reduced config " +
                      "(shardlens export FILE.py --model \"Model(Config(n_layer=2, ...))\")";
      report_.error_kind = 1;
      return false;
    }
    // Fresh random weights (whatever the file holds, meta tensors included): scaled so that
    // activations stay near 1, and no bias or norm weight is 0 or 1 (either would hide a mistake).
    auto gen = at::detail::createCPUGenerator(options_.seed);
    reference_.resize(model_.parameters.size());
    for (size_t i = 0; i < model_.parameters.size(); ++i) {
      const at::Tensor& stored = model_.parameters[i].tensor;
      auto shape = stored.sizes().vec();
      at::Tensor w;
      if (!stored.is_floating_point()) {
        w = stored.is_meta() ? at::zeros(shape, stored.options().device(at::kCPU)) : stored;
      } else if (stored.dim() >= 2) {
        double fan_in = static_cast<double>(stored.numel() / std::max<int64_t>(stored.size(0), 1));
        w = at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)) / std::sqrt(std::max(fan_in, 1.0));
      } else {
        w = at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)) * 0.5 + 0.25;
      }
      reference_[i] = w;
    }
    // Per device: its share of each parameter (replicated ones are shared, not copied).
    device_weights_.assign(static_cast<size_t>(mesh_.devices), reference_);
    std::map<std::string, const nlohmann::json*> layout_by_name;
    for (size_t i = 0; i < model_.parameters.size(); ++i)
      if (layouts_[i]) layout_by_name[model_.parameters[i].name] = layouts_[i];
    int row_biases = 0;
    for (size_t i = 0; i < model_.parameters.size(); ++i) {
      const nlohmann::json* l = layouts_[i];
      if (!l) continue;
      const std::string& name = model_.parameters[i].name;
      std::string layout = l->value("layout", "replicated");
      const nlohmann::json& spec = (*l)["spec"];
      try {
        if (l->contains("expert")) {
          int index = (*l)["expert"].value("index", -1), of = (*l)["expert"].value("of", 0);
          for (int d = 0; d < mesh_.devices; ++d) {
            auto [block, count] = mesh_.block(d, plan_axes_);
            if (of <= 0 || index < 0 || of % count != 0)
              throw std::runtime_error(std::to_string(of) + " experts do not split over " + std::to_string(count) + " devices");
            if (index / (of / count) != block) device_weights_[d][i] = at::zeros_like(reference_[i]);
          }
        } else if (l->contains("segments")) {
          int dim = (*l)["segments"].value("dim", 0), segments = (*l)["segments"].value("count", 1);
          for (int d = 0; d < mesh_.devices; ++d) {
            auto [block, count] = mesh_.block(d, plan_axes_);
            device_weights_[d][i] = keep_block(reference_[i], dim, block, count, segments);
          }
        } else if (spec.is_array()) {
          for (size_t dim = 0; dim < spec.size(); ++dim) {
            std::vector<std::string> over;
            if (spec[dim].is_string()) over.push_back(spec[dim].get<std::string>());
            else if (spec[dim].is_array())
              for (auto& a : spec[dim]) over.push_back(a.get<std::string>());
            if (over.empty()) continue;
            for (const auto& axis : over)
              if (std::find(mesh_.axes.begin(), mesh_.axes.end(), axis) == mesh_.axes.end())
                throw std::runtime_error("its spec names axis '" + axis + "', which the mesh does not have");
            for (int d = 0; d < mesh_.devices; ++d) {
              auto [block, count] = mesh_.block(d, over);
              device_weights_[d][i] = keep_block(device_weights_[d][i], static_cast<int>(dim), block, count, 0);
            }
          }
          // A replicated bias of a row-parallel layer is added once, not once per device: the
          // partial sums would carry it n times.
          if (layout == "replicated" && name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0) {
            auto w = layout_by_name.find(name.substr(0, name.size() - 5) + ".weight");
            if (w != layout_by_name.end() && w->second->value("layout", "") == "row") {
              std::vector<std::string> over;
              for (auto& entry : (*w->second)["spec"])
                if (entry.is_string()) over.push_back(entry.get<std::string>());
                else if (entry.is_array())
                  for (auto& a : entry) over.push_back(a.get<std::string>());
              for (int d = 0; d < mesh_.devices; ++d)
                if (mesh_.block(d, over).first != 0) device_weights_[d][i] = at::zeros_like(reference_[i]);
              ++row_biases;
            }
          }
        } else if (layout != "replicated") {
          not_checkable(name, name + ": layout '" + layout + "' comes without a spec the check can apply; run replicated");
        }
      } catch (const std::exception& e) {
        return plan_error("the plan does not fit this model: " + name + " (" + layout + "): " + e.what());
      }
    }
    for (size_t i = 0; i < model_.parameters.size(); ++i) {
      bool sliced = false;
      for (int d = 0; d < mesh_.devices && !sliced; ++d) sliced = !device_weights_[d][i].is_same(reference_[i]);
      report_.sharded_parameters += sliced;
    }
    if (report_.sharded_parameters == 0 && collectives_.empty())
      report_.notes.push_back("the plan keeps every parameter replicated and has no collectives: each device computes "
                              "everything, which holds trivially (a reduced config usually plans so: check the full-size "
                              "model's plan on it with --plan)");
    if (row_biases)
      report_.notes.push_back(std::to_string(row_biases) + " bias(es) of row-parallel layers are added by the first device of each group only");
    return true;
  }

  // ---- inputs --------------------------------------------------------------------------------

  bool make_inputs() {
    ExactGraph g = evaluate_forward(model_, options_.eval);
    int64_t vocab = 0;
    for (auto& m : model_.modules)
      if (m.class_name == "Embedding")
        for (auto& p : model_.parameters)
          if (p.name == m.name + ".weight" && p.tensor.dim() == 2) vocab = vocab ? std::min(vocab, p.tensor.size(0)) : p.tensor.size(0);
    if (vocab <= 0) vocab = 2;
    auto gen = at::detail::createCPUGenerator(options_.seed + 1);
    for (auto& spec : g.inputs) {
      if (spec.shape.empty()) {
        report_.error = "could not tell the shape of forward input '" + spec.name + "'" + (g.error.empty() ? "" : ": " + g.error) +
                        "; give it with --input " + spec.name + "=D0,D1,...[:dtype]";
        report_.error_kind = 1;
        return false;
      }
      at::Tensor t;
      if (spec.dtype == "int64" || spec.dtype == "long" || spec.dtype == "int32" || spec.dtype == "int")
        t = at::randint(0, vocab, spec.shape, gen, at::TensorOptions().dtype(spec.dtype.rfind("int32", 0) == 0 || spec.dtype == "int" ? at::kInt : at::kLong));
      else if (spec.dtype == "bool")
        t = at::randint(0, 2, spec.shape, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
      else
        t = at::randn(spec.shape, gen, at::TensorOptions().dtype(at::kFloat));
      inputs_.push_back(t);
      std::string dims;
      for (size_t i = 0; i < spec.shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(spec.shape[i]);
      report_.inputs.push_back(spec.name + ": [" + dims + "] " + spec.dtype);
    }
    return true;
  }

  // ---- the runs ------------------------------------------------------------------------------

  static constexpr int kTiers = 6;
  bool matches(const PlanCollective& c, const Step& step, int tier) const {
    if (!(tier % 2 == 1 ? same_span(c.span, step.span) : same_start(c.span, step.span))) return false;
    if (tier % 2 == 0 && c.step_end_line > 0 && (step.span.end_line != c.step_end_line || step.span.end_column != c.step_end_column))
      return false;
    if (tier <= 2) return step.callee >= 0 && c.modules.count(step.callee) > 0;
    return tier > 4 || (step.callee < 0 && c.modules.count(step.module) > 0);
  }

  at::Tensor buffer(const at::Tensor& stored, int index) const {
    if (stored.is_meta())
      throw std::runtime_error("buffer '" + model_.buffers[static_cast<size_t>(index)].name +
                               "' holds meta tensors and forward() reads its values: export with --weights random");
    return stored;
  }

  struct ReferenceHooks : NumericHooks {
    Checker& c;
    std::map<int, int> occurrences;
    std::vector<std::array<int, kTiers + 1>> hits;
    // Per collective and tier: the furthest end, within the collective's span, of a step it matches.
    std::vector<std::array<std::pair<uint32_t, uint32_t>, kTiers + 1>> ends;
    explicit ReferenceHooks(Checker& checker) : c(checker), hits(checker.collectives_.size()), ends(checker.collectives_.size()) {}
    at::Tensor weight(const at::Tensor& stored, int parameter, int buffer) override {
      return parameter >= 0 ? c.reference_[static_cast<size_t>(parameter)] : c.buffer(stored, buffer);
    }
    // Which steps each collective's place matches, per tier. SHARDLENS_VERIFY_DEBUG=1 lists every
    // step (its module and span) on stderr: where a plan's places can land.
    void count(const Step& step, bool input) {
      static const bool debug = std::getenv("SHARDLENS_VERIFY_DEBUG") != nullptr;
      if (debug)
        std::fprintf(stderr, "%s %s module=%s span=%u:%u-%u:%u\n", input ? "before" : "after", step.node->kind().toQualString(),
                     c.model_.modules[static_cast<size_t>(step.module)].name.c_str(), step.span.line, step.span.column,
                     step.span.end_line, step.span.end_column);
      for (size_t k = 0; k < c.collectives_.size(); ++k) {
        const auto& pc = c.collectives_[k];
        if ((pc.applies_to == "input") != input || pc.applies_to == "model_output") continue;
        for (int tier = 1; tier <= kTiers; ++tier)
          if (c.matches(pc, step, tier)) {
            ++hits[k][tier];
            const std::pair<uint32_t, uint32_t> end{step.span.end_line, step.span.end_column};
            if (end <= std::make_pair(pc.span.end_line, pc.span.end_column) && end > ends[k][tier]) ends[k][tier] = end;
          }
      }
    }
    void before(const Step& step, std::vector<c10::IValue>& inputs) override {
      (void)inputs;
      count(step, true);
    }
    void after(const Step& step, std::vector<c10::IValue>& outputs) override {
      count(step, false);
      if (is_forward_call(step) && c.is_component_[static_cast<size_t>(step.callee)] >= 0) {
        at::Tensor t;
        int occurrence = occurrences[step.callee]++;
        if (read_first(outputs, t)) c.reference_taps_[{step.callee, occurrence}] = t.clone();
      }
    }
  };

  bool reference() {
    ReferenceHooks hooks(*this);
    try {
      auto outputs = run_numeric(model_, std::vector<c10::IValue>(inputs_.begin(), inputs_.end()), hooks);
      if (!read_first(outputs, reference_output_)) {
        report_.error = "forward() returns no tensor to compare";
        report_.error_kind = 1;
        return false;
      }
    } catch (const std::exception& e) {
      report_.error = std::string("the unsharded forward failed: ") + e.what();
      report_.error_kind = 1;
      return false;
    }
    for (size_t k = 0; k < collectives_.size(); ++k) {
      auto& pc = collectives_[k];
      if (pc.applies_to == "model_output") {
        pc.tier = kTiers + 1;
        continue;
      }
      pc.tier = 0;
      for (int tier = kTiers; tier >= 1; --tier)
        if (hooks.hits[k][tier] > 0) pc.tier = tier;
      if (pc.tier % 2 == 0 && hooks.ends[k][pc.tier].first > 0)
        std::tie(pc.step_end_line, pc.step_end_column) = hooks.ends[k][pc.tier];
      if (pc.tier == 0)
        not_checkable(pc.at, pc.describe() + ": no op of the graph is at that place, so the check cannot run it there");
    }
    return true;
  }

  // The collective's effect on every device's value, group by group.
  void apply(const PlanCollective& pc, std::vector<at::Tensor>& values) const {
    for (auto& group : mesh_.groups(pc.axes)) {
      int64_t count = static_cast<int64_t>(group.size());
      at::Tensor whole;
      if (pc.from.kind == "partial" || pc.from.kind == "sharded") {
        for (size_t r = 0; r < group.size(); ++r) {
          at::Tensor v = values[static_cast<size_t>(group[r])];
          if (pc.from.kind == "sharded") v = keep_block(v, pc.from.dim, static_cast<int64_t>(r), count, pc.from.segments);
          whole = r == 0 ? v.clone() : whole + v;
        }
      }
      for (size_t r = 0; r < group.size(); ++r) {
        at::Tensor& v = values[static_cast<size_t>(group[r])];
        at::Tensor w = whole.defined() ? whole : v;
        v = pc.to.kind == "sharded" ? keep_block(w, pc.to.dim, static_cast<int64_t>(r), count, pc.to.segments) : w;
      }
    }
  }

  // A component boundary: where the devices agree, compare with the reference and go on from the
  // reference's value (so that each component is judged on exact inputs); where they do not (the
  // plan leaves the value sharded), judge it together with the next point where they agree.
  void tap(int component, const at::Tensor* reference, std::vector<at::Tensor>& values) {
    std::lock_guard<std::mutex> lock(results_mutex_);
    Component& comp = components_[static_cast<size_t>(component)];
    if (!reference) return;
    if (!comp.not_checked.empty()) {
      // What the check cannot run is not judged, and what comes after starts from exact values.
      pending_.clear();
      for (auto& v : values) v = *reference;
      return;
    }
    double scale = std::max(max_abs(*reference), 1e-12);
    double spread = 0;
    for (auto& v : values) spread = std::max(spread, distance(v, values[0]));
    bool agree = spread <= options_.tolerance * scale;
    if (!agree && component != output_component_) {
      pending_.push_back(component);
      return;
    }
    double err = 0;
    for (auto& v : values) err = std::max(err, distance(v, *reference));
    auto record = [&](Component& c) {
      c.instances++;
      c.max_abs = std::max(c.max_abs, err);
      c.max_rel = std::max(c.max_rel, err / scale);
      if (err / scale > options_.tolerance) c.mismatch = true;
    };
    record(comp);
    for (int p : pending_) {
      auto& pc = components_[static_cast<size_t>(p)];
      record(pc);
      if (std::find(pc.with.begin(), pc.with.end(), comp.pattern) == pc.with.end()) pc.with.push_back(comp.pattern);
    }
    pending_.clear();
    for (auto& v : values) v = *reference;
  }

  struct DeviceHooks : NumericHooks {
    Checker& c;
    int device;
    std::map<int, int> occurrences;
    at::Tensor last_collected;
    DeviceHooks(Checker& checker, int d) : c(checker), device(d) {}
    at::Tensor weight(const at::Tensor& stored, int parameter, int buffer) override {
      at::Tensor w = parameter >= 0 ? c.device_weights_[static_cast<size_t>(device)][static_cast<size_t>(parameter)] : c.buffer(stored, buffer);
      weights.insert(w.unsafeGetTensorImpl());  // alive for the whole run: addresses stay unique
      return w;
    }
    std::set<const c10::TensorImpl*> weights;
    bool is_weight(const at::Tensor& t) const { return weights.count(t.unsafeGetTensorImpl()) > 0; }
    void collect(const PlanCollective& pc, at::Tensor& t) {
      if (device == 0) ++(pc.kind == "slice" ? c.report_.slices_run : c.report_.collectives_run);
      if (pc.kind == "slice") {
        auto [block, count] = c.mesh_.block(device, pc.axes);
        t = keep_block(t, pc.to.dim, block, count, pc.to.segments);
        return;
      }
      t = c.rendezvous_->exchange(device, t, [&](std::vector<at::Tensor>& values) { c.apply(pc, values); });
    }
    void before(const Step& step, std::vector<c10::IValue>& inputs) override {
      // A tensor moved for an earlier consumer stays moved (the plan's layout of it changed).
      for (auto& v : inputs)
        if (v.isTensor())
          if (auto it = moved.find(v.toTensor().unsafeGetTensorImpl()); it != moved.end()) v = it->second.second;
      for (auto& pc : c.collectives_) {
        if (pc.applies_to != "input" || pc.tier == 0 || !c.matches(pc, step, pc.tier)) continue;
        int seen = 0;
        for (auto& v : inputs)
          if (v.isTensor() && !is_weight(v.toTensor()) && seen++ == pc.input) {
            at::Tensor original = v.toTensor(), t = original;
            collect(pc, t);
            v = t;
            // Holding the original keeps its address from naming another tensor later.
            moved[original.unsafeGetTensorImpl()] = {original, t};
            break;
          }
      }
    }
    std::map<const c10::TensorImpl*, std::pair<at::Tensor, at::Tensor>> moved;
    void after(const Step& step, std::vector<c10::IValue>& outputs) override {
      for (auto& pc : c.collectives_) {
        if (pc.applies_to != "output" || pc.tier == 0 || !c.matches(pc, step, pc.tier)) continue;
        at::Tensor t;
        if (!read_first(outputs, t)) continue;
        // A call returning the op's value as it is (Conv2d.forward returning _conv_forward's)
        // matches too: the collective runs once on it. Holding the tensor keeps its address from
        // being reused by another (which would skip a collective on some devices only).
        if (t.is_same(last_collected)) continue;
        collect(pc, t);
        last_collected = t;
        write_first(outputs, t);
      }
      if (is_forward_call(step)) {
        int component = c.is_component_[static_cast<size_t>(step.callee)];
        if (component < 0) return;
        int occurrence = occurrences[step.callee]++;
        at::Tensor t;
        if (!read_first(outputs, t)) return;
        auto it = c.reference_taps_.find({step.callee, occurrence});
        const at::Tensor* ref = it == c.reference_taps_.end() ? nullptr : &it->second;
        t = c.rendezvous_->exchange(device, t, [&](std::vector<at::Tensor>& values) { c.tap(component, ref, values); });
        write_first(outputs, t);
      }
    }
  };

  void devices() {
    rendezvous_ = std::make_unique<Rendezvous>(mesh_.devices);
    std::vector<std::vector<c10::IValue>> outputs(static_cast<size_t>(mesh_.devices));
    std::vector<std::string> errors(static_cast<size_t>(mesh_.devices));
    std::vector<std::thread> threads;
    for (int d = 0; d < mesh_.devices; ++d)
      threads.emplace_back([&, d] {
        at::set_num_threads(1);
        DeviceHooks hooks(*this, d);
        try {
          outputs[static_cast<size_t>(d)] = run_numeric(model_, std::vector<c10::IValue>(inputs_.begin(), inputs_.end()), hooks);
        } catch (const Aborted&) {
        } catch (const std::exception& e) {
          errors[static_cast<size_t>(d)] = e.what();
          rendezvous_->fail();
        }
      });
    for (auto& t : threads) t.join();
    for (int d = 0; d < mesh_.devices; ++d)
      if (!errors[static_cast<size_t>(d)].empty()) {
        report_.error = "device " + std::to_string(d) + " could not run its part: " + errors[static_cast<size_t>(d)];
        report_.error_kind = 1;
        return;
      }
    std::vector<at::Tensor> finals;
    for (auto& o : outputs) {
      at::Tensor t;
      if (!read_first(o, t)) {
        report_.error = "a device's forward() returned no tensor";
        report_.error_kind = 1;
        return;
      }
      finals.push_back(t);
    }
    try {
      for (auto& pc : collectives_)
        if (pc.tier == kTiers + 1) {
          apply(pc, finals);
          ++report_.collectives_run;
        }
    } catch (const std::exception& e) {
      report_.error = std::string("the collective on the model's output cannot run: ") + e.what();
      report_.error_kind = 5;
      return;
    }
    tap(output_component_, &reference_output_, finals);
  }

  void summarize() {
    if (!report_.error.empty()) return;
    bool ok = true;
    for (auto& c : components_) {
      ComponentCheck out;
      out.module = c.pattern;
      out.instances = c.instances;
      out.max_abs = c.max_abs;
      out.max_rel = c.max_rel;
      if (!c.not_checked.empty()) {
        out.status = "not-checked";
        out.note = c.not_checked;
      } else if (c.instances == 0) {
        if (c.pattern == "(model output)") continue;
        out.status = "not-checked";
        out.note = "forward() never returned from it (not called, or its output is not a tensor)";
      } else {
        out.status = c.mismatch ? "mismatch" : "ok";
        if (c.mismatch) ok = false;
        if (!c.with.empty()) {
          out.note = "its output stays sharded; checked together with ";
          for (size_t i = 0; i < c.with.size(); ++i) out.note += (i ? ", " : "") + c.with[i];
        }
      }
      report_.components.push_back(out);
    }
    report_.ok = ok;
    for (auto& c : report_.components) report_.unchecked += c.status == "not-checked";
    report_.unchecked += static_cast<int>(report_.not_checked.size());
  }

  LoadedModel& model_;
  const nlohmann::json& plan_;
  const CheckOptions& options_;
  CheckReport& report_;
  Mesh mesh_;
  std::vector<std::string> plan_axes_;
  std::vector<const nlohmann::json*> layouts_;
  std::map<std::string, int> module_by_name_;
  std::string extra_;
  int extra_count_ = 0;
  std::vector<PlanCollective> collectives_;
  std::vector<Component> components_;
  std::vector<int> is_component_;
  int output_component_ = -1;
  std::vector<int> pending_;
  std::vector<at::Tensor> reference_;
  std::vector<std::vector<at::Tensor>> device_weights_;
  std::vector<at::Tensor> inputs_;
  std::map<std::pair<int, int>, at::Tensor> reference_taps_;
  at::Tensor reference_output_;
  std::unique_ptr<Rendezvous> rendezvous_;
  std::mutex results_mutex_;
};

std::string number(double v) {
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

CheckReport check_plan(LoadedModel& model, const nlohmann::json& plan, const CheckOptions& options) {
  CheckReport report;
  Checker(model, plan, options, report).run();
  return report;
}

nlohmann::json check_to_json(const CheckReport& r, const CheckOptions& o) {
  nlohmann::json j;
  j["mesh"] = std::to_string(o.rows) + "x" + std::to_string(o.cols);
  j["devices"] = r.devices;
  j["tolerance"] = o.tolerance;
  j["seed"] = o.seed;
  // "ok" means verified: every component and collective checked, and all agree.
  j["ok"] = r.verified();
  j["verified"] = r.verified();
  j["checked_agree"] = r.ok && r.error.empty();
  j["unchecked"] = r.unchecked;
  if (!r.error.empty()) j["error"] = r.error;
  j["inputs"] = r.inputs;
  j["sharded_parameters"] = r.sharded_parameters;
  j["collectives_run"] = r.collectives_run;
  j["slices_run"] = r.slices_run;
  j["components"] = nlohmann::json::array();
  for (auto& c : r.components) {
    nlohmann::json cj{{"module", c.module}, {"instances", c.instances}, {"status", c.status}};
    cj["max_abs_error"] = std::isinf(c.max_abs) ? nlohmann::json("inf") : nlohmann::json(c.max_abs);
    cj["max_rel_error"] = std::isinf(c.max_rel) ? nlohmann::json("inf") : nlohmann::json(c.max_rel);
    if (!c.note.empty()) cj["note"] = c.note;
    j["components"].push_back(cj);
  }
  j["not_checked"] = r.not_checked;
  j["notes"] = r.notes;
  j["seconds"] = r.seconds;
  return j;
}

std::string check_to_text(const CheckReport& r, const CheckOptions& o) {
  std::ostringstream out;
  std::string mesh = std::to_string(o.rows) + "x" + std::to_string(o.cols);
  if (!r.error.empty()) {
    out << "verify on " << mesh << ": " << r.error << "\n";
    return out.str();
  }
  out << "verify on " << mesh << " (" << r.devices << " devices, random weights and inputs, seed " << o.seed
      << ", tolerance " << number(o.tolerance) << " relative)\n";
  out << "  inputs:";
  for (auto& i : r.inputs) out << " " << i;
  out << "\n";
  size_t width = 9;
  for (auto& c : r.components) width = std::max(width, c.module.size());
  char line[512];
  std::snprintf(line, sizeof line, "  %-*s  %9s  %12s  %12s  %s\n", static_cast<int>(width), "component", "instances",
                "max abs err", "max rel err", "status");
  out << line;
  for (auto& c : r.components) {
    std::snprintf(line, sizeof line, "  %-*s  %9d  %12s  %12s  %s", static_cast<int>(width), c.module.c_str(), c.instances,
                  c.status == "not-checked" ? "-" : number(c.max_abs).c_str(),
                  c.status == "not-checked" ? "-" : number(c.max_rel).c_str(), c.status.c_str());
    out << line << (c.note.empty() ? "" : "  (" + c.note + ")") << "\n";
  }
  for (auto& n : r.not_checked) out << "not checked: " << n << "\n";
  for (auto& n : r.notes) out << "note: " << n << "\n";
  int bad = 0;
  for (auto& c : r.components) bad += c.status == "mismatch";
  if (r.verified()) out << "result: the plan computes what the unsharded model computes\n";
  else if (r.ok)
    out << "result: NOT VERIFIED: " << r.unchecked << " part(s) of the plan could not be checked (listed above); what was checked agrees\n";
  else {
    out << "result: the plan is wrong: " << bad << " component(s) differ from the unsharded forward:";
    for (auto& c : r.components)
      if (c.status == "mismatch") out << " " << c.module;
    out << "\n";
  }
  return out.str();
}

}  // namespace shardlens::torchgraph
