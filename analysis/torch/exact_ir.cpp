#include "torch/exact_ir.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/contract_equations.h"

namespace shardlens::torchgraph {
namespace {

using ir::OpKind;
using nlohmann::json;

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2))) * 1099511628211ULL; }

// A parameter's or buffer's own name (the last part of its qualified name) and shape.
uint64_t mix_tensor(uint64_t h, const std::string& qualified_name, const std::vector<int64_t>& shape) {
  h = mix(h, std::hash<std::string>()(qualified_name.substr(qualified_name.rfind('.') + 1)));
  for (auto d : shape) h = mix(h, static_cast<uint64_t>(d));
  return h;
}

ir::Span span_from(const json& j) {
  ir::Span s;
  if (!j.is_object()) return s;
  s.line = j.value("line", 0u);
  s.column = j.value("column", 0u);
  s.end_line = j.value("end_line", s.line);
  s.end_column = j.value("end_column", s.column);
  return s;
}

std::string strip(const std::string& kind) {
  auto c = kind.find("::");
  return c == std::string::npos ? kind : kind.substr(c + 2);
}

const std::set<std::string> kUnary = {
    "relu", "gelu", "silu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "pow", "abs", "sin", "cos", "square",
    "reciprocal", "softplus", "mish", "elu", "leaky_relu", "hardswish", "hardsigmoid", "relu6", "selu", "celu",
    "log_sigmoid", "softsign", "erf", "clamp", "clamp_min", "clamp_max", "masked_fill", "tril", "triu", "sign",
    "floor", "ceil", "round", "log1p", "expm1", "nan_to_num", "hardtanh", "tanhshrink", "float_power", "erfinv",
    "cumsum", "cumprod", "flip", "roll", "where", "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and",
    "logical_or", "bitwise_and", "bitwise_or", "bitwise_not", "prelu", "glu_", "isnan", "isinf", "remainder",
    "floor_divide", "fmod", "maximum", "minimum", "threshold", "hardshrink", "softshrink", "rrelu", "polar", "angle",
    "view_as_real", "view_as_complex", "complex", "real", "imag", "fill", "zero", "copy", "normal", "uniform"};
const std::set<std::string> kScale = {"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout",
                                      "contiguous", "clone", "detach", "to", "type_as", "float", "half", "bfloat16",
                                      "double", "neg", "cpu", "cuda", "requires_grad", "alias", "lift_fresh"};
const std::set<std::string> kReshape = {"view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "view_as",
                                        "reshape_as", "_reshape_alias", "_unsafe_view"};
const std::set<std::string> kCreate = {"zeros", "ones", "empty", "full", "arange", "randn", "rand", "randint",
                                       "tensor", "as_tensor", "linspace", "zeros_like", "ones_like", "empty_like",
                                       "full_like", "randn_like", "rand_like", "new_zeros", "new_ones", "new_empty",
                                       "new_full", "new_tensor", "eye", "tril_indices", "triu_indices", "scalar_tensor",
                                       "empty_strided", "one_hot", "bernoulli", "randperm"};
const std::set<std::string> kReduceLinear = {"sum", "mean", "nansum"};
const std::set<std::string> kReduceOther = {"max", "min", "amax", "amin", "std", "var", "logsumexp", "norm", "prod",
                                            "any", "all", "var_mean", "std_mean", "linalg_vector_norm"};

struct ModuleInfo {
  std::string name, class_name;
  bool builtin = false;
  int parent = -1;
};

class Translator {
 public:
  Translator(const json& j, ExactIR& out) : j_(j), out_(out), m_(out.model), flow_(out.model.dataflow) {}

  bool build_tree() {
    if (!j_.is_object() || j_.value("format", 0) != 1) {
      out_.error = "not a shardlens-graph JSON of format 1";
      return false;
    }
    m_.model = j_.value("model", "");
    m_.source = j_.value("source", "");
    m_.root_expression = j_.value("root", "");
    out_.method = j_.value("method", "");
    out_.source = m_.source;
    ir::Module root;
    root.class_name = m_.model;
    m_.modules.push_back(root);
    infos_.push_back({"", m_.model, j_.value("root_builtin", false), -1});
    module_index_[""] = 0;
    for (const auto& mj : j_.value("modules", json::array())) {
      ir::Module mod;
      mod.name = mj.value("name", "");
      mod.class_name = mj.value("class", "");
      int index = static_cast<int>(m_.modules.size());
      module_index_[mod.name] = index;
      auto dot = mod.name.rfind('.');
      std::string parent = dot == std::string::npos ? "" : mod.name.substr(0, dot);
      auto pit = module_index_.find(parent);
      int p = pit == module_index_.end() ? 0 : pit->second;
      m_.modules[p].children.push_back(index);
      m_.modules[p].child_keys.push_back(dot == std::string::npos ? mod.name : mod.name.substr(dot + 1));
      infos_.push_back({mod.name, mod.class_name, mj.value("builtin", false), p});
      m_.modules.push_back(std::move(mod));
    }
    auto owner = [&](const std::string& name) {
      auto dot = name.rfind('.');
      std::string mod = dot == std::string::npos ? "" : name.substr(0, dot);
      auto it = module_index_.find(mod);
      return it == module_index_.end() ? 0 : it->second;
    };
    for (const auto& pj : j_.value("parameters", json::array())) {
      ir::Parameter p;
      p.name = pj.value("name", "");
      if (pj.contains("shape") && pj["shape"].is_array()) p.shape = pj["shape"].get<std::vector<int64_t>>();
      p.dtype = pj.value("dtype", "float32");
      int index = static_cast<int>(m_.parameters.size());
      param_index_[p.name] = index;
      m_.modules[owner(p.name)].parameters.push_back(index);
      m_.parameters.push_back(std::move(p));
    }
    for (const auto& bj : j_.value("buffers", json::array())) {
      ir::Buffer b;
      b.name = bj.value("name", "");
      if (bj.contains("shape") && bj["shape"].is_array()) b.shape = bj["shape"].get<std::vector<int64_t>>();
      b.dtype = bj.value("dtype", "float32");
      b.persistent = bj.value("persistent", true);
      int index = static_cast<int>(m_.buffers.size());
      buffer_index_[b.name] = index;
      m_.modules[owner(b.name)].buffers.push_back(index);
      m_.buffers.push_back(std::move(b));
    }
    for (const auto& n : j_.value("notes", json::array()))
      if (n.is_string()) m_.notes.push_back(n.get<std::string>());
    hash_structure();
    return true;
  }

  void build_dataflow() {
    if (!j_.contains("graph") || !j_["graph"].is_object()) return;
    const json& g = j_["graph"];
    // Pointers into the JSON (value() would copy): the document outlives the translation.
    if (g.contains("values") && g["values"].is_array())
      for (const auto& v : g["values"]) values_[v.value("id", -1)] = &v;
    if (g.contains("ops") && g["ops"].is_array())
      for (const auto& o : g["ops"]) {
        ops_.push_back(&o);
        if (o.value("kind", "").rfind("prim::Call", 0) != 0 && o.contains("outputs"))
          for (auto& id : o["outputs"]) {
            op_outputs_.insert(id.get<int>());
            if (const json* v = value(id.get<int>()))
              if (v->contains("items"))
                for (auto& item : (*v)["items"]) op_outputs_.insert(item.get<int>());
          }
      }
    flow_ = ir::Dataflow();
    bool all_known = true;
    for (const auto& in : g.value("inputs", json::array())) {
      int id = in.value("id", -1);
      bool is_tensor_input = id >= 0 && values_.count(id) && values_[id]->value("kind", "") == "tensor";
      if (!is_tensor_input) continue;
      if (!in.contains("shape")) {
        all_known = false;
        flow_.notes.push_back("could not tell the shape of forward input '" + in.value("name", "") + "' from its first use");
        continue;
      }
      flow_.inputs.push_back(tensor(id));
      std::string s;
      for (auto d : in["shape"]) s += (s.empty() ? "" : ", ") + std::to_string(d.get<int64_t>());
      flow_.input_descriptions.push_back(in.value("name", "") + ": [" + s + "] " + in.value("dtype", "") + " (" +
                                         in.value("why", "") + ")");
    }
    // The root's forward is a call too (as the static tracer records it).
    size_t root_call = flow_.ops.size();
    {
      ir::Op call;
      call.kind = OpKind::Call;
      call.name = m_.model;
      call.inputs = flow_.inputs;
      call.module = 0;
      flow_.ops.push_back(call);
    }
    translate_range(0, ops_.size());
    for (const auto& o : g.value("outputs", json::array())) {
      int id = o.get<int>();
      if (is_plain_tensor(id)) flow_.outputs.push_back(tensor(id));
    }
    flow_.ops[root_call].outputs = flow_.outputs;
    flow_.ops[root_call].end = static_cast<int>(flow_.ops.size());
    for (const auto& n : g.value("notes", json::array())) flow_.notes.push_back(n.get<std::string>());
    for (auto& n : notes_) flow_.notes.push_back(n);
    flow_.error = g.value("error", "");
    if (flow_.error.empty() && !all_known) flow_.error = "input shapes unknown";
    flow_.traced = flow_.error.empty() && all_known;
  }

 private:
  // ---- values -----------------------------------------------------------------------------------

  const json* value(int id) const {
    auto it = values_.find(id);
    return it == values_.end() ? nullptr : it->second;
  }
  std::string kind_of(int id) const {
    const json* v = value(id);
    return v ? v->value("kind", "") : "";
  }
  bool is_tensor(int id) const { return kind_of(id) == "tensor"; }
  // A tensor that is data, not a 0-dim scalar computed from sizes.
  bool is_plain_tensor(int id) const {
    const json* v = value(id);
    if (!v || v->value("kind", "") != "tensor") return false;
    if (v->contains("parameter") || v->contains("buffer")) return true;
    const auto& s = (*v)["shape"];
    return !(s.is_array() && s.empty());
  }
  std::optional<int64_t> int_of(int id) const {
    const json* v = value(id);
    if (v && v->contains("value") && (*v)["value"].is_number_integer()) return (*v)["value"].get<int64_t>();
    if (v && v->contains("value") && (*v)["value"].is_boolean()) return (*v)["value"].get<bool>() ? 1 : 0;
    return std::nullopt;
  }
  std::optional<double> number_of(int id) const {
    const json* v = value(id);
    if (v && v->contains("value") && (*v)["value"].is_number()) return (*v)["value"].get<double>();
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> ints_of(int id) const {
    const json* v = value(id);
    if (!v) return std::nullopt;
    if (v->contains("value") && (*v)["value"].is_array()) {
      std::vector<int64_t> out;
      for (auto& x : (*v)["value"]) {
        if (!x.is_number_integer()) return std::nullopt;
        out.push_back(x.get<int64_t>());
      }
      return out;
    }
    if (auto i = int_of(id)) return std::vector<int64_t>{*i};
    return std::nullopt;
  }
  std::optional<std::string> str_of(int id) const {
    const json* v = value(id);
    if (v && v->contains("value") && (*v)["value"].is_string()) return (*v)["value"].get<std::string>();
    return std::nullopt;
  }
  std::vector<int> items_of(int id) const {
    const json* v = value(id);
    if (!v || !v->contains("items")) return {};
    return (*v)["items"].get<std::vector<int>>();
  }
  const ir::Shape* shape_of(int id) {
    int t = tensor(id);
    return t >= 0 && flow_.tensors[t].shape_known ? &flow_.tensors[t].shape : nullptr;
  }

  int tensor(int id) {
    auto it = tensor_of_.find(id);
    if (it != tensor_of_.end()) return it->second;
    const json* v = value(id);
    if (!v || v->value("kind", "") != "tensor") return -1;
    ir::TensorInfo info;
    if (v->contains("shape") && (*v)["shape"].is_array()) {
      info.shape = (*v)["shape"].get<std::vector<int64_t>>();
      info.shape_known = true;
    }
    if (auto o = shape_override_.find(id); o != shape_override_.end()) info.shape = o->second;
    info.dtype = v->value("dtype", "float32");
    if (v->contains("parameter")) {
      auto p = param_index_.find((*v)["parameter"].get<std::string>());
      if (p != param_index_.end()) info.parameter = p->second;
    }
    if (v->contains("buffer")) {
      auto b = buffer_index_.find((*v)["buffer"].get<std::string>());
      if (b != buffer_index_.end()) info.buffer = b->second;
    }
    info.data_dependent = v->value("data_dependent", false);
    // Every read of a parameter (or buffer) is the same tensor, as the static tracer has it (a tied
    // weight read by the embedding and the head); a value an op wrote is a new version.
    int key = info.parameter >= 0 ? info.parameter : info.buffer >= 0 ? -2 - info.buffer : -1;
    bool written = op_outputs_.count(id) > 0;
    if (key != -1 && !written) {
      auto shared = weight_tensor_.find(key);
      if (shared != weight_tensor_.end()) {
        tensor_of_[id] = shared->second;
        return shared->second;
      }
    }
    int t = static_cast<int>(flow_.tensors.size());
    flow_.tensors.push_back(std::move(info));
    tensor_of_[id] = t;
    if (key != -1 && !written) weight_tensor_[key] = t;
    return t;
  }
  int fresh(std::vector<int64_t> shape, const std::string& dtype) {
    ir::TensorInfo info;
    info.shape = std::move(shape);
    info.shape_known = true;
    info.dtype = dtype;
    flow_.tensors.push_back(std::move(info));
    return static_cast<int>(flow_.tensors.size()) - 1;
  }
  // Tensors in a value (lists and tuples flattened), scalars left out.
  void tensors_in(int id, std::vector<int>& out, int depth = 0) {
    if (is_plain_tensor(id)) {
      out.push_back(tensor(id));
      return;
    }
    if (depth > 2) return;
    for (int i : items_of(id)) tensors_in(i, out, depth + 1);
  }
  std::vector<int> tensors_of(const json& ids) {
    std::vector<int> out;
    for (auto& i : ids) tensors_in(i.get<int>(), out);
    return out;
  }

  // ---- ops --------------------------------------------------------------------------------------

  int module_of(const json& op) const {
    auto it = module_index_.find(op.value("module", ""));
    return it == module_index_.end() ? 0 : it->second;
  }

  // expand / repeat of `input` (shape from) to outs (shape to): a Repeat over the dims the input
  // lacks or has of another size, by whatever factor the shapes give.
  void repeat_to(const json& op, const std::string& base, int input, const std::vector<int>& outs, const ir::Shape& from,
                 const ir::Shape& to) {
    auto& o = emit(OpKind::Repeat, name_for(base), {input}, outs, op);
    for (size_t i = 0; i < to.size(); ++i) {
      size_t j = i + from.size() - to.size();
      if (i + from.size() < to.size() || from[j] != to[i]) o.dims.push_back(static_cast<int>(i));
    }
    o.sizes = {0};
  }

  ir::Op& emit(OpKind kind, std::string name, std::vector<int> inputs, std::vector<int> outputs, const json& src) {
    ir::Op op;
    op.kind = kind;
    op.name = std::move(name);
    op.inputs = std::move(inputs);
    op.outputs = std::move(outputs);
    op.module = module_of(src);
    if (src.contains("span")) op.span = span_from(src["span"]);
    flow_.ops.push_back(std::move(op));
    return flow_.ops.back();
  }

  void translate_range(size_t begin, size_t end) {
    size_t i = begin;
    while (i < end && i < ops_.size()) i = translate(i);
  }

  size_t end_of(size_t i) const {
    int e = ops_[i]->value("end", static_cast<int>(i) + 1);
    return std::max(static_cast<size_t>(e), i + 1);
  }

  size_t translate(size_t i) {
    const json& op = *ops_[i];
    const std::string kind = op.value("kind", "");
    if (kind == "prim::CallMethod") return translate_method(i);
    if (kind == "prim::CallFunction") {
      std::string fn = op.value("method", "");
      size_t end = end_of(i);
      if (fn.size() >= 28 && fn.compare(fn.size() - 28, 28, "scaled_dot_product_attention") == 0) {
        attention(op, "F.scaled_dot_product_attention");
        return end;
      }
      translate_range(i + 1, end);
      return end;
    }
    aten(op);
    return i + 1;
  }

  size_t translate_method(size_t i) {
    const json& op = *ops_[i];
    size_t end = end_of(i);
    int callee = module_of(op);
    const std::string method = op.value("method", "");
    if (method != "forward") {
      translate_range(i + 1, end);  // a helper method: its ops belong to the module
      return end;
    }
    if (infos_[callee].builtin) {
      // A built-in layer's ops carry its class name (as the static tracer records them); containers
      // only call their children.
      const std::string& cls = infos_[callee].class_name;
      bool container = cls == "Sequential" || cls == "ModuleList" || cls == "ModuleDict";
      builtin_.push_back(container ? std::string() : cls);
      translate_range(i + 1, end);
      builtin_.pop_back();
      return end;
    }
    if (translate_experts(i)) return end;
    size_t at = flow_.ops.size();
    emit(OpKind::Call, infos_[callee].class_name, tensors_of(op["inputs"]), {}, op);
    builtin_.push_back(std::string());
    translate_range(i + 1, end);
    builtin_.pop_back();
    flow_.ops[at].outputs = tensors_of(op["outputs"]);
    flow_.ops[at].end = static_cast<int>(flow_.ops.size());
    return end;
  }

  std::string name_for(const std::string& functional) const {
    return builtin_.empty() || builtin_.back().empty() ? functional : builtin_.back();
  }

  void unknown(const json& op, const std::string& why) {
    std::vector<int> ins = tensors_of(op["inputs"]);
    std::vector<int> outs = tensors_of(op["outputs"]);
    emit(OpKind::Unknown, name_for(op.value("kind", "")), ins, outs, op).detail = why;
  }

  bool linear(const json& op, int x_id, int w_id, int b_id, bool out_in, const std::string& name) {
    auto* xs = shape_of(x_id);
    auto* ws = shape_of(w_id);
    if (!xs || !ws || ws->size() != 2 || xs->empty()) return false;
    std::vector<int> ins{tensor(x_id), tensor(w_id)};
    bool bias = b_id >= 0 && is_plain_tensor(b_id);
    bool bias_1d = bias && shape_of(b_id) && shape_of(b_id)->size() == 1;
    if (bias) ins.push_back(tensor(b_id));
    auto& o = emit(OpKind::Contract, name, ins, tensors_of(op["outputs"]), op);
    o.equation = ir::linear_equation(xs->size(), out_in, bias, bias_1d);
    return true;
  }

  bool matmul(const json& op, int a_id, int b_id, const std::string& name, int bias_id = -1) {
    auto* as = shape_of(a_id);
    auto* bs = shape_of(b_id);
    if (!as || !bs || as->empty() || bs->empty()) return false;
    std::optional<std::string> eq = ir::matmul_equation(*as, *bs);
    if (!eq) return false;
    std::vector<int> ins{tensor(a_id), tensor(b_id)};
    if (bias_id >= 0 && is_plain_tensor(bias_id)) {
      ins.push_back(tensor(bias_id));
      auto* s = shape_of(bias_id);
      eq->insert(eq->find("->"), std::string(",") + (s && s->size() == 1 ? "n" : "mn"));
    }
    auto& o = emit(OpKind::Contract, name, ins, tensors_of(op["outputs"]), op);
    o.equation = *eq;
    return true;
  }

  bool einsum(const json& op, const std::string& equation, const std::vector<int>& operand_ids) {
    std::vector<const ir::Shape*> shapes;
    for (int id : operand_ids) {
      shapes.push_back(shape_of(id));
      if (!shapes.back()) return false;
    }
    std::vector<int> ins;
    for (int id : operand_ids) ins.push_back(tensor(id));
    emit(OpKind::Contract, name_for("einsum"), ins, tensors_of(op["outputs"]), op).equation = ir::einsum_equation(equation, shapes);
    return true;
  }

  bool conv(const json& op, const std::vector<int>& in) {
    // (input, weight, bias, stride, padding, dilation, groups) or _convolution's longer list.
    if (in.size() < 2) return false;
    auto* xs = shape_of(in[0]);
    auto* ws = shape_of(in[1]);
    auto* os = op["outputs"].empty() ? nullptr : shape_of(op["outputs"][0].get<int>());
    if (!xs || !ws || !os || xs->size() != ws->size() || xs->size() < 3 || xs->size() > 5) return false;
    std::string k = strip(op.value("kind", ""));
    int64_t groups = 1;
    size_t gi = (k == "_convolution" || k == "convolution") ? 8 : 6;
    if (gi < in.size())
      if (auto g = int_of(in[gi])) groups = *g;
    if ((k == "_convolution" || k == "convolution") && in.size() > 6 && int_of(in[6]).value_or(0)) return false;  // transposed
    size_t spatial = xs->size() - 2;
    static const char kSpatial[] = "HWD";
    static const char kKernel[] = "KLM";
    int64_t cin = (*xs)[1], cout = (*ws)[0];
    bool depthwise = groups > 1 && groups == cin && groups == cout;
    std::string sp(kSpatial, spatial), ker(kKernel, spatial);
    std::string eq;
    if (depthwise) eq = "ac" + sp + ",c1" + ker;
    else if (groups > 1) eq = "aC" + sp + ",NC" + ker;
    else eq = "ac" + sp + ",nc" + ker;
    std::string out_ch = depthwise ? "c" : groups > 1 ? "N" : "n";
    std::vector<int> ins{tensor(in[0]), tensor(in[1])};
    if (in.size() > 2 && is_plain_tensor(in[2])) {
      eq += "," + out_ch;
      ins.push_back(tensor(in[2]));
    }
    eq += "->a" + out_ch + sp;
    auto& o = emit(OpKind::Contract, name_for("F.conv" + std::to_string(spatial) + "d"), ins, tensors_of(op["outputs"]), op);
    o.equation = eq;
    o.groups = groups;
    return true;
  }

  void attention(const json& op, const std::string& name) {
    std::vector<int> ins = tensors_of(op["inputs"]);
    std::vector<int> outs = tensors_of(op["outputs"]);
    if (ins.size() < 3 || outs.empty()) {
      unknown(op, "attention operands unknown");
      return;
    }
    ins.resize(3);
    for (int t : ins)
      if (!flow_.tensors[t].shape_known) {
        unknown(op, "attention operand shapes unknown");
        return;
      }
    emit(OpKind::Attention, name, ins, {outs[0]}, op);
  }

  static int64_t norm_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

  void aten(const json& op) {
    std::string kind = op.value("kind", "");
    std::string k = strip(kind);
    std::vector<int> in = op["inputs"].get<std::vector<int>>();
    std::vector<int> out_ids = op["outputs"].get<std::vector<int>>();
    std::vector<int> outs = tensors_of(op["outputs"]);
    std::vector<int> tins = tensors_of(op["inputs"]);
    if (outs.empty()) return;
    bool inplace = !k.empty() && k.back() == '_' && k.rfind("__", 0) != 0;
    std::string base = inplace ? k.substr(0, k.size() - 1) : k;
    bool outs_known = std::all_of(outs.begin(), outs.end(), [&](int t) { return flow_.tensors[t].shape_known; });
    auto arg = [&](size_t i) { return i < in.size() ? in[i] : -1; };
    if (!outs_known) {
      unknown(op, op.value("error", kind + " output shape unknown"));
      return;
    }
    const auto* xs = tins.empty() ? nullptr : &flow_.tensors[tins[0]].shape;
    auto record = [&](OpKind kk, const std::string& fname) -> ir::Op& { return emit(kk, name_for(fname), tins, outs, op); };

    if (base == "linear") {
      if (!linear(op, arg(0), arg(1), arg(2), true, name_for("F.linear"))) unknown(op, "linear with unexpected shapes");
      return;
    }
    if (base == "matmul" || base == "mm" || base == "bmm") {
      if (!matmul(op, arg(0), arg(1), name_for(base))) unknown(op, "matmul operand shapes unknown");
      return;
    }
    if (base == "addmm") {
      if (!matmul(op, arg(1), arg(2), name_for("addmm"), arg(0))) unknown(op, "addmm operand shapes unknown");
      return;
    }
    if (base == "einsum") {
      auto eq = str_of(arg(0));
      std::vector<int> operands;
      for (int id : items_of(arg(1))) operands.push_back(id);
      if (!eq || !einsum(op, *eq, operands)) unknown(op, "einsum equation or operands unknown");
      return;
    }
    if (base == "embedding") {
      // aten::embedding(weight, indices): the IR's order is (ids, table).
      if (!is_plain_tensor(arg(0)) || !is_plain_tensor(arg(1))) return unknown(op, "embedding operands unknown");
      emit(OpKind::Embedding, name_for("F.embedding"), {tensor(arg(1)), tensor(arg(0))}, outs, op);
      return;
    }
    if (base == "conv1d" || base == "conv2d" || base == "conv3d" || base == "_convolution" || base == "convolution") {
      if (!conv(op, in)) unknown(op, "convolution with unexpected shapes (or transposed)");
      return;
    }
    if (base == "scaled_dot_product_attention" || base == "_scaled_dot_product_attention") {
      attention(op, name_for("F.scaled_dot_product_attention"));
      return;
    }
    if (base == "layer_norm" || base == "group_norm" || base == "batch_norm" || base == "instance_norm" ||
        base == "rms_norm" || base == "native_layer_norm") {
      if (!xs) return unknown(op, "norm input shape unknown");
      auto& o = emit(OpKind::Norm, name_for("F." + base), tins, {outs[0]}, op);
      int rank = static_cast<int>(xs->size());
      if (base == "group_norm") {
        o.groups = int_of(arg(1)).value_or(1);
        for (int d = 1; d < rank; ++d) o.dims.push_back(d);
      } else if (base == "instance_norm") {
        for (int d = 2; d < rank; ++d) o.dims.push_back(d);
      } else if (base == "batch_norm") {
      } else {
        size_t n = ints_of(arg(1)).value_or(std::vector<int64_t>{0}).size();
        for (int d = rank - static_cast<int>(n); d < rank; ++d) o.dims.push_back(d);
      }
      return;
    }
    if (base == "softmax" || base == "log_softmax" || base == "_softmax" || base == "_log_softmax") {
      if (!xs) return unknown(op, "softmax input shape unknown");
      auto& o = emit(OpKind::Softmax, name_for(base), {tins[0]}, {outs[0]}, op);
      o.dims = {static_cast<int>(norm_dim(int_of(arg(1)).value_or(-1), xs->size()))};
      return;
    }
    if (!xs) {
      if (kCreate.count(base)) {
        record(OpKind::Create, base);
        return;
      }
      return unknown(op, kind + " without a tensor operand");
    }
    const auto& os = flow_.tensors[outs[0]].shape;
    if (kReshape.count(base) || base == "expand_as" || base == "expand") {
      if (base == "expand" || base == "expand_as") {
        if (*xs == os) {
          record(OpKind::Reshape, base);
          return;
        }
        return repeat_to(op, base, tins[0], outs, *xs, os);
      }
      emit(OpKind::Reshape, name_for(base), {tins[0]}, outs, op);
      return;
    }
    if (base == "transpose" || base == "swapaxes" || base == "t" || base == "permute" || base == "movedim" ||
        base == "numpy_T") {
      std::vector<int> order(xs->size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
      if (base == "permute") {
        auto dims = ints_of(arg(1));
        if (!dims) return unknown(op, "permute dims unknown");
        for (size_t i = 0; i < dims->size() && i < order.size(); ++i) order[i] = static_cast<int>(norm_dim((*dims)[i], xs->size()));
      } else if (base == "t" || base == "numpy_T") {
        std::reverse(order.begin(), order.end());
      } else {
        auto a = int_of(arg(1)), b = int_of(arg(2));
        if (!a || !b) return unknown(op, "transpose dims unknown");
        int64_t da = norm_dim(*a, xs->size()), db = norm_dim(*b, xs->size());
        if (base == "movedim") {
          int v = order[da];
          order.erase(order.begin() + da);
          order.insert(order.begin() + db, v);
        } else {
          std::swap(order[da], order[db]);
        }
      }
      emit(OpKind::Permute, name_for(base), {tins[0]}, outs, op).dims = order;
      return;
    }
    if (base == "split" || base == "split_with_sizes" || base == "chunk" || base == "unbind" ||
        base == "tensor_split" || base == "unsafe_split" || base == "unsafe_chunk") {
      int64_t dim = norm_dim(int_of(arg(base == "unbind" ? 1 : 2)).value_or(0), xs->size());
      if (dim < 0 || dim >= static_cast<int64_t>(xs->size())) return unknown(op, "split dim out of range");
      auto& o = emit(OpKind::Split, name_for(base), {tins[0]}, outs, op);
      o.dims = {static_cast<int>(dim)};
      for (int t : outs) {
        const auto& s = flow_.tensors[t].shape;
        o.sizes.push_back(base == "unbind" ? 1 : (static_cast<size_t>(dim) < s.size() ? s[dim] : 1));
      }
      o.linear = base == "unbind";
      return;
    }
    if (base == "slice" || base == "select" || base == "narrow") {
      int64_t dim = norm_dim(int_of(arg(1)).value_or(0), xs->size());
      if (dim < 0 || dim >= static_cast<int64_t>(xs->size())) return unknown(op, "slice dim out of range");
      int64_t total = (*xs)[dim];
      int64_t kept = base == "select" ? 1 : (static_cast<size_t>(dim) < os.size() ? os[dim] : 1);
      if (kept == total && base != "select") {
        emit(OpKind::Reshape, name_for("[]"), {tins[0]}, outs, op);
        return;
      }
      if (base == "select") {
        if (total == 1) {
          emit(OpKind::Reshape, name_for("[]"), {tins[0]}, outs, op);
          return;
        }
        auto part = *xs;
        part[dim] = 1;
        int piece = fresh(part, flow_.tensors[tins[0]].dtype);
        auto& o = emit(OpKind::Split, name_for("[]"), {tins[0]}, {piece}, op);
        o.dims = {static_cast<int>(dim)};
        o.sizes = {1, total - 1};
        emit(OpKind::Reshape, name_for("[]"), {piece}, outs, op);
        return;
      }
      auto& o = emit(OpKind::Split, name_for("[]"), {tins[0]}, outs, op);
      o.dims = {static_cast<int>(dim)};
      o.sizes = {kept, total - kept};
      return;
    }
    if (base == "cat" || base == "concat" || base == "stack" || base == "concatenate") {
      auto parts = items_of(arg(0));
      std::vector<int> ts;
      for (int id : parts)
        if (is_plain_tensor(id)) ts.push_back(tensor(id));
      if (ts.empty()) return unknown(op, "cat operands unknown");
      bool stack = base == "stack";
      int64_t d = norm_dim(int_of(arg(1)).value_or(0), flow_.tensors[ts[0]].shape.size() + (stack ? 1 : 0));
      auto& o = emit(OpKind::Concat, name_for(base), ts, outs, op);
      o.dims = {static_cast<int>(d)};
      if (stack) o.sizes = {1};
      return;
    }
    if (base == "add" || base == "sub" || base == "rsub") {
      record(tins.size() >= 2 ? OpKind::Add : OpKind::Unary, base == "add" ? "+" : "-");
      return;
    }
    if (base == "mul" || base == "div") {
      bool both = tins.size() >= 2;
      record(both ? OpKind::Mul : OpKind::Scale, base == "mul" ? "*" : "/");
      return;
    }
    if (kReduceLinear.count(base) || kReduceOther.count(base)) {
      auto& o = emit(OpKind::Reduce, name_for(base), {tins[0]}, outs, op);
      o.linear = kReduceLinear.count(base) > 0;
      auto dims = in.size() > 1 ? ints_of(arg(1)) : std::nullopt;
      if (!dims || (dims->empty())) {
        if (in.size() > 1 && kind_of(arg(1)) != "none" && !dims) {
          // max(x, other): elementwise
          flow_.ops.back().kind = OpKind::Unary;
          return;
        }
        for (size_t i = 0; i < xs->size(); ++i) o.dims.push_back(static_cast<int>(i));
      } else {
        for (auto d : *dims) o.dims.push_back(static_cast<int>(norm_dim(d, xs->size())));
      }
      return;
    }
    if (base == "topk" || base == "argmax" || base == "argmin" || base == "sort" || base == "argsort") {
      int64_t dim = norm_dim(int_of(arg(base == "topk" ? 2 : 1)).value_or(-1), xs->size());
      int64_t kk = base == "topk" ? int_of(arg(1)).value_or(1) : (base == "sort" || base == "argsort") ? (*xs)[dim] : 1;
      auto& o = emit(OpKind::TopK, name_for(base), {tins[0]}, outs, op);
      o.dims = {static_cast<int>(dim)};
      o.sizes = {kk};
      return;
    }
    if (base == "repeat_interleave") {
      auto reps = int_of(arg(1));
      auto dim = int_of(arg(2));
      if (!reps || !dim) return unknown(op, "repeat_interleave arguments unknown");
      auto& o = emit(OpKind::Repeat, name_for(base), {tins[0]}, outs, op);
      o.dims = {static_cast<int>(norm_dim(*dim, xs->size()))};
      o.sizes = {*reps};
      return;
    }
    if (base == "repeat") {
      return repeat_to(op, base, tins[0], outs, *xs, os);
    }
    if (base == "index" || base == "gather" || base == "index_select" || base == "take_along_dim") {
      auto& o = emit(OpKind::Gather, name_for(base == "index" ? "[]" : base), tins, outs, op);
      o.dims = {base == "index" ? 0 : static_cast<int>(norm_dim(int_of(arg(1)).value_or(0), xs->size()))};
      for (int t : outs) flow_.tensors[t].data_dependent = true;
      return;
    }
    if (base == "index_put" || base == "index_add" || base == "scatter_add" || base == "scatter" ||
        base == "index_copy" || base == "masked_scatter" || base == "scatter_reduce") {
      auto& o = emit(OpKind::Accumulate, name_for(k), tins, outs, op);
      o.dims = {base == "index_put" ? 0 : static_cast<int>(norm_dim(int_of(arg(1)).value_or(0), xs->size()))};
      o.linear = base.find("add") != std::string::npos || base == "index_put";
      return;
    }
    if (base == "where" && tins.size() == 1 && out_ids.size() == 1 && !items_of(out_ids[0]).empty()) {
      auto& o = record(OpKind::Create, "where");
      for (int t : o.outputs) flow_.tensors[t].data_dependent = true;
      return;
    }
    if (base == "nonzero") {
      record(OpKind::Create, base);
      return;
    }
    if (kCreate.count(base)) {
      record(OpKind::Create, base);
      return;
    }
    if (base.rfind("upsample", 0) == 0 || base == "interpolate" || base == "pad" || base == "constant_pad_nd" ||
        base == "reflection_pad2d" || base == "replication_pad2d") {
      emit(OpKind::Interpolate, name_for(base.rfind("upsample", 0) == 0 ? "interpolate" : base), {tins[0]}, outs, op);
      return;
    }
    if (kScale.count(base)) {
      record(OpKind::Scale, base);
      return;
    }
    if (kUnary.count(base)) {
      record(OpKind::Unary, base);
      return;
    }
    unknown(op, kind + " is not modelled by the planner");
  }

  // ---- routed experts ---------------------------------------------------------------------------

  // The subtree's parameter shapes and classes: identical experts have equal signatures.
  uint64_t subtree_signature(int module) const {
    const auto& mod = m_.modules[module];
    uint64_t h = std::hash<std::string>()(mod.class_name);
    for (int p : mod.parameters) h = mix_tensor(h, m_.parameters[p].name, m_.parameters[p].shape);
    for (size_t c = 0; c < mod.children.size(); ++c) {
      h = mix(h, std::hash<std::string>()(mod.child_keys[c]));
      h = mix(h, subtree_signature(mod.children[c]));
    }
    return h;
  }

  // A module with a ModuleList of identical experts and a router that gives one logit per
  // expert: summarised as the static front end does (router, top-k, one expert's body on its share
  // of the tokens; balanced routing), whatever its routing loop looks like.
  bool translate_experts(size_t i) {
    const json& op = *ops_[i];
    int moe = module_of(op);
    std::vector<int> xs_in = tensors_of(op["inputs"]);
    if (xs_in.empty() || !flow_.tensors[xs_in[0]].shape_known || flow_.tensors[xs_in[0]].shape.size() < 2) return false;
    const auto x_shape = flow_.tensors[xs_in[0]].shape;
    int64_t hidden = x_shape.back();
    int experts = -1, router = -1;
    int64_t count = 0;
    for (int c : m_.modules[moe].children) {
      const auto& list = m_.modules[c];
      if (list.class_name != "ModuleList" || list.children.size() < 2) continue;
      uint64_t sig = subtree_signature(list.children[0]);
      bool same = true;
      for (int member : list.children) same &= subtree_signature(member) == sig;
      if (same) {
        experts = c;
        count = static_cast<int64_t>(list.children.size());
      }
    }
    if (experts < 0) return false;
    for (int c : m_.modules[moe].children) {
      if (c == experts) continue;
      for (int p : m_.modules[c].parameters) {
        const auto& s = m_.parameters[p].shape;
        if (s.size() == 2 && s[0] == count && s[1] == hidden) router = c;
      }
    }
    if (router < 0) return false;
    size_t end = end_of(i);
    // The router's call, the top-k and expert 0's call inside the body.
    size_t router_at = 0, expert_at = 0;
    int64_t top_k = 0;
    const std::string expert0 = m_.modules[m_.modules[experts].children[0]].name;
    for (size_t j = i + 1; j < end; ++j) {
      const json& o = *ops_[j];
      std::string k = o.value("kind", "");
      if (!router_at && k == "prim::CallMethod" && module_of(o) == router) router_at = j;
      if (!expert_at && k == "prim::CallMethod" && o.value("module", "") == expert0 && o.value("method", "") == "forward") expert_at = j;
      if (!top_k && k == "aten::topk" && o["inputs"].size() > 1) top_k = int_of(o["inputs"][1].get<int>()).value_or(0);
    }
    if (!router_at || !expert_at) return false;
    bool guessed_k = top_k <= 0;
    if (guessed_k) top_k = 2;
    size_t at = flow_.ops.size();
    emit(OpKind::Call, infos_[moe].class_name, {xs_in[0]}, {}, op);
    size_t router_end = translate(router_at);
    (void)router_end;
    std::vector<int> logits = tensors_of((*ops_[router_at])["outputs"]);
    int probs = xs_in[0];
    if (!logits.empty() && flow_.tensors[logits[0]].shape_known) {
      auto s = flow_.tensors[logits[0]].shape;
      s.back() = top_k;
      int weights = fresh(s, "float32");
      int chosen = fresh(s, "int64");
      auto& t = emit(OpKind::TopK, "topk", {logits[0]}, {weights, chosen}, op);
      t.dims = {static_cast<int>(s.size()) - 1};
      t.sizes = {top_k};
      probs = weights;
    }
    int64_t tokens = 1;
    for (size_t d = 0; d + 1 < x_shape.size(); ++d) tokens *= x_shape[d];
    int64_t share = std::max<int64_t>(1, (tokens * top_k + count - 1) / count);
    // Expert 0's tensors hold the routed tokens' estimate in their leading dims: [share, ...].
    const json& eop = *ops_[expert_at];
    std::vector<int> routed_ids;
    for (auto& v : eop["inputs"])
      if (is_plain_tensor(v.get<int>())) routed_ids.push_back(v.get<int>());
    if (routed_ids.empty()) return false;
    std::vector<int64_t> routed_shape;
    if (const json* rv = value(routed_ids[0]); rv && (*rv)["shape"].is_array()) routed_shape = (*rv)["shape"].get<std::vector<int64_t>>();
    if (routed_shape.empty() || routed_shape.back() != hidden) return false;
    std::vector<int64_t> prefix(routed_shape.begin(), routed_shape.end() - 1);
    for (size_t j = expert_at; j < end_of(expert_at); ++j)
      for (const char* key : {"inputs", "outputs"})
        for (auto& v : (*ops_[j])[key]) {
          std::vector<int> ids{v.get<int>()};
          for (int item : items_of(v.get<int>())) ids.push_back(item);
          for (int id : ids) {
            const json* vj = value(id);
            if (!vj || vj->value("kind", "") != "tensor" || vj->contains("parameter") || !(*vj)["shape"].is_array()) continue;
            auto s = (*vj)["shape"].get<std::vector<int64_t>>();
            if (s.size() < prefix.size() || !std::equal(prefix.begin(), prefix.end(), s.begin())) continue;
            std::vector<int64_t> n{share};
            n.insert(n.end(), s.begin() + static_cast<long>(prefix.size()), s.end());
            shape_override_[id] = n;
          }
        }
    size_t experts_at = flow_.ops.size();
    {
      auto& e = emit(OpKind::Experts, "experts", {xs_in[0], probs}, {}, op);
      e.module = experts;
      e.sizes = {count, top_k, tokens, share};
    }
    int routed = tensor(routed_ids[0]);
    translate(expert_at);
    std::vector<int> outs = tensors_of(op["outputs"]);
    flow_.ops[experts_at].outputs = outs;
    flow_.ops[experts_at].end = static_cast<int>(flow_.ops.size());
    flow_.ops[experts_at].dims = {routed};
    flow_.ops[at].outputs = outs;
    flow_.ops[at].end = static_cast<int>(flow_.ops.size());
    std::string where = m_.modules[moe].name;
    notes_.push_back(where + ": routed experts recognised (" + std::to_string(count) + " experts, top-" + std::to_string(top_k) +
                     (guessed_k ? " assumed" : "") + ", balanced routing assumed); its forward's routing code is summarised");
    return true;
  }

  void hash_structure() {
    std::vector<char> done(m_.modules.size(), 0);
    std::function<uint64_t(int)> hash = [&](int i) -> uint64_t {
      auto& mod = m_.modules[i];
      if (done[i]) return mod.structure_hash;
      done[i] = 1;
      uint64_t h = std::hash<std::string>()(mod.class_name);
      for (int p : mod.parameters) h = mix_tensor(h, m_.parameters[p].name, m_.parameters[p].shape);
      for (int b : mod.buffers) h = mix_tensor(h, m_.buffers[b].name, m_.buffers[b].shape);
      for (size_t c = 0; c < mod.children.size(); ++c) {
        h = mix(h, std::hash<std::string>()(mod.child_keys[c]));
        h = mix(h, hash(mod.children[c]));
      }
      mod.structure_hash = h;
      return h;
    };
    for (size_t i = m_.modules.size(); i-- > 0;) hash(static_cast<int>(i));
  }

  const json& j_;
  ExactIR& out_;
  ir::ModelIR& m_;
  ir::Dataflow& flow_;
  std::vector<ModuleInfo> infos_;
  std::unordered_map<std::string, int> module_index_, param_index_, buffer_index_;
  std::unordered_map<int, const json*> values_;
  std::vector<const json*> ops_;
  std::unordered_map<int, int> tensor_of_;
  std::unordered_map<int, int> weight_tensor_;  // parameter p (or buffer b as -2 - b) -> its tensor
  std::set<int> op_outputs_;
  std::unordered_map<int, std::vector<int64_t>> shape_override_;
  std::vector<std::string> builtin_;
  std::vector<std::string> notes_;
};

}  // namespace

ExactIR exact_ir_from_json(const json& graph) {
  ExactIR out;
  Translator t(graph, out);
  if (!t.build_tree()) return out;
  t.build_dataflow();
  out.ok = true;
  return out;
}

void adopt_static_spans(ir::ModelIR& exact, const ir::ModelIR& static_model) {
  std::unordered_map<std::string, const ir::Module*> modules;
  for (const auto& m : static_model.modules) modules[m.name] = &m;
  std::unordered_map<std::string, const ir::Parameter*> params;
  for (const auto& p : static_model.parameters) params[p.name] = &p;
  std::unordered_map<std::string, const ir::Buffer*> buffers;
  for (const auto& b : static_model.buffers) buffers[b.name] = &b;
  // A module the static IR lacks takes its nearest known ancestor's span.
  auto module_span = [&](std::string name) {
    while (true) {
      auto it = modules.find(name);
      if (it != modules.end() && it->second->span.valid()) return it->second->span;
      if (name.empty()) return ir::Span{};
      auto dot = name.rfind('.');
      name = dot == std::string::npos ? "" : name.substr(0, dot);
    }
  };
  for (auto& m : exact.modules) m.span = module_span(m.name);
  auto owner_of = [](const std::string& name) {
    auto dot = name.rfind('.');
    return dot == std::string::npos ? std::string() : name.substr(0, dot);
  };
  for (auto& p : exact.parameters) {
    auto it = params.find(p.name);
    p.span = it != params.end() && it->second->span.valid() ? it->second->span : module_span(owner_of(p.name));
  }
  for (auto& b : exact.buffers) {
    auto it = buffers.find(b.name);
    b.span = it != buffers.end() && it->second->span.valid() ? it->second->span : module_span(owner_of(b.name));
  }
  if (exact.root_expression.empty()) exact.root_expression = static_model.root_expression;
  for (auto& op : exact.dataflow.ops)
    if (!op.span.valid() && op.module >= 0 && op.module < static_cast<int>(exact.modules.size()))
      op.span = exact.modules[op.module].span;
}

std::vector<BlindSpot> compare_with_static(const ir::ModelIR& exact, const ir::ModelIR& static_model) {
  std::vector<BlindSpot> out;
  std::unordered_map<std::string, const ir::Parameter*> sparams;
  for (const auto& p : static_model.parameters) sparams[p.name] = &p;
  std::unordered_map<std::string, int> smodules;
  for (size_t i = 0; i < static_model.modules.size(); ++i) smodules[static_model.modules[i].name] = static_cast<int>(i);
  auto shape_text = [](const std::vector<int64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
  };
  // Parameters.
  int missing = 0, wrong = 0;
  for (const auto& p : exact.parameters) {
    auto it = sparams.find(p.name);
    if (it == sparams.end()) {
      if (missing++ < 5)
        out.push_back({"the static analysis did not find parameter " + p.name + " " + shape_text(p.shape) +
                           " (the exact graph has it)", p.span});
    } else if (!it->second->shape_known || it->second->shape != p.shape) {
      if (wrong++ < 5)
        out.push_back({"the static analysis gave " + p.name + " shape " +
                           (it->second->shape_known ? shape_text(it->second->shape) : std::string("unknown")) +
                           "; the exact graph has " + shape_text(p.shape),
                       it->second->span.valid() ? it->second->span : p.span});
    }
  }
  ir::Span root_span = static_model.modules.empty() ? ir::Span{} : static_model.modules[0].span;
  if (missing > 5) out.push_back({std::to_string(missing - 5) + " more parameters the static analysis did not find", root_span});
  if (wrong > 5) out.push_back({std::to_string(wrong - 5) + " more parameter shapes the static analysis got wrong", root_span});
  // The forward: whether the static trace got through, ops it could not follow.
  const auto& sflow = static_model.dataflow;
  if (!sflow.traced) {
    out.push_back({"the static analysis could not trace forward()" + (sflow.error.empty() ? std::string() : " (" + sflow.error + ")") +
                       "; the exact graph did", static_model.modules.empty() ? ir::Span{} : static_model.modules[0].span});
  }
  // Per module: contractions and attention the static trace saw against the exact graph, and its
  // unknown ops (each place once).
  auto count_kinds = [](const ir::ModelIR& m) {
    std::map<std::string, std::map<OpKind, int>> counts;
    for (const auto& op : m.dataflow.ops) {
      if (op.kind != OpKind::Contract && op.kind != OpKind::Attention && op.kind != OpKind::Embedding &&
          op.kind != OpKind::Norm && op.kind != OpKind::Softmax)
        continue;
      if (op.module < 0 || op.module >= static_cast<int>(m.modules.size())) continue;
      // Attribute to the innermost non-builtin module: a Linear's contraction belongs to its parent's count.
      counts[m.modules[op.module].name][op.kind]++;
    }
    return counts;
  };
  auto sc = count_kinds(static_model), ec = count_kinds(exact);
  std::set<std::string> seen;
  for (const auto& op : sflow.ops) {
    if (op.kind != OpKind::Unknown) continue;
    std::string key = std::to_string(op.span.line) + ":" + std::to_string(op.span.column);
    if (!seen.insert(key).second) continue;
    std::string module = op.module >= 0 && op.module < static_cast<int>(static_model.modules.size())
                             ? static_model.modules[op.module].name
                             : "";
    // What the exact graph has at that module.
    std::string shows;
    auto eit = ec.find(module);
    if (eit != ec.end())
      for (auto& [kind, n] : eit->second) shows += (shows.empty() ? "" : ", ") + std::to_string(n) + " " + ir::op_kind_name(kind);
    out.push_back({"the static analysis could not follow '" + op.name + "' (" + op.detail + ")" +
                       (shows.empty() ? std::string() : "; the exact graph shows " + shows + " in " + (module.empty() ? "the root" : module)),
                   op.span});
    if (out.size() > 40) break;
  }
  std::set<std::string> reported;
  for (const auto& [module, kinds] : ec) {
    auto sit = sc.find(module);
    for (auto& [kind, n] : kinds) {
      int s = sit == sc.end() ? 0 : (sit->second.count(kind) ? sit->second.at(kind) : 0);
      if (s == n) continue;
      // Repeated blocks: report each pattern once.
      std::string pattern;
      for (size_t i = 0; i < module.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(module[i])) && (i == 0 || module[i - 1] == '.')) {
          while (i < module.size() && std::isdigit(static_cast<unsigned char>(module[i]))) ++i;
          pattern += "*";
          --i;
        } else {
          pattern += module[i];
        }
      }
      if (!reported.insert(pattern + "/" + ir::op_kind_name(kind)).second) continue;
      ir::Span span;
      if (auto mi = smodules.find(module); mi != smodules.end()) span = static_model.modules[mi->second].span;
      if (!span.valid())
        for (const auto& m : exact.modules)
          if (m.name == module) span = m.span;  // the nearest module the static IR knows
      out.push_back({"in " + (module.empty() ? std::string("the root") : pattern) + " the static trace saw " + std::to_string(s) + " " +
                         ir::op_kind_name(kind) + " op(s), the exact graph " + std::to_string(n),
                     span});
    }
  }
  return out;
}

}  // namespace shardlens::torchgraph
