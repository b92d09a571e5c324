#include "torch/graph_evaluator.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace shardlens::torchgraph {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;
namespace prim = c10::prim;
namespace attr = c10::attr;

struct StopEvaluation {
  std::string why;
};

struct Slot {
  c10::IValue v;
  int id = -1;
  bool known = true;
};

// Tensor ops whose output has the shape of their first tensor input (or of the broadcast of all
// tensor inputs): what a formula gives when an op has no meta kernel or an input is unknown.
const std::set<std::string> kSameShape = {
    "relu", "relu_", "gelu", "silu", "silu_", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "pow", "abs", "sin",
    "cos", "square", "reciprocal", "softplus", "mish", "elu", "leaky_relu", "hardswish", "hardsigmoid", "hardtanh",
    "relu6", "erf", "clamp", "clamp_min", "clamp_max", "masked_fill", "masked_fill_", "tril", "triu", "neg", "sign",
    "floor", "ceil", "round", "dropout", "feature_dropout", "alpha_dropout", "contiguous", "clone", "detach", "to",
    "type_as", "float", "half", "bfloat16", "softmax", "log_softmax", "_softmax", "layer_norm", "group_norm",
    "batch_norm", "instance_norm", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "where", "copy_",
    "fill_", "zero_", "normal_", "uniform_", "logical_not", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and",
    "bitwise_or", "logical_and", "logical_or", "cumsum", "flip", "roll", "nan_to_num", "expm1", "log1p", "real",
    "view_as_real_copy", "index_put_", "index_put", "index_add_", "index_add", "scatter_add_", "scatter_add",
    "scatter_", "scatter", "index_copy_", "masked_scatter_", "upsample_nearest2d"};

std::string short_kind(const Node* n) {
  std::string s = n->kind().toUnqualString();
  return s;
}

bool is_tensor_type(const c10::TypePtr& t) {
  if (!t) return false;
  if (t->kind() == c10::TypeKind::TensorType) return true;
  if (auto o = t->cast<c10::OptionalType>()) return is_tensor_type(o->getElementType());
  return false;
}

bool is_tensor_container(const c10::TypePtr& t) {
  if (!t) return false;
  if (auto l = t->cast<c10::ListType>()) return is_tensor_type(l->getElementType());
  if (auto tt = t->cast<c10::TupleType>()) {
    for (auto& e : tt->elements())
      if (is_tensor_type(e) || is_tensor_container(e)) return true;
  }
  return false;
}

std::vector<int64_t> broadcast(const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      size_t j = rank - s.size() + i;
      if (s[i] != 1) out[j] = s[i];
    }
  return out;
}

class Evaluator {
 public:
  Evaluator(LoadedModel& model, const EvalOptions& options, ExactGraph& out, bool probing)
      : model_(model), options_(options), out_(out), probing_(probing) {
    script_ = model.source();
  }

  // Probing: inputs unknown; records which op first reads each input (to infer its shape).
  std::vector<InputSpec> inferred;
  NumericHooks* hooks = nullptr;  // set: a numeric run (real tensors, no formulas, no records)
  std::vector<c10::IValue> results;  // a numeric run's outputs

  void run(const std::vector<Slot>& args) {
    torch::jit::Method method = model_.root.get_method("forward");
    auto& fn = torch::jit::toGraphFunction(method.function());
    std::shared_ptr<Graph> graph = fn.graph();
    std::vector<Slot> in;
    Slot self;
    self.v = model_.root._ivalue();
    self.id = record(self.v, true, nullptr);
    in.push_back(self);
    for (auto& a : args) in.push_back(a);
    for (size_t i = 1; i < in.size(); ++i) out_.input_ids.push_back(in[i].id);
    input_taint_.clear();
    for (size_t i = 1; i < in.size(); ++i) taint_[in[i].id] = static_cast<int>(i - 1);
    std::vector<Slot> result;
    try {
      result = call_graph(*graph, in);
    } catch (const StopEvaluation& stop) {
      if (!stop.why.empty()) out_.error = stop.why;
      return;
    }
    for (auto& r : result) {
      if (hooks) results.push_back(r.v);
      else collect_outputs(r.id);
    }
  }

  Slot make_input(const c10::IValue& v, bool known, const c10::TypePtr& type) { return fresh(v, known, type); }

  std::unordered_map<int, int> taint_;         // value id -> forward input index
  std::vector<char> decided_;                  // probing: input index -> shape found

 private:
  using Env = std::unordered_map<const Value*, Slot>;

  // ---- values ---------------------------------------------------------------------------------

  // The kind and value of a scalar or a list of scalars; false for any other value.
  static bool record_scalar(const c10::IValue& v, ValueRecord& r) {
    auto set = [&r](const char* kind, nlohmann::json value) {
      r.kind = kind;
      r.value = std::move(value);
      return true;
    };
    if (v.isInt()) return set("int", v.toInt());
    if (v.isDouble()) {
      double d = v.toDouble();
      return set("float", std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(d > 0 ? "inf" : d < 0 ? "-inf" : "nan"));
    }
    if (v.isBool()) return set("bool", v.toBool());
    if (v.isString()) return set("str", v.toStringRef());
    if (v.isNone()) {
      r.kind = "none";
      return true;
    }
    if (v.isDevice()) return set("device", v.toDevice().str());
    if (v.isIntList()) return set("list", v.toIntVector());
    if (v.isDoubleList()) return set("list", v.toDoubleVector());
    if (v.isBoolList()) {
      std::vector<bool> b;
      for (bool x : v.toBoolList()) b.push_back(x);
      return set("list", b);
    }
    return false;
  }

  int record(const c10::IValue& v, bool known, const c10::TypePtr& type) {
    ValueRecord r;
    if (!known) {
      r.kind = type && (is_tensor_type(type)) ? "tensor" : type && type->cast<c10::ListType>() ? "list" : "unknown";
      if (type && r.kind == "tensor")
        if (auto tt = type->cast<c10::TensorType>(); tt && tt->scalarType()) r.dtype = dtype_name(*tt->scalarType());
      out_.values.push_back(std::move(r));
      return static_cast<int>(out_.values.size()) - 1;
    }
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      r.kind = "tensor";
      if (t.defined()) {
        r.shape = t.sizes().vec();
        r.shape_known = true;
        r.dtype = dtype_name(t.scalar_type());
        const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
        if (auto o = original_.find(impl); o != original_.end()) impl = o->second;
        if (auto p = model_.parameter_index.find(impl); p != model_.parameter_index.end()) r.parameter = p->second;
        if (auto b = model_.buffer_index.find(impl); b != model_.buffer_index.end()) r.buffer = b->second;
      } else {
        r.kind = "none";
      }
    } else if (record_scalar(v, r)) {
      // int, float, bool, str, None, device, and lists of numbers or bools
    } else if (v.isList() || v.isTuple()) {
      r.kind = v.isList() ? "list" : "tuple";
      std::vector<c10::IValue> elems;
      if (v.isList())
        for (const auto& e : v.toListRef()) elems.push_back(e);
      else
        for (const auto& e : v.toTupleRef().elements()) elems.push_back(e);
      int self_index = static_cast<int>(out_.values.size());
      out_.values.push_back(r);
      std::vector<int> items;
      for (auto& e : elems) items.push_back(record(e, true, nullptr));
      out_.values[self_index].items = items;
      return self_index;
    } else if (v.isObject()) {
      r.kind = "object";
    } else {
      r.kind = "other";
      // dtypes, layouts and memory formats are plain ints in the IR's constants
    }
    out_.values.push_back(std::move(r));
    return static_cast<int>(out_.values.size()) - 1;
  }

  Slot fresh(const c10::IValue& v, bool known, const c10::TypePtr& type) {
    Slot s;
    s.v = v;
    s.known = known;
    s.id = record(v, known, type);
    return s;
  }

  void collect_outputs(int id) {
    const auto& r = out_.values[id];
    if (r.kind == "tensor") out_.output_ids.push_back(id);
    else
      for (int i : r.items) collect_outputs(i);
  }

  // Parameters and buffers are evaluated as meta copies (real weights stay untouched); the copy
  // remembers which tensor it stands for.
  c10::IValue as_meta(const c10::IValue& v) {
    if (!v.isTensor()) return v;
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || t.is_meta()) return v;
    const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
    if (!model_.parameter_index.count(impl) && !model_.buffer_index.count(impl)) return v;
    auto it = meta_copies_.find(impl);
    if (it == meta_copies_.end()) {
      at::Tensor m = at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
      original_[m.unsafeGetTensorImpl()] = impl;
      it = meta_copies_.emplace(impl, m).first;
    }
    return it->second;
  }

  // ---- source spans -----------------------------------------------------------------------------

  SourceSpan span_of(const torch::jit::SourceRange& r0) {
    SourceSpan s;
    auto orig = r0.findSourceRangeThatGenerated();
    const torch::jit::SourceRange& r = orig ? *orig : r0;
    const auto& src = r.source();
    if (!src || !src->filename()) return s;
    s.file = *src->filename();
    if (r.end() < r.start() || r.start() >= src->size()) return s;
    size_t l0 = src->lineno_for_offset(r.start());
    size_t end = r.end() > r.start() ? r.end() - 1 : r.start();
    size_t l1 = src->lineno_for_offset(std::min(end, src->size() - 1));
    int64_t indent = dedent_of(src.get());
    s.line = static_cast<uint32_t>(src->lineno_to_source_lineno(l0));
    s.end_line = static_cast<uint32_t>(src->lineno_to_source_lineno(l1));
    s.column = static_cast<uint32_t>(r.start() - src->offset_for_line(l0) + indent);
    s.end_column = static_cast<uint32_t>(end + 1 - src->offset_for_line(l1) + indent);
    return s;
  }

  // TorchScript dedents a method's source before parsing it: the columns it records are short by
  // the method's indentation, which the original file shows.
  int64_t dedent_of(torch::jit::Source* src) {
    auto it = dedent_.find(src);
    if (it != dedent_.end()) return it->second;
    int64_t delta = 0;
    const auto& fname = *src->filename();
    auto& lines = file_lines(fname);
    size_t lineno = src->lineno_to_source_lineno(0);
    if (lineno >= 1 && lineno <= lines.size() && src->num_lines() > 0) {
      std::string first = src->get_line(0).str();
      while (!first.empty() && (first.back() == '\n' || first.back() == '\r')) first.pop_back();
      const std::string& file_line = lines[lineno - 1];
      if (!first.empty() && file_line.size() >= first.size() &&
          file_line.compare(file_line.size() - first.size(), first.size(), first) == 0)
        delta = static_cast<int64_t>(file_line.size() - first.size());
    }
    dedent_[src] = delta;
    return delta;
  }

  const std::vector<std::string>& file_lines(const std::string& path) {
    auto it = files_.find(path);
    if (it != files_.end()) return it->second;
    std::vector<std::string> lines;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
    return files_[path] = std::move(lines);
  }

  void place(OpRecord& op, const Node* n) {
    SourceSpan own = span_of(n->sourceRange());
    if (own.valid() && !script_.empty() && own.file == script_) {
      op.span = own;
      return;
    }
    if (own.valid()) op.origin = own;
    for (auto it = call_sites_.rbegin(); it != call_sites_.rend(); ++it)
      if (it->valid() && it->file == script_) {
        op.span = *it;
        return;
      }
    if (script_.empty() && own.valid()) op.span = own;
  }

  // ---- evaluation ---------------------------------------------------------------------------------

  std::vector<Slot> call_graph(Graph& graph, const std::vector<Slot>& args) {
    if (++depth_ > 200) throw StopEvaluation{"calls nested more than 200 deep"};
    Env env;
    auto inputs = graph.inputs();
    for (size_t i = 0; i < inputs.size() && i < args.size(); ++i) env[inputs[i]] = args[i];
    eval_block(graph.block(), env);
    std::vector<Slot> out;
    for (auto* v : graph.outputs()) out.push_back(lookup(env, v));
    --depth_;
    return out;
  }

  Slot lookup(Env& env, const Value* v) {
    auto it = env.find(v);
    if (it != env.end()) return it->second;
    // A constant or a value defined where we did not evaluate: constants evaluate on demand.
    if (v->node()->kind() == prim::Constant) {
      auto iv = torch::jit::toIValue(v);
      Slot s = fresh(iv ? *iv : c10::IValue(), iv.has_value(), v->type());
      env[v] = s;
      return s;
    }
    Slot s = fresh(c10::IValue(), false, v->type());
    env[v] = s;
    return s;
  }

  void eval_block(Block* block, Env& env) {
    for (Node* n : block->nodes()) eval_node(n, env);
  }

  void budget() {
    if (++steps_ > options_.max_ops) throw StopEvaluation{"evaluation budget exhausted (a loop over data?)"};
  }

  static bool raises_only(Block* b) {
    bool raise = false;
    for (Node* n : b->nodes()) {
      if (n->kind() == prim::RaiseException) raise = true;
      else if (n->kind() != prim::Constant && n->kind() != c10::aten::format && n->kind() != c10::aten::str &&
               n->kind() != prim::Uninitialized)
        return false;
    }
    return raise;
  }

  void eval_node(Node* n, Env& env) {
    budget();
    auto kind = n->kind();
    if (kind == prim::Constant) {
      auto iv = torch::jit::toIValue(n->output());
      env[n->output()] = fresh(iv ? *iv : c10::IValue(), iv.has_value(), n->output()->type());
      return;
    }
    std::vector<Slot> in;
    for (auto* v : n->inputs()) in.push_back(lookup(env, v));
    if (kind == prim::GetAttr) {
      const std::string& name = n->s(attr::name);
      if (in[0].known && in[0].v.isObject()) {
        auto obj = in[0].v.toObject();
        c10::IValue v = obj->getAttr(name);
        env[n->output()] = fresh(hooks ? numeric_weight(v) : as_meta(v), true, n->output()->type());
      } else {
        env[n->output()] = fresh(c10::IValue(), false, n->output()->type());
      }
      return;
    }
    if (kind == prim::SetAttr) {
      // A numeric run shares the module objects between devices: assignments would leak across.
      if (hooks) throw StopEvaluation{"forward() assigns module attribute '" + n->s(attr::name) + "' (" + where(n) + ")"};
      if (in[0].known && in[0].v.isObject() && in[1].known) in[0].v.toObject()->setAttr(n->s(attr::name), in[1].v);
      return;
    }
    if (kind == prim::If) {
      eval_if(n, in, env);
      return;
    }
    if (kind == prim::Loop) {
      eval_loop(n, in, env);
      return;
    }
    if (kind == prim::CallMethod || kind == prim::CallFunction) {
      eval_call(n, in, env);
      return;
    }
    if (kind == prim::RaiseException) {
      std::string msg = in.empty() || !in[0].known || !in[0].v.isString() ? "an exception" : in[0].v.toStringRef();
      auto nl = msg.find('\n');
      if (nl != std::string::npos) msg = msg.substr(0, nl);
      SourceSpan where = span_of(n->sourceRange());
      throw StopEvaluation{"forward() raised: " + msg +
                           (where.valid() ? " (" + where.file + ":" + std::to_string(where.line) + ")" : "")};
    }
    if (kind == prim::Uninitialized) {
      env[n->output()] = fresh(c10::IValue(), false, n->output()->type());
      return;
    }
    if (kind == prim::ListUnpack || kind == prim::TupleUnpack) {
      const auto& items = in[0].id >= 0 ? out_.values[in[0].id].items : std::vector<int>{};
      std::vector<c10::IValue> elems;
      if (in[0].known && in[0].v.isList())
        for (const auto& e : in[0].v.toListRef()) elems.push_back(e);
      else if (in[0].known && in[0].v.isTuple())
        for (const auto& e : in[0].v.toTupleRef().elements()) elems.push_back(e);
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        Slot s;
        bool have = i < elems.size();
        s.v = have ? elems[i] : c10::IValue();
        s.known = have;
        s.id = i < items.size() && items.size() == n->outputs().size() ? items[i] : record(s.v, s.known, n->outputs()[i]->type());
        if (taint_.count(in[0].id)) taint_[s.id] = taint_[in[0].id];
        env[n->outputs()[i]] = s;
      }
      return;
    }
    if (kind == prim::ListConstruct || kind == prim::TupleConstruct || kind == prim::DictConstruct) {
      eval_construct(n, in, env);
      return;
    }
    if (kind == prim::unchecked_cast) {
      env[n->output()] = in[0];
      return;
    }
    if (kind == prim::isinstance) {
      bool yes = false;
      if (in[0].known)
        for (const auto& t : n->tys(attr::types)) yes |= in[0].v.type()->isSubtypeOf(*t);
      env[n->output()] = fresh(c10::IValue(yes), in[0].known, nullptr);
      return;
    }
    if (kind == c10::aten::warn) return;
    if (kind == prim::TupleIndex || kind == c10::aten::__getitem__) {
      // An element of a list / tuple: the same value (id) as the element.
      const auto& items = out_.values[in[0].id].items;
      if (in.size() == 2 && in[1].known && in[1].v.isInt() && !items.empty()) {
        int64_t i = in[1].v.toInt();
        if (i < 0) i += static_cast<int64_t>(items.size());
        if (i >= 0 && i < static_cast<int64_t>(items.size())) {
          Slot s;
          s.id = items[i];
          s.known = in[0].known;
          if (in[0].known) {
            if (in[0].v.isList()) s.v = in[0].v.toListRef()[i];
            else if (in[0].v.isTuple()) s.v = in[0].v.toTupleRef().elements()[i];
            else s.known = false;
          }
          env[n->output()] = s;
          return;
        }
      }
    }
    eval_op(n, in, env);
  }

  // Lists, tuples and dicts the interpreter builds itself (no registered operator). A list or
  // tuple keeps its elements' ids (cat's operands, returned pairs).
  void eval_construct(Node* n, std::vector<Slot>& in, Env& env) {
    bool known = true;
    for (auto& s : in) known &= s.known;
    c10::IValue v;
    if (known) {
      auto kind = n->kind();
      if (kind == prim::ListConstruct) {
        auto lt = n->output()->type()->expect<c10::ListType>();
        c10::impl::GenericList list(lt->getElementType());
        list.reserve(in.size());
        for (auto& s : in) list.push_back(s.v);
        v = list;
        // Typed lists: int / float / bool / tensor lists are what operators expect.
        auto et = lt->getElementType()->kind();
        if (et == c10::TypeKind::IntType) v = c10::IValue(c10::impl::toTypedList<int64_t>(std::move(list)));
        else if (et == c10::TypeKind::FloatType) v = c10::IValue(c10::impl::toTypedList<double>(std::move(list)));
        else if (et == c10::TypeKind::BoolType) v = c10::IValue(c10::impl::toTypedList<bool>(std::move(list)));
        else if (et == c10::TypeKind::TensorType) v = c10::IValue(c10::impl::toTypedList<at::Tensor>(std::move(list)));
      } else if (kind == prim::TupleConstruct) {
        std::vector<c10::IValue> elems;
        for (auto& s : in) elems.push_back(s.v);
        v = c10::ivalue::Tuple::create(std::move(elems));
      } else {
        auto dt = n->output()->type()->expect<c10::DictType>();
        c10::impl::GenericDict dict(dt->getKeyType(), dt->getValueType());
        for (size_t i = 0; i + 1 < in.size(); i += 2) dict.insert_or_assign(in[i].v, in[i + 1].v);
        v = dict;
      }
    }
    Slot out;
    out.v = v;
    out.known = known;
    ValueRecord r;
    r.kind = n->kind() == prim::ListConstruct ? "list" : n->kind() == prim::TupleConstruct ? "tuple" : "dict";
    if (known && v.isIntList()) r.value = v.toIntVector();
    if (n->kind() != prim::DictConstruct)
      for (auto& s : in) r.items.push_back(s.id);
    out_.values.push_back(std::move(r));
    out.id = static_cast<int>(out_.values.size()) - 1;
    for (auto& s : in)
      if (auto t = taint_.find(s.id); t != taint_.end() && !taint_.count(out.id)) taint_[out.id] = t->second;
    env[n->output()] = out;
  }

  void eval_if(Node* n, std::vector<Slot>& in, Env& env) {
    int branch = -1;
    if (in[0].known && in[0].v.isBool()) branch = in[0].v.toBool() ? 0 : 1;
    if (branch < 0) {
      if (raises_only(n->blocks()[0])) branch = 1;
      else if (raises_only(n->blocks()[1])) branch = 0;
      else {
        branch = 0;
        note_once("a condition that depends on tensor values (" + where(n) + "): the first branch was followed");
      }
    }
    Block* b = n->blocks()[branch];
    eval_block(b, env);
    for (size_t i = 0; i < n->outputs().size(); ++i) env[n->outputs()[i]] = lookup(env, b->outputs()[i]);
  }

  static bool is_constant_true(const Value* v) {
    if (v->node()->kind() != prim::Constant) return false;
    auto iv = torch::jit::toIValue(v);
    return iv && iv->isBool() && iv->toBool();
  }

  void eval_loop(Node* n, std::vector<Slot>& in, Env& env) {
    Block* body = n->blocks()[0];
    bool max_known = in[0].known && in[0].v.isInt();
    int64_t max_trips = max_known ? in[0].v.toInt() : -1;
    bool cond = !in[1].known || !in[1].v.isBool() || in[1].v.toBool();
    bool cond_known = in[1].known && in[1].v.isBool();
    std::vector<Slot> carried(in.begin() + 2, in.end());
    int64_t trip = 0;
    // A for-loop over an unknown range, or a while-loop on tensor values: one iteration.
    bool once = !max_known && (!cond_known || is_constant_true(body->outputs()[0]));
    if (once) note_once("a loop whose trip count is unknown (" + where(n) + "): one iteration was followed");
    while (cond && (!max_known || trip < max_trips)) {
      auto bin = body->inputs();
      env[bin[0]] = fresh(c10::IValue(trip), true, nullptr);
      for (size_t i = 1; i < bin.size(); ++i) env[bin[i]] = carried[i - 1];
      eval_block(body, env);
      auto bout = body->outputs();
      Slot c = lookup(env, bout[0]);
      for (size_t i = 1; i < bout.size(); ++i) carried[i - 1] = lookup(env, bout[i]);
      ++trip;
      if (c.known && c.v.isBool()) {
        cond = c.v.toBool();
        cond_known = true;
      } else {
        if (!max_known) {
          note_once("a loop whose end depends on tensor values (" + where(n) + "): one iteration was followed");
          break;
        }
        cond = true;
      }
      if (once || (!max_known && !cond_known)) break;
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) env[n->outputs()[i]] = carried[i];
  }

  void eval_call(Node* n, std::vector<Slot>& in, Env& env) {
    std::shared_ptr<Graph> graph;
    std::string name;
    int module = current_module_;
    std::vector<Slot> args = in;
    bool method = n->kind() == prim::CallMethod;
    if (method) {
      name = n->s(attr::name);
      if (!in[0].known || !in[0].v.isObject()) throw StopEvaluation{"a method call on an unknown object (" + where(n) + ")"};
      auto obj = in[0].v.toObject();
      auto& fn = obj->type()->getMethod(name);
      graph = torch::jit::toGraphFunction(fn).graph();
      if (auto it = model_.module_index.find(obj.get()); it != model_.module_index.end()) module = it->second;
    } else {
      auto ft = n->input(0)->type()->cast<c10::FunctionType>();
      if (!ft) throw StopEvaluation{"a call of an unknown function (" + where(n) + ")"};
      name = ft->function()->qualname().qualifiedName();
      graph = torch::jit::toGraphFunction(*ft->function()).graph();
      args.erase(args.begin());
    }
    size_t at = out_.ops.size();
    {
      OpRecord op;
      op.kind = method ? "prim::CallMethod" : "prim::CallFunction";
      op.method = name;
      op.module = module;
      for (size_t i = method ? 1 : 0; i < args.size(); ++i) op.inputs.push_back(args[i].id);
      place(op, n);
      out_.ops.push_back(std::move(op));
    }
    Step step;
    if (hooks) {
      step.node = n;
      step.module = current_module_;
      step.callee = method ? module : -1;
      step.span = out_.ops[at].span;
      std::vector<c10::IValue> values;
      for (size_t i = method ? 1 : 0; i < args.size(); ++i) values.push_back(args[i].v);
      hooks->before(step, values);
      for (size_t i = method ? 1 : 0, k = 0; i < args.size() && k < values.size(); ++i, ++k) args[i].v = values[k];
    }
    call_sites_.push_back(span_of(n->sourceRange()));
    int saved = current_module_;
    current_module_ = module;
    std::vector<Slot> result;
    try {
      result = call_graph(*graph, args);
    } catch (...) {
      current_module_ = saved;
      call_sites_.pop_back();
      out_.ops[at].end = static_cast<int>(out_.ops.size());
      throw;
    }
    current_module_ = saved;
    call_sites_.pop_back();
    if (hooks) {
      std::vector<c10::IValue> values;
      for (auto& r : result) values.push_back(r.v);
      hooks->after(step, values);
      for (size_t i = 0; i < result.size() && i < values.size(); ++i) result[i].v = values[i];
    }
    for (size_t i = 0; i < n->outputs().size() && i < result.size(); ++i) {
      env[n->outputs()[i]] = result[i];
      out_.ops[at].outputs.push_back(result[i].id);
    }
    out_.ops[at].end = static_cast<int>(out_.ops.size());
  }

  std::string where(const Node* n) {
    SourceSpan s = span_of(n->sourceRange());
    for (auto it = call_sites_.rbegin(); !(s.valid() && s.file == script_) && it != call_sites_.rend(); ++it)
      if (it->valid() && it->file == script_) s = *it;
    if (!s.valid()) return n->kind().toQualString();
    auto slash = s.file.rfind('/');
    return (slash == std::string::npos ? s.file : s.file.substr(slash + 1)) + ":" + std::to_string(s.line);
  }

  void note_once(const std::string& note) {
    if (std::find(out_.notes.begin(), out_.notes.end(), note) == out_.notes.end()) out_.notes.push_back(note);
  }

  const torch::jit::Operation* operation(const Node* n) {
    auto it = operations_.find(n);
    if (it != operations_.end()) return it->second ? &*it->second : nullptr;
    std::optional<torch::jit::Operation> op;
    try {
      if (n->maybeOperator()) op = n->getOperation();
    } catch (const std::exception&) {
    }
    auto& slot = operations_[n];
    slot = std::move(op);
    return slot ? &*slot : nullptr;
  }

  static bool any_tensor_on(const std::vector<Slot>& in, c10::DeviceType d) {
    for (auto& s : in)
      if (s.known && s.v.isTensor() && s.v.toTensor().defined() && s.v.toTensor().device().type() == d) return true;
    return false;
  }

  bool try_run(torch::jit::Operation op, std::vector<c10::IValue> stack, std::vector<c10::IValue>& out,
               std::string& error) {
    try {
      op(stack);
      out = std::move(stack);
      return true;
    } catch (const std::exception& e) {
      error = e.what();
      auto nl = error.find('\n');
      if (nl != std::string::npos) error = error.substr(0, nl);
      return false;
    }
  }

  // Output shapes from a formula, for ops that could not run (no meta kernel, unknown inputs).
  bool formula(const Node* n, const std::vector<Slot>& in, std::vector<c10::IValue>& out) {
    std::string k = short_kind(n);
    auto shape_of = [&](size_t i) -> const at::Tensor* {
      if (i < in.size() && in[i].known && in[i].v.isTensor() && in[i].v.toTensor().defined()) return &in[i].v.toTensor();
      return nullptr;
    };
    auto make = [&](std::vector<int64_t> shape, c10::ScalarType dt) {
      return c10::IValue(at::empty(shape, at::TensorOptions().dtype(dt).device(c10::kMeta)));
    };
    if (k == "where" && in.size() == 1 && n->outputs().size() == 1) {
      // torch.where(cond) / nonzero: as many indices as true entries, which only the data knows;
      // half of them is the estimate (marked data-dependent).
      auto* c = shape_of(0);
      if (!c) return false;
      double fraction = 0.5;
      if (auto f = true_fraction_.find(in[0].id); f != true_fraction_.end()) fraction = f->second;
      int64_t count = std::max<int64_t>(1, static_cast<int64_t>(std::llround(static_cast<double>(c->numel()) * fraction)));
      std::vector<c10::IValue> parts;
      for (int64_t d = 0; d < c->dim(); ++d) parts.push_back(make({count}, c10::ScalarType::Long));
      out = {c10::ivalue::Tuple::create(std::move(parts))};
      estimated_ = true;
      return true;
    }
    if (k == "nonzero" && in.size() == 1) {
      auto* c = shape_of(0);
      if (!c) return false;
      double fraction = 0.5;
      if (auto f = true_fraction_.find(in[0].id); f != true_fraction_.end()) fraction = f->second;
      int64_t count = std::max<int64_t>(1, static_cast<int64_t>(std::llround(static_cast<double>(c->numel()) * fraction)));
      out = {make({count, c->dim()}, c10::ScalarType::Long)};
      estimated_ = true;
      return true;
    }
    if (n->outputs().size() != 1 || !is_tensor_type(n->output()->type())) return false;
    if (kSameShape.count(k)) {
      std::vector<std::vector<int64_t>> shapes;
      c10::ScalarType dt = c10::ScalarType::Float;
      bool first = true;
      for (size_t i = 0; i < in.size(); ++i) {
        if (!in[i].v.isTensor() && in[i].known) continue;
        if (!n->inputs()[i]->type()->cast<c10::TensorType>()) continue;
        auto* t = shape_of(i);
        if (!t) {
          if (i == 0) return false;  // the main operand must be known
          continue;
        }
        shapes.push_back(t->sizes().vec());
        if (first) dt = t->scalar_type();
        first = false;
      }
      if (shapes.empty()) return false;
      if (k == "eq" || k == "ne" || k == "lt" || k == "le" || k == "gt" || k == "ge" || k == "logical_not") dt = c10::ScalarType::Bool;
      out = {make(broadcast(shapes), dt)};
      return true;
    }
    if (k == "embedding") {
      auto *w = shape_of(0), *ids = shape_of(1);
      if (!w || !ids || w->dim() != 2) return false;
      auto s = ids->sizes().vec();
      s.push_back(w->size(1));
      out = {make(s, w->scalar_type())};
      return true;
    }
    if (k == "linear") {
      auto *x = shape_of(0), *w = shape_of(1);
      if (!x || !w || w->dim() != 2 || x->dim() < 1) return false;
      auto s = x->sizes().vec();
      s.back() = w->size(0);
      out = {make(s, x->scalar_type())};
      return true;
    }
    if (k == "repeat_interleave") {
      auto* x = shape_of(0);
      if (!x || in.size() < 3 || !in[1].known || !in[1].v.isInt() || !in[2].known || !in[2].v.isInt()) return false;
      auto s = x->sizes().vec();
      int64_t d = in[2].v.toInt();
      if (d < 0) d += static_cast<int64_t>(s.size());
      if (d < 0 || d >= static_cast<int64_t>(s.size())) return false;
      s[d] *= in[1].v.toInt();
      out = {make(s, x->scalar_type())};
      return true;
    }
    if (k == "conv1d" || k == "conv2d" || k == "conv3d" || k == "_convolution" || k == "convolution") {
      // (input, weight, bias, stride, padding, dilation, [transposed, output_padding,] groups)
      auto *x = shape_of(0), *w = shape_of(1);
      if (!x || !w || x->dim() != w->dim() || x->dim() < 3) return false;
      size_t sp = x->dim() - 2;
      auto ints = [&](size_t i, int64_t fallback) {
        std::vector<int64_t> v(sp, fallback);
        if (i < in.size() && in[i].known && in[i].v.isIntList()) {
          auto l = in[i].v.toIntVector();
          for (size_t j = 0; j < sp; ++j) v[j] = l.size() == 1 ? l[0] : j < l.size() ? l[j] : fallback;
        }
        return v;
      };
      auto stride = ints(3, 1), dilation = ints(5, 1);
      std::vector<int64_t> padding = ints(4, 0);
      if (k != "_convolution" && k != "convolution" && in.size() > 4 && in[4].known && in[4].v.isString()) {
        // padding="same" / "valid"
        bool same = in[4].v.toStringRef() == "same";
        for (size_t j = 0; j < sp; ++j) padding[j] = same ? dilation[j] * (w->size(2 + j) - 1) / 2 : 0;
      }
      bool transposed = (k == "_convolution" || k == "convolution") && in.size() > 6 && in[6].known && in[6].v.isBool() && in[6].v.toBool();
      if (transposed) return false;
      std::vector<int64_t> s{x->size(0), w->size(0)};
      for (size_t j = 0; j < sp; ++j)
        s.push_back((x->size(2 + j) + 2 * padding[j] - dilation[j] * (w->size(2 + j) - 1) - 1) / stride[j] + 1);
      out = {make(s, x->scalar_type())};
      return true;
    }
    if (k == "index") {
      // x[idx0, idx1, ...] with leading tensor indices (None = a full slice).
      auto* x = shape_of(0);
      if (!x || in.size() < 2) return false;
      const auto& items = out_.values[in[1].id].items;
      std::vector<std::vector<int64_t>> shapes;
      size_t consumed = 0;
      bool leading = true;
      for (int id : items) {
        const auto& r = out_.values[id];
        if (r.kind == "none") { leading = false; ++consumed; continue; }
        if (r.kind != "tensor" || !r.shape_known || !leading) return false;
        shapes.push_back(r.dtype == "bool" ? std::vector<int64_t>{r.shape.empty() ? 1 : r.shape[0]} : r.shape);
        ++consumed;
      }
      if (shapes.empty()) return false;
      auto s = broadcast(shapes);
      for (size_t j = consumed; j < static_cast<size_t>(x->dim()); ++j) s.push_back(x->size(j));
      out = {make(s, x->scalar_type())};
      return true;
    }
    if (k == "scaled_dot_product_attention") {
      auto *q = shape_of(0), *v = shape_of(2);
      if (!q || !v) return false;
      auto s = q->sizes().vec();
      s.back() = v->size(-1);
      out = {make(s, q->scalar_type())};
      return true;
    }
    if (k == "matmul" || k == "bmm" || k == "mm") {
      auto *a = shape_of(0), *b = shape_of(1);
      if (!a || !b || a->dim() < 2 || b->dim() < 2) return false;
      auto as = a->sizes().vec(), bs = b->sizes().vec();
      std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
      auto s = broadcast({ab, bb});
      s.push_back(as[as.size() - 2]);
      s.push_back(bs.back());
      out = {make(s, a->scalar_type())};
      return true;
    }
    return false;
  }

  bool emit_worthy(const Node* n, const std::vector<Slot>& in, const std::vector<Slot>& outs) const {
    if (n->kind() == prim::NumToTensor || n->kind() == c10::aten::Int || n->kind() == c10::aten::Float ||
        n->kind() == c10::aten::ScalarImplicit || n->kind() == prim::ListConstruct || n->kind() == prim::TupleConstruct ||
        n->kind() == prim::DictConstruct)
      return false;
    bool tensor_out = false;
    for (auto* v : n->outputs()) tensor_out |= is_tensor_type(v->type()) || is_tensor_container(v->type());
    if (!tensor_out) return false;
    // Arithmetic on 0-dim tensors made from sizes (what tracing records for x.size() maths).
    bool scalar_only = true;
    auto check = [&](const Slot& s) {
      const auto& r = out_.values[s.id];
      if (r.kind != "tensor") return;
      if (!r.shape_known || !r.shape.empty() || r.parameter >= 0 || r.buffer >= 0) scalar_only = false;
    };
    for (auto& s : in) check(s);
    for (auto& s : outs) check(s);
    for (auto& s : outs)
      if (out_.values[s.id].kind != "tensor") scalar_only = false;
    return !scalar_only;
  }

  void eval_op(Node* n, std::vector<Slot>& in, Env& env) {
    if (hooks) {
      numeric_op(n, in, env);
      return;
    }
    bool known = true;
    for (auto& s : in) known &= s.known;
    std::vector<c10::IValue> results;
    std::string error;
    bool ok = false;
    const torch::jit::Operation* op = operation(n);
    if (!op) error = std::string("no operator for ") + n->kind().toQualString();
    // An operator that has no meta kernel fails the same way every time: straight to its formula.
    const std::string* failing = nullptr;
    if (auto f = no_meta_kernel_.find(n->kind().toQualString()); f != no_meta_kernel_.end()) failing = &f->second;
    if (failing) error = *failing;
    if (known && op && !failing) {
      std::vector<c10::IValue> stack;
      for (auto& s : in) stack.push_back(s.v);
      ok = try_run(*op, stack, results, error);
      if (!ok && (error.find("Could not run") != std::string::npos || error.find("not implemented") != std::string::npos) &&
          !any_tensor_on(in, c10::kCPU))
        no_meta_kernel_[n->kind().toQualString()] = error;
      if (!ok && any_tensor_on(in, c10::kMeta) && any_tensor_on(in, c10::kCPU)) {
        // A small tensor the forward made on the CPU met a meta one: all on meta.
        std::vector<c10::IValue> meta_stack;
        for (auto& s : in) {
          if (s.v.isTensor() && s.v.toTensor().defined() && !s.v.toTensor().is_meta())
            meta_stack.push_back(s.v.toTensor().to(c10::kMeta));
          else
            meta_stack.push_back(s.v);
        }
        std::string e2;
        ok = try_run(*op, meta_stack, results, e2);
      }
    } else if (!known) {
      error = "an input is unknown";
    }
    estimated_ = false;
    if (!ok && formula(n, in, results)) ok = true;
    if (!ok && std::getenv("SHARDLENS_GRAPH_DEBUG")) std::fprintf(stderr, "%s: %s\n", n->kind().toQualString(), error.c_str());
    std::vector<Slot> outs;
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      bool have = ok && i < results.size();
      Slot s = fresh(have ? results[i] : c10::IValue(), have, n->outputs()[i]->type());
      if (estimated_) mark_estimated(s.id);
      env[n->outputs()[i]] = s;
      outs.push_back(s);
    }
    // Routing estimates, as the static front end makes them: top-k / argmax indices lie in [0, n);
    // comparing them with one value is true for 1/n of the entries.
    {
      std::string k = short_kind(n);
      if ((k == "topk" || k == "argmax" || k == "argmin" || k == "sort" || k == "argsort") && !in.empty() && in[0].known &&
          in[0].v.isTensor() && in[0].v.toTensor().defined() && in[0].v.toTensor().dim() > 0) {
        const at::Tensor& x = in[0].v.toTensor();
        int64_t dim = -1;
        size_t di = k == "topk" ? 2 : 1;
        if (di < in.size() && in[di].known && in[di].v.isInt()) dim = in[di].v.toInt();
        if (dim < 0) dim += x.dim();
        if (dim >= 0 && dim < x.dim()) index_range_[outs.back().id] = x.size(dim);
      }
      if (k == "eq" && in.size() == 2) {
        auto r = index_range_.find(in[0].id);
        if (r != index_range_.end() && r->second > 0 && !(in[1].v.isTensor() && in[1].v.toTensor().dim() > 0))
          true_fraction_[outs[0].id] = 1.0 / static_cast<double>(r->second);
      }
    }
    // Taint: which forward input a value derives from (probing only needs the first use).
    int taint = -1;
    for (auto& s : in) {
      auto t = taint_.find(s.id);
      if (t != taint_.end()) {
        taint = t->second;
        break;
      }
      for (int item : out_.values[s.id].items)
        if (taint < 0 && taint_.count(item)) taint = taint_[item];
      if (taint >= 0) break;
    }
    if (taint >= 0)
      for (auto& s : outs) {
        taint_[s.id] = taint;
        for (int item : out_.values[s.id].items) taint_[item] = taint;
      }
    if (probing_ && taint >= 0) probe(n, in);
    if (!emit_worthy(n, in, outs)) return;
    OpRecord rec;
    rec.kind = n->kind().toQualString();
    rec.module = current_module_;
    for (auto& s : in) rec.inputs.push_back(s.id);
    for (auto& s : outs) rec.outputs.push_back(s.id);
    if (!ok) rec.error = error.empty() ? "output shape unknown" : error;
    place(rec, n);
    out_.ops.push_back(std::move(rec));
  }

  // Probing: the first op that tells what a forward input is decides its shape.
  void probe(const Node* n, const std::vector<Slot>& in) {
    std::string k = short_kind(n);
    auto tainted = [&](size_t i, int& which) {
      if (i >= in.size()) return false;
      auto t = taint_.find(in[i].id);
      if (t == taint_.end()) return false;
      which = t->second;
      return which >= 0 && which < static_cast<int>(decided_.size()) && !decided_[which];
    };
    auto weight = [&](size_t i) -> const ValueRecord* {
      if (i >= in.size()) return nullptr;
      const auto& r = out_.values[in[i].id];
      if (r.kind == "tensor" && r.shape_known && (r.parameter >= 0 || r.buffer >= 0)) return &r;
      return nullptr;
    };
    auto module_name = [&]() {
      const auto& m = model_.modules[current_module_].name;
      return m.empty() ? std::string("the root") : m;
    };
    auto decide = [&](int which, std::vector<int64_t> shape, const std::string& dtype, const std::string& why) {
      inferred[which].shape = std::move(shape);
      inferred[which].dtype = dtype;
      inferred[which].why = why;
      decided_[which] = 1;
      if (std::all_of(decided_.begin(), decided_.end(), [](char c) { return c != 0; })) throw StopEvaluation{""};
    };
    int which = -1;
    int64_t B = options_.batch, T = options_.tokens;
    if (k == "embedding" && tainted(1, which)) {
      decide(which, {B, T}, "int64", "token ids, from their use by " + module_name());
    } else if (k == "linear" && tainted(0, which)) {
      if (auto* w = weight(1); w && w->shape.size() == 2)
        decide(which, {B, T, w->shape[1]}, "float32", "features, from their use by " + module_name());
    } else if ((k == "matmul" || k == "mm") && tainted(0, which)) {
      if (auto* w = weight(1); w && w->shape.size() == 2)
        decide(which, {B, T, w->shape[0]}, "float32", "features, from their use by " + module_name());
    } else if (k == "layer_norm" && tainted(0, which)) {
      if (in.size() > 1 && in[1].known && in[1].v.isIntList()) {
        std::vector<int64_t> s{B, T};
        for (auto d : in[1].v.toIntVector()) s.push_back(d);
        decide(which, s, "float32", "features, from their use by " + module_name());
      }
    } else if ((k == "conv1d" || k == "conv2d" || k == "conv3d" || k == "_convolution" || k == "conv_transpose2d") &&
               tainted(0, which)) {
      if (auto* w = weight(1); w && w->shape.size() >= 3) {
        int64_t groups = 1;
        if (k != "_convolution" && in.size() > 6 && in[6].known && in[6].v.isInt()) groups = in[6].v.toInt();
        std::vector<int64_t> s{B, w->shape[1] * groups};
        size_t spatial = w->shape.size() - 2;
        for (size_t i = 0; i < spatial; ++i)
          s.push_back(spatial == 1 ? (T > 1 ? T : options_.spatial[0] * options_.spatial[1]) : options_.spatial[i % 2]);
        decide(which, s, "float32", (spatial == 1 ? "sequences" : "images") + std::string(", from their use by ") + module_name());
      }
    } else if ((k == "group_norm" || k == "batch_norm" || k == "instance_norm") && tainted(0, which)) {
      size_t wi = k == "group_norm" ? 2 : 1;
      if (auto* w = weight(wi); w && w->shape.size() == 1)
        decide(which, {B, w->shape[0], options_.spatial[0], options_.spatial[1]}, "float32",
               "images, from their use by " + module_name());
    } else if ((k == "mul" || k == "add") && (tainted(0, which) || tainted(1, which))) {
      for (size_t i = 0; i < 2; ++i)
        if (auto* w = weight(i); w && w->shape.size() == 1) {
          decide(which, {B, T, w->shape[0]}, "float32", "features, scaled by a parameter of " + module_name());
          break;
        }
    }
  }

  // A numeric run's op: the real kernel, the hooks on either side, and no fallback.
  void numeric_op(Node* n, std::vector<Slot>& in, Env& env) {
    const torch::jit::Operation* op = operation(n);
    if (!op) throw StopEvaluation{std::string("no operator for ") + n->kind().toQualString() + " (" + where(n) + ")"};
    Step step;
    step.node = n;
    step.module = current_module_;
    {
      OpRecord scratch;
      place(scratch, n);
      step.span = scratch.span;
    }
    std::vector<c10::IValue> stack;
    for (auto& s : in) stack.push_back(s.v);
    hooks->before(step, stack);
    std::vector<c10::IValue> results;
    std::string error;
    if (!try_run(*op, stack, results, error))
      throw StopEvaluation{std::string(n->kind().toQualString()) + " failed (" + where(n) + "): " + error};
    hooks->after(step, results);
    for (size_t i = 0; i < n->outputs().size(); ++i)
      env[n->outputs()[i]] = fresh(i < results.size() ? results[i] : c10::IValue(), i < results.size(), n->outputs()[i]->type());
  }

  c10::IValue numeric_weight(const c10::IValue& v) {
    if (!v.isTensor()) return v;
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return v;
    const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
    auto p = model_.parameter_index.find(impl);
    auto b = model_.buffer_index.find(impl);
    if (p == model_.parameter_index.end() && b == model_.buffer_index.end()) return v;
    at::Tensor w = hooks->weight(t, p == model_.parameter_index.end() ? -1 : p->second,
                                 b == model_.buffer_index.end() ? -1 : b->second);
    original_[w.unsafeGetTensorImpl()] = impl;
    return w;
  }

  void mark_estimated(int id) {
    out_.values[id].data_dependent = true;
    for (int i : out_.values[id].items) mark_estimated(i);
  }

  bool estimated_ = false;
  std::unordered_map<std::string, std::string> no_meta_kernel_;
  std::unordered_map<int, int64_t> index_range_;
  std::unordered_map<int, double> true_fraction_;
  LoadedModel& model_;
  const EvalOptions& options_;
  ExactGraph& out_;
  bool probing_;
  std::string script_;
  int current_module_ = 0;
  int depth_ = 0;
  int64_t steps_ = 0;
  std::vector<SourceSpan> call_sites_;
  std::unordered_map<int, int> input_taint_;
  std::unordered_map<const Node*, std::optional<torch::jit::Operation>> operations_;
  std::unordered_map<const c10::TensorImpl*, at::Tensor> meta_copies_;
  std::unordered_map<const c10::TensorImpl*, const c10::TensorImpl*> original_;
  std::unordered_map<torch::jit::Source*, int64_t> dedent_;
  std::map<std::string, std::vector<std::string>> files_;
};

c10::ScalarType scalar_type(const std::string& name) {
  static const std::map<std::string, c10::ScalarType> types = {
      {"float32", c10::ScalarType::Float}, {"float", c10::ScalarType::Float}, {"float64", c10::ScalarType::Double},
      {"float16", c10::ScalarType::Half},  {"bfloat16", c10::ScalarType::BFloat16}, {"int64", c10::ScalarType::Long},
      {"long", c10::ScalarType::Long},     {"int32", c10::ScalarType::Int},     {"int", c10::ScalarType::Int},
      {"bool", c10::ScalarType::Bool},     {"uint8", c10::ScalarType::Byte},    {"int8", c10::ScalarType::Char}};
  auto it = types.find(name);
  return it == types.end() ? c10::ScalarType::Float : it->second;
}

struct ForwardArgument {
  std::string name;
  c10::TypePtr type;
  std::optional<c10::IValue> default_value;
};

std::vector<ForwardArgument> forward_arguments(LoadedModel& model) {
  std::vector<ForwardArgument> out;
  const auto& schema = model.root.get_method("forward").function().getSchema();
  const auto& args = schema.arguments();
  for (size_t i = 1; i < args.size(); ++i) {
    ForwardArgument a{args[i].name(), args[i].type(), std::nullopt};
    if (args[i].default_value().has_value()) a.default_value = *args[i].default_value();
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

namespace {

// A traced graph was recorded for one example input: its shapes (batch and sequence dims set to
// the workload's when `workload` is set) are the inputs to evaluate with.
std::vector<InputSpec> example_inputs(const LoadedModel& model, const EvalOptions& options, bool workload) {
  std::vector<InputSpec> out;
  const auto& info = model.export_info;
  if (!info.is_object() || !info.contains("example_inputs") || !info["example_inputs"].is_object()) return out;
  const auto& ex = info["example_inputs"];
  if (!ex.contains("shapes") || !ex["shapes"].is_array()) return out;
  int64_t ex_batch = ex.value("batch", int64_t{1});
  for (size_t i = 0; i < ex["shapes"].size(); ++i) {
    InputSpec spec;
    spec.shape = ex["shapes"][i].get<std::vector<int64_t>>();
    if (ex.contains("dtypes") && i < ex["dtypes"].size()) spec.dtype = ex["dtypes"][i].get<std::string>();
    int seq_dim = -1;
    if (ex.contains("seq_dims") && i < ex["seq_dims"].size() && ex["seq_dims"][i].is_number_integer())
      seq_dim = ex["seq_dims"][i].get<int>();
    if (workload) {
      if (!spec.shape.empty() && spec.shape[0] == ex_batch) spec.shape[0] = options.batch;
      if (seq_dim > 0 && seq_dim < static_cast<int>(spec.shape.size())) spec.shape[seq_dim] = options.tokens;
      spec.why = "the traced example's " + ex.value("what", std::string("input")) + ", for this workload";
    } else {
      spec.why = "the traced example's " + ex.value("what", std::string("input")) + " (the graph has its sizes built in)";
    }
    if (spec.dtype == "bfloat16" || spec.dtype == "float16") spec.dtype = "float32";
    out.push_back(spec);
  }
  return out;
}

int failed_ops(const ExactGraph& g) {
  int n = 0;
  for (const auto& op : g.ops)
    if (!op.error.empty() && op.error != "an input is unknown") ++n;
  return n + (g.error.empty() ? 0 : 1000);
}

ExactGraph evaluate_once(LoadedModel& model, const EvalOptions& options);

}  // namespace

ExactGraph evaluate_forward(LoadedModel& model, const EvalOptions& options) {
  if (!options.inputs.empty() || model.method() != "trace") return evaluate_once(model, options);
  auto for_workload = example_inputs(model, options, true);
  if (for_workload.empty()) return evaluate_once(model, options);
  EvalOptions o = options;
  o.inputs = for_workload;
  ExactGraph g = evaluate_once(model, o);
  if (failed_ops(g) == 0) return g;
  // Sizes the trace built in do not fit this workload: the example's own shapes.
  o.inputs = example_inputs(model, options, false);
  ExactGraph h = evaluate_once(model, o);
  if (failed_ops(h) < failed_ops(g)) {
    h.notes.push_back("the traced graph has the example input's sizes built in: shapes are those of the example, not of this workload");
    return h;
  }
  return g;
}

std::vector<c10::IValue> run_numeric(LoadedModel& model, const std::vector<c10::IValue>& inputs, NumericHooks& hooks) {
  ExactGraph scratch;
  EvalOptions options;
  options.max_ops = std::numeric_limits<int64_t>::max();
  Evaluator eval(model, options, scratch, false);
  eval.hooks = &hooks;
  std::vector<Slot> slots;
  for (auto& v : inputs) slots.push_back(eval.make_input(v, true, nullptr));
  eval.run(slots);
  if (!scratch.error.empty()) throw std::runtime_error(scratch.error);
  return eval.results;
}

namespace {

ExactGraph evaluate_once(LoadedModel& model, const EvalOptions& options) {
  ExactGraph result;
  std::vector<ForwardArgument> args;
  try {
    args = forward_arguments(model);
  } catch (const std::exception& e) {
    (void)e;
    result.error = "the root module has no forward() (the script defines none): modules and parameters only";
    return result;
  }
  // Input shapes: given, or found from each input's first use (a probing evaluation with the
  // inputs unknown), as the static front end does.
  std::vector<InputSpec> specs(args.size());
  std::vector<char> tensor_arg(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    specs[i].name = args[i].name;
    tensor_arg[i] = is_tensor_type(args[i].type) && !args[i].default_value;
  }
  bool need_probe = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < options.inputs.size() && !options.inputs[i].shape.empty()) {
      specs[i] = options.inputs[i];
      specs[i].name = args[i].name;
      if (specs[i].why.empty()) specs[i].why = "given";
    } else if (tensor_arg[i]) {
      need_probe = true;
    }
  }
  if (need_probe) {
    ExactGraph scratch;
    Evaluator probe(model, options, scratch, true);
    probe.inferred = specs;
    probe.decided_.assign(args.size(), 1);
    std::vector<Slot> slots;
    for (size_t i = 0; i < args.size(); ++i) {
      bool unknown = tensor_arg[i] && specs[i].shape.empty();
      if (unknown) probe.decided_[i] = 0;
      if (!tensor_arg[i] && args[i].default_value) slots.push_back(probe.make_input(*args[i].default_value, true, args[i].type));
      else if (!unknown && tensor_arg[i])
        slots.push_back(probe.make_input(at::empty(specs[i].shape, at::TensorOptions().dtype(scalar_type(specs[i].dtype)).device(c10::kMeta)), true, args[i].type));
      else if (args[i].type->kind() == c10::TypeKind::IntType)
        slots.push_back(probe.make_input(c10::IValue(int64_t{0}), true, args[i].type));
      else
        slots.push_back(probe.make_input(c10::IValue(), false, args[i].type));
    }
    probe.run(slots);
    specs = probe.inferred;
  }
  Evaluator eval(model, options, result, false);
  std::vector<Slot> slots;
  for (size_t i = 0; i < args.size(); ++i) {
    if (tensor_arg[i]) {
      if (specs[i].shape.empty()) {
        result.error = "could not tell the shape of forward input '" + args[i].name +
                       "' from its first use; give it with --input " + args[i].name + "=D0,D1,...[:dtype]";
        slots.push_back(eval.make_input(c10::IValue(), false, args[i].type));
      } else {
        slots.push_back(eval.make_input(
            at::empty(specs[i].shape, at::TensorOptions().dtype(scalar_type(specs[i].dtype)).device(c10::kMeta)), true,
            args[i].type));
      }
    } else if (args[i].default_value) {
      specs[i].why = "default";
      slots.push_back(eval.make_input(*args[i].default_value, true, args[i].type));
    } else if (args[i].type->kind() == c10::TypeKind::IntType) {
      specs[i].why = "0 (an int argument without default)";
      slots.push_back(eval.make_input(c10::IValue(int64_t{0}), true, args[i].type));
    } else {
      slots.push_back(eval.make_input(c10::IValue(), false, args[i].type));
    }
  }
  result.inputs = specs;
  std::string probe_error = result.error;
  eval.run(slots);
  if (!probe_error.empty() && result.error.empty()) result.error = probe_error;
  return result;
}

}  // namespace

}  // namespace shardlens::torchgraph
