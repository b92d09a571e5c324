#include "mlir/ir_check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

namespace shardlens::mlir {
namespace {

using json = nlohmann::json;
using Spec = std::vector<std::vector<std::string>>;

const char* kKinds[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute"};

// "ttnn.all_gather_async" -> "all_gather"; "" when the op is not a collective.
std::string collective_kind(std::string_view name) {
  auto dot = name.rfind('.');
  std::string_view base = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (base.size() > 6 && base.substr(base.size() - 6) == "_async") base.remove_suffix(6);
  for (const char* k : kKinds)
    if (base == k) return k;
  if (base == "point_to_point" || base == "send") return "collective_permute";
  return "";
}

std::string dialect(std::string_view name) {
  auto dot = name.find('.');
  return dot == std::string_view::npos ? std::string() : std::string(name.substr(0, dot));
}

// Lower-case alphanumerics with single '_' between runs, without torch.compile's "l__self___".
std::string normalize_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  for (const char* prefix : {"l_self_", "self_", "getattr_l_self_"})
    if (out.rfind(prefix, 0) == 0) out = out.substr(std::string(prefix).size());
  return out;
}

std::string strip_quotes(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return std::string(s.substr(1, s.size() - 2));
  return std::string(s);
}

double product(const std::vector<int64_t>& v) {
  double n = 1;
  for (auto d : v) n *= static_cast<double>(d < 0 ? 1 : d);
  return n;
}

std::string spec_text(const Spec& spec) {
  std::string out = "[";
  for (size_t i = 0; i < spec.size(); ++i) {
    if (i) out += ", ";
    if (spec[i].empty()) out += "None";
    else if (spec[i].size() == 1) out += spec[i][0];
    else {
      out += "(";
      for (size_t k = 0; k < spec[i].size(); ++k) out += (k ? ", " : "") + spec[i][k];
      out += ")";
    }
  }
  return out + "]";
}

bool spec_replicated(const Spec& s) {
  for (auto& d : s)
    if (!d.empty()) return false;
  return true;
}

bool same_spec(const Spec& a, const Spec& b) {
  if (spec_replicated(a) && spec_replicated(b)) return true;
  return a == b;
}

std::string human_bytes(double b) {
  char buf[64];
  if (b >= 1 << 20) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else if (b >= 1 << 10) std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1 << 10));
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

IrLevel detect_level(const Module& m) {
  bool ttir = false, shlo = false;
  for (auto& op : m.ops) {
    auto d = std::string_view(op.name).substr(0, op.name.find('.'));
    if (d == "ttnn") return IrLevel::Ttnn;
    if (d == "ttir") ttir = true;
    if (d == "stablehlo" || d == "sdy" || d == "mhlo") shlo = true;
  }
  if (ttir) return IrLevel::Ttir;
  if (shlo) return IrLevel::StableHlo;
  return IrLevel::Unknown;
}

struct MeshInfo {
  std::vector<std::string> axes;  // the plan's axis names, in mesh order
  std::vector<int> shape;         // sizes in the same order
  std::vector<std::string> ir_axes;  // the IR's own names for them (sdy.mesh), same order
  int size_of(const std::string& axis) const {
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i] == axis && i < shape.size()) return shape[i];
    return 0;
  }
  // An IR axis name ("y") as the plan names it ("model"): by its position in the mesh.
  std::string plan_axis(const std::string& ir_axis) const {
    for (size_t i = 0; i < ir_axes.size() && i < axes.size(); ++i)
      if (ir_axes[i] == ir_axis) return axes[i];
    return ir_axis;
  }
};

// The IR's mesh group of a collective: stablehlo replica_groups, ttir/ttnn cluster_axis, sdy axis names.
void group_of(const Operation& op, const MeshInfo& mesh, IrCollective& c) {
  int total = 1;
  for (int s : mesh.shape) total *= s;
  if (auto ca = op.attribute("cluster_axis")) {
    if (auto v = parse_int_attr(*ca); v && *v >= 0 && static_cast<size_t>(*v) < mesh.axes.size()) {
      c.axis = mesh.axes[*v];
      c.devices = mesh.shape[*v];
    }
    return;
  }
  if (auto rg = op.attribute("replica_groups")) {
    auto ids = parse_int_array(*rg);
    auto colon = rg->rfind(" : ");
    TensorType t = colon == std::string_view::npos ? TensorType{} : parse_tensor_type(rg->substr(colon + 3));
    if (t.valid && t.shape.size() == 2) c.devices = static_cast<int>(t.shape[1]);
    else if (!ids.empty()) c.devices = static_cast<int>(ids.size());
    if (c.devices > 0 && mesh.shape.size() == 2) {
      int rows = mesh.shape[0], cols = mesh.shape[1];
      bool consecutive = ids.size() >= 2 ? ids[1] == ids[0] + 1 : true;
      if (c.devices == total && rows > 1 && cols > 1) c.axis = "";
      else if (c.devices == cols && (consecutive || rows == 1)) c.axis = mesh.axes[1];
      else if (c.devices == rows) c.axis = mesh.axes[0];
      else if (rows == 1) c.axis = mesh.axes[1];
    }
    return;
  }
  if (dialect(op.name) == "sdy") {
    // sdy.all_reduce {"model"} %x ..., sdy.all_gather [{}, {"model"}] %x ...: quoted axis names before the operand.
    std::string_view t = op.text;
    auto pct = t.find('%', t.find(op.name) + op.name.size());
    std::string_view head = t.substr(0, pct);
    int devices = 1;
    for (size_t q = head.find('"'); q != std::string_view::npos; q = head.find('"', q)) {
      auto e = head.find('"', q + 1);
      if (e == std::string_view::npos) break;
      std::string axis = mesh.plan_axis(std::string(head.substr(q + 1, e - q - 1)));
      c.axis = axis;
      devices *= std::max(1, mesh.size_of(axis));
      q = e + 1;
    }
    c.devices = devices;
    return;
  }
  c.devices = total;
}

Spec from_sdy(const Spec& ir, const MeshInfo& mesh) {
  Spec out = ir;
  for (auto& d : out)
    for (auto& a : d) a = mesh.plan_axis(a);
  return out;
}

// mhlo.sharding = "{devices=[1,2]<=[2]}" -> per dim, the mesh axis whose size the count equals.
std::optional<Spec> from_gspmd(std::string_view text, size_t rank, const MeshInfo& mesh) {
  std::string s = strip_quotes(text);
  if (s.find("replicated") != std::string::npos || s.find("maximal") != std::string::npos) return Spec(rank);
  auto d = s.find("devices=[");
  if (d == std::string::npos) return std::nullopt;
  auto counts = parse_int_array(s.substr(d + 8, s.find(']', d) - d - 8 + 1));
  Spec out(rank);
  for (size_t i = 0; i < rank && i < counts.size(); ++i) {
    if (counts[i] <= 1) continue;
    for (size_t a = mesh.axes.size(); a-- > 0;)
      if (a < mesh.shape.size() && mesh.shape[a] == counts[i]) {
        out[i] = {mesh.axes[a]};
        break;
      }
    if (out[i].empty()) out[i] = {"?" + std::to_string(counts[i])};
  }
  return out;
}

// ttir/ttnn.mesh_shard: shard_dims gives, per mesh axis, the tensor dim it splits (-1: none).
std::optional<Spec> from_mesh_shard(const Operation& op, size_t rank, const MeshInfo& mesh) {
  auto type = op.attribute("shard_type");
  if (!type) return std::nullopt;
  if (type->find("replicate") != std::string_view::npos) return Spec(rank);
  if (type->find("devices") == std::string_view::npos) return std::nullopt;
  auto dims = op.attribute("shard_dims");
  auto shape = op.attribute("shard_shape");
  Spec out(rank);
  if (dims) {
    auto d = parse_int_array(*dims);
    for (size_t a = 0; a < d.size() && a < mesh.axes.size(); ++a)
      if (d[a] >= 0 && static_cast<size_t>(d[a]) < rank) out[d[a]].push_back(mesh.axes[a]);
    return out;
  }
  if (shape) {
    auto s = parse_int_array(*shape);
    for (size_t i = 0; i < rank && i < s.size(); ++i)
      if (s[i] > 1) out[i] = {"?" + std::to_string(s[i])};
  }
  return out;
}

}  // namespace

const char* level_name(IrLevel level) {
  switch (level) {
    case IrLevel::StableHlo: return "stablehlo";
    case IrLevel::Ttir: return "ttir";
    case IrLevel::Ttnn: return "ttnn";
    case IrLevel::Unknown: break;
  }
  return "unknown";
}

size_t CheckReport::mismatch_count() const {
  size_t n = 0;
  for (auto& f : files) n += f.mismatches.size();
  return n;
}

static MeshInfo mesh_info(const Module& m, const std::vector<std::string>& plan_axes, const std::vector<int>& shape) {
  MeshInfo mesh;
  mesh.axes = plan_axes.empty() ? std::vector<std::string>{"batch", "model"} : plan_axes;
  mesh.shape = shape;
  for (auto& mm : m.meshes) {
    if (mm.axes.size() != mesh.axes.size()) continue;
    for (auto& [name, size] : mm.axes) mesh.ir_axes.push_back(name);
    if (mesh.shape.empty())
      for (auto& [name, size] : mm.axes) mesh.shape.push_back(static_cast<int>(size));
    break;
  }
  if (mesh.shape.empty()) mesh.shape = {1, 1};
  return mesh;
}

IrFileReport read_ir(const Module& m, const std::vector<std::string>& plan_axes, const std::vector<int>& mesh_shape) {
  IrFileReport r;
  r.file = m.file;
  r.level = detect_level(m);
  r.errors = m.errors;
  MeshInfo mesh = mesh_info(m, plan_axes, mesh_shape);
  // Which op uses each value first (the mesh_shard / manual_computation an argument goes through).
  std::unordered_map<std::string_view, std::vector<int>> users;
  users.reserve(m.ops.size());
  for (size_t i = 0; i < m.ops.size(); ++i)
    for (auto v : m.ops[i].operands) users[v].push_back(static_cast<int>(i));
  std::vector<bool> merged(m.ops.size(), false);
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const Operation& op = m.ops[i];
    std::string kind = collective_kind(op.name);
    if (kind.empty() || merged[i]) continue;
    IrCollective c;
    c.kind = kind;
    c.op = std::string(op.name);
    c.line = op.line;
    c.loc = m.resolve_location(op.loc);
    group_of(op, mesh, c);
    TensorType in = op.operand_types.empty() ? TensorType{} : parse_tensor_type(op.operand_types[0]);
    TensorType out = op.result_types.empty() ? TensorType{} : parse_tensor_type(op.result_types[0]);
    if (!in.valid) in = out;
    if (!out.valid) out = in;
    bool global = dialect(op.name) == "sdy";
    c.type = in.elements() >= out.elements() ? in : out;
    c.elements = static_cast<double>(c.type.elements());
    if (kind == "all_to_all" && !global && c.devices > 1) c.elements *= c.devices;
    // An all-reduce lowered as reduce-scatter + all-gather (TTNN): one all-reduce of the scatter's input.
    if (kind == "reduce_scatter" && !op.results.empty()) {
      auto u = users.find(op.results[0]);
      if (u != users.end() && u->second.size() == 1 && collective_kind(m.ops[u->second[0]].name) == "all_gather") {
        merged[u->second[0]] = true;
        c.kind = "all_reduce";
        c.op += "+" + std::string(m.ops[u->second[0]].name);
      }
    }
    c.bytes = c.elements * c.type.element_bytes();
    r.collectives.push_back(std::move(c));
  }
  // Weights: the entry function's arguments that are parameters.
  const Function* entry = nullptr;
  for (auto& f : m.functions)
    if (f.name == "main" || f.name == "_main" || f.name == "forward") {
      entry = &f;
      break;
    }
  if (!entry && !m.functions.empty()) entry = &m.functions[0];
  if (!entry) return r;
  for (auto& a : entry->arguments) {
    IrWeight w;
    w.arg = std::string(a.name);
    w.type = parse_tensor_type(a.type);
    w.line = m.ops[entry->op].line;
    bool input = false;
    for (auto& at : a.attributes) {
      if (at.name == "ttir.name" || at.name == "ttcore.name" || at.name == "jax.arg_info" || at.name == "mhlo.name")
        w.name = strip_quotes(at.value);
      if (at.name == "ttcore.argument_type" && at.value.find("parameter") == std::string_view::npos &&
          at.value.find("constant") == std::string_view::npos)
        input = true;
    }
    if (input || !w.type.valid) continue;
    if (w.name.empty()) {
      auto loc = m.resolve_location(a.loc);
      if (!loc.names.empty()) w.name = loc.names[0];
    }
    size_t rank = w.type.shape.size();
    for (auto& at : a.attributes) {
      if (at.name == "sdy.sharding") {
        if (auto s = parse_sdy_sharding(at.value)) {
          w.spec = from_sdy(*s, mesh);
          w.sharding_known = true;
        }
      } else if (at.name == "mhlo.sharding" && !w.sharding_known) {
        if (auto s = from_gspmd(at.value, rank, mesh)) {
          w.spec = *s;
          w.sharding_known = true;
        }
      }
    }
    // Through the op that first takes it: a mesh_shard (TTIR/TTNN) or a manual computation (Shardy).
    auto u = users.find(a.name);
    if (u != users.end()) {
      for (int ui : u->second) {
        const Operation& op = m.ops[ui];
        auto base = std::string_view(op.name).substr(op.name.find('.') + 1);
        if (base == "mesh_shard") {
          auto dir = op.attribute("shard_direction");
          if (dir && dir->find("full_to_shard") == std::string_view::npos) continue;
          if (auto s = from_mesh_shard(op, rank, mesh)) {
            w.spec = *s;
            w.sharding_known = true;
          }
          break;
        }
        if (op.name == "sdy.manual_computation" && !w.sharding_known) {
          auto ins = op.attribute("in_shardings");
          auto pos = std::find(op.operands.begin(), op.operands.end(), a.name) - op.operands.begin();
          if (ins) {
            auto all = parse_sdy_sharding_per_value(*ins);
            if (static_cast<size_t>(pos) < all.size()) {
              w.spec = from_sdy(all[pos], mesh);
              w.sharding_known = true;
            }
          }
          break;
        }
      }
    }
    // Shardy: an argument without a sharding is replicated.
    if (!w.sharding_known && r.level == IrLevel::StableHlo) {
      w.spec = Spec(rank);
      w.sharding_known = true;
    }
    if (w.spec.size() < rank) w.spec.resize(rank);
    r.weights.push_back(std::move(w));
  }
  return r;
}

namespace {

struct PlanCollective {
  const json* j;
  std::string kind, at, axis;
  double elements = 0;
  int line = 0, column = 0;
  int remaining = 0, count = 0;
  std::vector<std::string> instances;  // normalized
};

struct PlanParameter {
  std::string name, normalized;
  std::vector<int64_t> shape;
  std::optional<Spec> spec;  // nullopt: not writable as a spec
  int line = 0, column = 0;
};

Spec spec_from_json(const json& s) {
  Spec out;
  for (auto& d : s) {
    if (d.is_null()) out.emplace_back();
    else if (d.is_string()) out.push_back({d.get<std::string>()});
    else if (d.is_array()) {
      std::vector<std::string> axes;
      for (auto& a : d)
        if (a.is_string()) axes.push_back(a.get<std::string>());
      out.push_back(axes);
    }
  }
  return out;
}

double tensor_elements(const json& c, double dtype_bytes) {
  if (c.contains("tensor") && c["tensor"].is_string()) {
    std::string t = c["tensor"];
    auto close = t.find(']');
    if (!t.empty() && t[0] == '[' && close != std::string::npos) {
      auto dims = parse_int_array(std::string_view(t).substr(0, close + 1));
      if (!dims.empty()) return product(dims);
    }
  }
  if (c.contains("bytes") && c["bytes"].is_number()) return c["bytes"].get<double>() / dtype_bytes;
  return 0;
}

// Same size, allowing for the factor by which a data-parallel axis divides the local tensor.
bool same_size(double ir, double plan, const MeshInfo& mesh) {
  if (ir <= 0 || plan <= 0) return false;
  if (std::fabs(ir - plan) < 0.5) return true;
  for (int s : mesh.shape)
    if (s > 1 && std::fabs(ir * s - plan) < 0.5) return true;
  return false;
}

bool loc_matches(const IrCollective& c, const PlanCollective& p) {
  for (auto& f : c.loc.frames)
    if (p.line > 0 && f.line == p.line) return true;
  for (auto& n : c.loc.names) {
    std::string nn = normalize_name(n);
    if (nn.empty()) continue;
    for (auto& inst : p.instances)
      if (!inst.empty() && (nn == inst || nn.find(inst) != std::string::npos)) return true;
  }
  return false;
}

bool has_loc_for_plan(const IrCollective& c) { return !c.loc.frames.empty(); }

}  // namespace

CheckReport check_ir(const std::vector<Module>& modules, const json& plan, const CheckOptions& options) {
  CheckReport report;
  if (!plan.is_object() || !plan.contains("meshes") || !plan["meshes"].is_array() || plan["meshes"].empty()) {
    report.error = "the plan has no meshes (expected the JSON of `shardlens plan --format json`)";
    return report;
  }
  // The plan mesh: the one named, else the one whose shape the IR's mesh has, else the first.
  std::vector<int> ir_shape;
  for (auto& m : modules)
    for (auto& mm : m.meshes)
      if (ir_shape.empty() && !mm.axes.empty()) {
        for (auto& [n, s] : mm.axes) ir_shape.push_back(static_cast<int>(s));
      }
  const json* chosen = nullptr;
  for (auto& pm : plan["meshes"]) {
    if (!pm.contains("shape")) continue;
    std::vector<int> shape = pm["shape"].get<std::vector<int>>();
    std::string text = shape.size() == 2 ? std::to_string(shape[0]) + "x" + std::to_string(shape[1]) : "";
    if (!options.mesh.empty() ? text == options.mesh : shape == ir_shape) {
      chosen = &pm;
      break;
    }
  }
  if (!chosen && !options.mesh.empty()) {
    report.error = "the plan has no mesh " + options.mesh;
    return report;
  }
  if (!chosen) {
    chosen = &plan["meshes"][0];
    if (!ir_shape.empty()) {
      std::string ir;
      for (size_t i = 0; i < ir_shape.size(); ++i) ir += (i ? "x" : "") + std::to_string(ir_shape[i]);
      report.notes.push_back("the IR's mesh (" + ir + ") is none of the plan's: compared with its first mesh");
    }
  }
  const json& pm = *chosen;
  report.mesh_shape = pm.value("shape", std::vector<int>{});
  std::vector<std::string> axes = pm.value("axes", std::vector<std::string>{"batch", "model"});
  std::string dtype = plan.contains("workload") ? plan["workload"].value("dtype", "bf16") : "bf16";
  double dtype_bytes = dtype == "fp32" ? 4 : dtype == "bfp8" ? 1.0625 : 2;

  std::vector<PlanParameter> params;
  if (pm.contains("parameters"))
    for (auto& p : pm["parameters"]) {
      PlanParameter q;
      q.name = p.value("name", "");
      q.normalized = normalize_name(q.name);
      if (p.contains("shape") && p["shape"].is_array()) q.shape = p["shape"].get<std::vector<int64_t>>();
      if (p.contains("spec") && p["spec"].is_array()) q.spec = spec_from_json(p["spec"]);
      if (p.contains("span") && p["span"].is_object()) {
        q.line = p["span"].value("line", 0);
        q.column = p["span"].value("column", 0);
      }
      params.push_back(std::move(q));
    }

  for (const Module& m : modules) {
    IrFileReport r = read_ir(m, axes, report.mesh_shape);
    MeshInfo mesh = mesh_info(m, axes, report.mesh_shape);
    std::vector<PlanCollective> pcs;
    if (pm.contains("collectives"))
      for (auto& c : pm["collectives"]) {
        PlanCollective p;
        p.j = &c;
        p.kind = c.value("kind", "");
        p.at = c.value("at", "");
        p.axis = c.value("axis", "");
        p.count = p.remaining = c.value("count", 0);
        p.elements = tensor_elements(c, dtype_bytes);
        if (c.contains("span") && c["span"].is_object()) {
          p.line = c["span"].value("line", 0);
          p.column = c["span"].value("column", 0);
        }
        if (c.contains("instances") && c["instances"].is_array())
          for (auto& i : c["instances"])
            if (i.is_string()) p.instances.push_back(normalize_name(i.get<std::string>()));
        if (p.instances.empty()) p.instances.push_back(normalize_name(p.at));
        pcs.push_back(std::move(p));
      }
    auto describe_plan = [&](const PlanCollective& p) {
      std::ostringstream o;
      o << p.kind << " of " << (p.j->contains("tensor") ? (*p.j)["tensor"].get<std::string>() : "?") << " at " << p.at;
      if (p.line) o << " (script line " << p.line << ")";
      return o.str();
    };
    auto describe_ir = [&](const IrCollective& c) {
      std::ostringstream o;
      o << c.op << " of tensor<" << c.type.str() << ">";
      if (c.devices) o << " over " << c.devices << " devices";
      if (!c.axis.empty()) o << " (axis " << c.axis << ")";
      o << " at line " << c.line;
      if (!c.loc.frames.empty()) o << " (loc " << c.loc.frames[0].file << ":" << c.loc.frames[0].line << ")";
      return o.str();
    };
    auto add = [&](std::string kind, int ir_line, std::string message, std::string at, int sline, int scol) {
      r.mismatches.push_back({std::move(kind), r.file, ir_line, std::move(message), std::move(at), sline, scol});
    };
    // Pass 1: same kind and size; a matching location first, then the same axis, then any.
    for (int pass = 0; pass < 3; ++pass)
      for (auto& c : r.collectives) {
        if (c.matched >= 0) continue;
        for (size_t k = 0; k < pcs.size(); ++k) {
          auto& p = pcs[k];
          if (p.remaining <= 0 || p.kind != c.kind || !same_size(c.elements, p.elements, mesh)) continue;
          if (pass == 0 && !loc_matches(c, p)) continue;
          if (pass == 1 && (c.axis.empty() || c.axis != p.axis)) continue;
          // A location pointing elsewhere in the script is not this collective.
          if (pass > 0 && has_loc_for_plan(c) && !loc_matches(c, p) && p.line > 0) continue;
          c.matched = static_cast<int>(k);
          --p.remaining;
          break;
        }
      }
    // Pass 2: what is left pairs up as another kind or size at the same place, else extra / missing.
    for (auto& c : r.collectives) {
      if (c.matched >= 0) continue;
      int best = -1;
      for (size_t k = 0; k < pcs.size() && best < 0; ++k)
        if (pcs[k].remaining > 0 && loc_matches(c, pcs[k])) best = static_cast<int>(k);
      if (best < 0 && !has_loc_for_plan(c))
        for (size_t k = 0; k < pcs.size() && best < 0; ++k)
          if (pcs[k].remaining > 0 && pcs[k].kind == c.kind) best = static_cast<int>(k);
      int sline = c.loc.frames.empty() ? 0 : c.loc.frames[0].line;
      int scol = c.loc.frames.empty() ? 0 : c.loc.frames[0].column;
      if (best < 0) {
        add("extra", c.line, "extra " + c.kind + ": " + describe_ir(c) + "; the plan has no such collective left", "", sline, scol);
        continue;
      }
      auto& p = pcs[best];
      --p.remaining;
      c.matched = best;
      if (p.kind != c.kind)
        add("other_kind", c.line, c.kind + " where the plan has " + describe_plan(p) + ": " + describe_ir(c), p.at, p.line, p.column);
      else
        add("other_size", c.line,
            c.kind + " of " + std::to_string(static_cast<long long>(c.elements)) + " elements where the plan has " +
                std::to_string(static_cast<long long>(p.elements)) + " (" + describe_plan(p) + "): " + describe_ir(c),
            p.at, p.line, p.column);
    }
    for (auto& p : pcs)
      if (p.remaining > 0)
        add("missing", 0,
            "missing " + (p.remaining == p.count ? std::string() : std::to_string(p.remaining) + " of ") + std::to_string(p.count) + " x " +
                describe_plan(p) + ": not in the IR",
            p.at, p.line, p.column);
    // Weights: by name, else by shape.
    std::map<std::string, int> by_name;
    for (size_t i = 0; i < params.size(); ++i) by_name.emplace(params[i].normalized, static_cast<int>(i));
    std::map<std::vector<int64_t>, std::vector<int>> ir_by_shape;
    for (size_t wi = 0; wi < r.weights.size(); ++wi) {
      auto& w = r.weights[wi];
      if (!w.name.empty()) {
        auto it = by_name.find(normalize_name(w.name));
        if (it != by_name.end()) w.parameter = it->second;
      }
      if (w.parameter < 0) ir_by_shape[w.type.shape].push_back(static_cast<int>(wi));
    }
    auto weight_mismatch = [&](const IrWeight& w, const PlanParameter& p, const std::string& expected) {
      add("weight_sharding", w.line,
          "weight " + p.name + " (" + w.arg + (w.name.empty() || w.name == p.name ? "" : " '" + w.name + "'") + ", tensor<" + w.type.str() +
              ">) is sharded " + spec_text(w.spec) + " in the IR; the plan's spec is " + expected,
          p.name, p.line, p.column);
    };
    for (auto& w : r.weights) {
      if (w.parameter < 0 || !w.sharding_known) continue;
      auto& p = params[w.parameter];
      if (p.spec && !same_spec(w.spec, *p.spec)) weight_mismatch(w, p, spec_text(*p.spec));
    }
    // By shape: the IR's specs of a shape must be the plan's specs of that shape, as multisets.
    for (auto& [shape, ws] : ir_by_shape) {
      std::vector<int> candidates;
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i].shape == shape && params[i].spec) candidates.push_back(static_cast<int>(i));
      if (candidates.empty()) continue;  // not a parameter of the plan (an input)
      std::vector<bool> used(candidates.size(), false);
      std::vector<int> unmatched;
      for (int wi : ws) {
        auto& w = r.weights[wi];
        if (!w.sharding_known) continue;
        bool found = false;
        for (size_t k = 0; k < candidates.size() && !found; ++k)
          if (!used[k] && same_spec(w.spec, *params[candidates[k]].spec)) {
            used[k] = found = true;
            w.parameter = candidates[k];
          }
        if (!found) unmatched.push_back(wi);
      }
      for (int wi : unmatched) {
        // The plan parameter it most likely is: the first of its shape not accounted for.
        int pick = candidates[0];
        for (size_t k = 0; k < candidates.size(); ++k)
          if (!used[k]) {
            pick = candidates[k];
            used[k] = true;
            break;
          }
        r.weights[wi].parameter = pick;
        std::string expected = spec_text(*params[pick].spec);
        weight_mismatch(r.weights[wi], params[pick], expected + " (matched by its shape)");
      }
    }
    for (auto& w : r.weights)
      if (!w.sharding_known && w.parameter >= 0) r.notes.push_back("the sharding of " + w.arg + " could not be read: not compared");
    for (auto& e : r.errors) r.notes.push_back("line " + std::to_string(e.line) + ": " + e.message);
    report.files.push_back(std::move(r));
  }
  return report;
}

bool collect_ir_files(const std::vector<std::string>& inputs, std::vector<std::string>& files, std::string& plan_in_dir, std::string& error) {
  namespace fs = std::filesystem;
  for (auto& in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      files.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(in, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      auto p = it->path();
      if (p.extension() == ".mlir") found.push_back(p.string());
      if (p.filename() == "plan.json" && plan_in_dir.empty()) plan_in_dir = p.string();
    }
    std::sort(found.begin(), found.end());
    if (found.empty()) {
      error = "'" + in + "' holds no .mlir file";
      return false;
    }
    files.insert(files.end(), found.begin(), found.end());
  }
  return true;
}

bool check_ir_files(const std::vector<std::string>& files, const json& plan, const CheckOptions& options, CheckReport& report, std::string& error) {
  std::vector<Module> modules;
  for (auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::error_code ec;
    if (!in || std::filesystem::is_directory(f, ec)) {
      error = "cannot read '" + f + "'";
      return false;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find('\0') != std::string::npos) {
      error = "'" + f + "' is not a text file (it contains NUL bytes)";
      return false;
    }
    modules.push_back(parse_mlir(std::move(text), f));
  }
  report = check_ir(modules, plan, options);
  return true;
}

json to_json(const CheckReport& report) {
  json j;
  j["verdict"] = !report.error.empty() ? "error" : report.matches() ? "match" : "mismatch";
  if (!report.error.empty()) j["error"] = report.error;
  j["mesh"] = report.mesh_shape;
  j["files"] = json::array();
  j["mismatches"] = json::array();
  for (auto& f : report.files) {
    json fj{{"file", f.file}, {"level", level_name(f.level)}, {"collectives", json::array()}, {"weights", json::array()}, {"notes", f.notes}};
    for (auto& c : f.collectives) {
      json cj{{"kind", c.kind}, {"op", c.op}, {"line", c.line}, {"shape", c.type.shape}, {"element_type", c.type.element},
              {"elements", static_cast<long long>(c.elements)}, {"bytes", static_cast<long long>(std::llround(c.bytes))},
              {"devices", c.devices}, {"axis", c.axis}, {"matched", c.matched >= 0}};
      if (!c.loc.frames.empty()) cj["loc"] = {{"file", c.loc.frames[0].file}, {"line", c.loc.frames[0].line}, {"column", c.loc.frames[0].column}};
      if (!c.loc.names.empty()) cj["loc_names"] = c.loc.names;
      fj["collectives"].push_back(std::move(cj));
    }
    for (auto& w : f.weights) {
      json wj{{"arg", w.arg}, {"name", w.name}, {"shape", w.type.shape}, {"sharding_known", w.sharding_known}};
      json spec = json::array();
      for (auto& d : w.spec) spec.push_back(d.empty() ? json(nullptr) : d.size() == 1 ? json(d[0]) : json(d));
      wj["spec"] = spec;
      fj["weights"].push_back(std::move(wj));
    }
    for (auto& m : f.mismatches) {
      json mj{{"kind", m.kind}, {"file", m.file}, {"ir_line", m.ir_line}, {"message", m.message}, {"at", m.at}};
      if (m.source_line > 0) mj["source"] = {{"line", m.source_line}, {"column", m.source_column}};
      j["mismatches"].push_back(std::move(mj));
    }
    j["files"].push_back(std::move(fj));
  }
  j["notes"] = report.notes;
  return j;
}

std::string to_text(const CheckReport& report) {
  std::ostringstream o;
  if (!report.error.empty()) {
    o << "check-ir: " << report.error << "\n";
    return o.str();
  }
  o << "mesh";
  for (size_t i = 0; i < report.mesh_shape.size(); ++i) o << (i ? "x" : " ") << report.mesh_shape[i];
  o << "\n";
  for (auto& n : report.notes) o << "note: " << n << "\n";
  std::map<std::string, int> totals;
  for (auto& f : report.files) {
    size_t matched = 0;
    for (auto& c : f.collectives) matched += c.matched >= 0;
    o << f.file << " (" << level_name(f.level) << "): " << f.collectives.size() << " collectives, " << f.weights.size() << " weights\n";
    for (auto& c : f.collectives)
      o << "  " << (c.matched >= 0 ? "ok   " : "     ") << " " << c.kind << " tensor<" << c.type.str() << "> " << human_bytes(c.bytes)
        << " at line " << c.line << "\n";
    for (auto& m : f.mismatches) {
      o << "  " << m.kind << ": " << m.message;
      if (m.ir_line) o << " [" << f.file << ":" << m.ir_line << "]";
      o << "\n";
      ++totals[m.kind];
    }
    for (auto& n : f.notes) o << "  note: " << n << "\n";
  }
  size_t n = report.mismatch_count();
  if (n == 0) {
    o << "verdict: the IR matches the plan\n";
  } else {
    o << "verdict: " << n << " mismatch" << (n == 1 ? "" : "es") << " (";
    bool first = true;
    for (auto& [k, v] : totals) {
      o << (first ? "" : ", ") << v << " " << k;
      first = false;
    }
    o << ")\n";
  }
  return o.str();
}

std::string to_markdown(const CheckReport& report) {
  std::ostringstream o;
  o << "\n## 8. Compiled IR check\n\n";
  if (!report.error.empty()) {
    o << "The IR could not be compared: " << report.error << "\n";
    return o.str();
  }
  size_t n = report.mismatch_count();
  o << "The collectives and weight shardings of the compiler's IR (`shardlens check-ir`) against the plan for mesh ";
  for (size_t i = 0; i < report.mesh_shape.size(); ++i) o << (i ? "x" : "") << report.mesh_shape[i];
  o << ": " << (n == 0 ? "**the IR matches the plan**." : "**" + std::to_string(n) + " mismatch" + (n == 1 ? "" : "es") + "**.") << "\n\n";
  o << "| IR file | level | collectives | matched | weights compared | mismatches |\n|---|---|---|---|---|---|\n";
  for (auto& f : report.files) {
    size_t matched = 0, weights = 0;
    for (auto& c : f.collectives) matched += c.matched >= 0;
    for (auto& w : f.weights) weights += w.sharding_known && w.parameter >= 0;
    o << "| `" << f.file << "` | " << level_name(f.level) << " | " << f.collectives.size() << " | " << matched << " | " << weights << " | "
      << f.mismatches.size() << " |\n";
  }
  if (n) {
    o << "\n";
    for (auto& f : report.files)
      for (auto& m : f.mismatches)
        o << "- **" << m.kind << "** (`" << f.file << (m.ir_line ? ":" + std::to_string(m.ir_line) : std::string()) << "`): " << m.message << "\n";
  }
  for (auto& note : report.notes) o << "\nNote: " << note << "\n";
  return o.str();
}

}  // namespace shardlens::mlir
