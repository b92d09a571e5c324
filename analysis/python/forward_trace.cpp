#include "python/forward_trace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "ir/contract_equations.h"
#include "ir/module_path.h"
#include "ir/split.h"
#include "python/interpreter.h"

namespace shardlens::python {
namespace {

// The op that stands for a row of an input iterated before its shape is known (rows_of_unknown),
// and first_use's mark for the dim of rows it takes away.
constexpr const char* kRowOfInput = "row of input";
constexpr int kRowTaken = -1;

std::string describe_input(const ForwardTracer::InputShape& input) {
  std::string s;
  for (auto d : input.shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return input.name + ": [" + s + "] " + input.dtype + " (" + input.told_by + ")";
}

using ir::OpKind;

// The first stride in a conv's extra_repr ("3, 768, kernel_size=(16, 16), stride=(16, 16)"); 1 when
// it prints none (PyTorch leaves out the default).
int64_t first_stride(const std::string& extra_repr) {
  auto at = extra_repr.find("stride=");
  if (at == std::string::npos) return 1;
  at += 7;
  while (at < extra_repr.size() && (extra_repr[at] == '(' || extra_repr[at] == ' ')) ++at;
  int64_t n = 0;
  while (at < extra_repr.size() && std::isdigit(static_cast<unsigned char>(extra_repr[at]))) n = n * 10 + (extra_repr[at++] - '0');
  return n > 0 ? n : 1;
}

std::string last_component(const std::string& name) {
  auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

std::string parent_of(const std::string& name) {
  auto dot = name.rfind('.');
  return dot == std::string::npos ? std::string() : name.substr(0, dot);
}

std::string lower_name(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Names model code gives a table of absolute positions: wpe, pos_embed, positional_embedding,
// position_embeddings, embed_positions, pos_encoding. Relative-position tables are not bounds.
bool position_table_name(const std::string& key, bool embedding_module) {
  std::string k = lower_name(key);
  if (k.find("rel") != std::string::npos) return false;
  if (k == "wpe") return true;
  if (k.find("pos") == std::string::npos) return false;
  return embedding_module || k.find("emb") != std::string::npos || k.find("enc") != std::string::npos;
}

const ir::Shape* shape_of(const Value& v) {
  auto* t = v.as<TensorObj>();
  return t && t->shape ? &*t->shape : nullptr;
}

int64_t norm_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

void collect_tensors(const Value& v, std::vector<Value>& out, int depth = 0) {
  if (v.as<TensorObj>()) {
    out.push_back(v);
    return;
  }
  if (depth > 1) return;
  if (auto* l = TupleView::of(v))
    for (auto& item : l->items) collect_tensors(item, out, depth + 1);
  if (auto* d = v.as<DictObj>())
    for (auto& kv : d->entries) collect_tensors(kv.second, out, depth + 1);
}

std::vector<Value> tensors_in(const CallArgs& args, const Value* self = nullptr) {
  std::vector<Value> out;
  if (self) collect_tensors(*self, out);
  for (auto& v : args.positional) collect_tensors(v, out);
  for (auto& kv : args.keywords) collect_tensors(kv.second, out);
  return out;
}

std::optional<int64_t> int_arg(const CallArgs& a, size_t pos, const char* name) {
  const Value* v = argument(a, pos, name);
  if (v && v->is_int()) return v->as_int();
  return std::nullopt;
}

std::vector<int64_t> ints_of(const Value& v, size_t n, int64_t fallback) {
  std::vector<int64_t> out;
  if (auto* l = TupleView::of(v)) {
    for (auto& item : l->items) out.push_back(item.is_int() ? item.as_int() : fallback);
  } else if (v.is_int()) {
    out.assign(n, v.as_int());
  }
  if (out.size() != n) out.assign(n, fallback);
  return out;
}

// A layer's registered parameter (None when absent or set to None).
Value layer_param(InstanceObj& layer, const std::string& key) {
  if (auto* p = ModuleData::find(layer.module->parameters, key); p && *p) return Value::object(*p);
  // A reparametrised weight (weight_norm, spectral_norm) is a tensor attribute in its place.
  if (Value* v = layer.find_attribute(key); v && v->as<TensorObj>()) return *v;
  return Value::none();
}

std::string short_name(const std::string& q) {
  for (const char* prefix : {"torch.nn.functional.", "torch.Tensor.", "tensor.", "torch.", "F."})
    if (q.rfind(prefix, 0) == 0) return q.substr(std::strlen(prefix));
  return q;
}

const std::set<std::string> kUnaryNames = {
    "relu", "relu_", "gelu", "silu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "pow", "abs", "sin", "cos",
    "square", "reciprocal", "softplus", "mish", "elu", "leaky_relu", "hardswish", "hardsigmoid", "relu6", "selu",
    "celu", "logsigmoid", "softsign", "erf", "clamp", "clamp_min", "clamp_max", "masked_fill", "tril", "triu",
    "sign", "floor", "ceil", "round", "log1p", "expm1", "nan_to_num", "hardtanh", "tanhshrink", "sigmoid_",
    "exp_", "sqrt_", "float_power", "erfinv", "cumsum", "cumprod", "flip", "roll", "masked_fill_", "clamp_"};
const std::set<std::string> kScaleNames = {"dropout", "dropout2d", "dropout1d", "alpha_dropout", "contiguous", "clone",
                                           "detach", "float", "half", "bfloat16", "double", "to", "type_as", "type",
                                           "neg", "cpu", "cuda", "requires_grad_", "bool", "long", "int", "short", "byte"};
const std::set<std::string> kReduceLinear = {"sum", "mean", "nansum"};
const std::set<std::string> kReduceOther = {"max", "min", "amax", "amin", "std", "var", "logsumexp", "norm", "prod",
                                            "any", "all"};
const std::set<std::string> kCreateNames = {"zeros_like", "ones_like", "empty_like", "full_like", "randn_like",
                                            "rand_like", "zeros", "ones", "empty", "full", "arange", "randn", "rand",
                                            "tensor", "as_tensor", "linspace", "new_zeros", "new_ones", "new_empty",
                                            "new_full", "new_tensor", "eye", "tril_indices", "triu_indices", "polar",
                                            "outer", "randint", "nonzero", "meshgrid"};
const std::set<std::string> kReshapeNames = {"view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "view_as_complex",
                                              "view_as_real"};
const std::set<std::string> kSpatialNames = {"interpolate", "upsample", "pad", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                                             "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d",
                                             "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
                                             "adaptive_max_pool2d", "adaptive_max_pool3d", "pixel_shuffle", "pixel_unshuffle"};

// Token indices by the names model code gives them: [batch, tokens] position or segment ids, or
// one position per token of this forward (transformers' cache_position, gpt-fast's input_pos).
// Their first "use" is arithmetic (rotary angles) that reaches a layer through tensors of other
// shapes, so the first-use rule would mistake them for features.
// Diffusion timesteps are one value per sample ([batch]; DiT's t, diffusers' timestep): their
// first use, t[:, None] * freqs, would otherwise read as a feature vector per token. So are class
// labels (DiT's y, diffusers' class_labels): one id per sample, though an embedding reads them.
enum class IndexInput { None, PerSequence, PerToken, PerSample, LabelPerSample };
IndexInput index_input_kind(const std::string& name) {
  if (name == "position_ids" || name == "token_type_ids") return IndexInput::PerSequence;
  if (name == "cache_position" || name == "input_pos") return IndexInput::PerToken;
  if (name == "timestep" || name == "timesteps" || name == "t" || name == "sigma" || name == "sigmas" || name == "noise_level" ||
      name == "guidance")  // guidance-distilled DiTs (Flux): one guidance strength per sample
    return IndexInput::PerSample;
  // A pooled text embedding (diffusers' pooled_projections): one vector per sample.
  if (name.find("pooled") != std::string::npos) return IndexInput::PerSample;
  if (name == "class_labels" || name == "y") return IndexInput::LabelPerSample;
  return IndexInput::None;
}

// A padding mask over the tokens of another input, one value per token (HF's attention_mask,
// diffusers' encoder_attention_mask / encoder_hidden_states_mask, txt_mask): the name less its
// suffix names that input ("" for the main one). nullopt for other names: a bare `mask` or
// `attn_mask` is as often [S, S] or broadcast over heads.
std::optional<std::string> padding_mask_of(const std::string& name) {
  if (name == "attention_mask") return std::string();
  if (name == "attn_mask" || name == "causal_mask") return std::nullopt;
  for (const char* suffix : {"_attention_mask", "_attn_mask", "_mask"})
    if (name.size() > std::strlen(suffix) && name.ends_with(suffix)) return name.substr(0, name.size() - std::strlen(suffix));
  return std::nullopt;
}

}  // namespace

ForwardTracer::ForwardTracer(Interpreter& interp, ir::ModelIR& model, const std::vector<NamedModule>& walk, const TreeIndex& index)
    : interp_(interp), model_(model), walk_(walk), module_index_(index.module), parameter_index_(index.parameter),
      buffer_index_(index.buffer) {}

int ForwardTracer::id_of(const std::shared_ptr<TensorObj>& t) {
  auto it = version_.find(t.get());
  if (it != version_.end()) return it->second;
  return new_version(t);
}

int ForwardTracer::new_version(const std::shared_ptr<TensorObj>& t) {
  if (version_.count(t.get())) mutated(t.get());  // a new version of a tensor seen before: changed in place
  ir::TensorInfo info;
  info.shape_known = t->shape.has_value();
  if (t->shape) info.shape = *t->shape;
  info.dtype = t->dtype;
  if (auto p = parameter_index_.find(t.get()); p != parameter_index_.end()) info.parameter = p->second;
  if (auto b = buffer_index_.find(t.get()); b != buffer_index_.end()) info.buffer = b->second;
  int id = static_cast<int>(flow_->tensors.size());
  flow_->tensors.push_back(std::move(info));
  object_of_id_.push_back(t.get());
  version_[t.get()] = id;
  keep_alive_.push_back(t);
  return id;
}

bool ForwardTracer::calls_or_contractions_since(size_t from) const {
  for (size_t i = from; flow_ && i < flow_->ops.size(); ++i)
    if (const OpKind k = flow_->ops[i].kind; k == OpKind::Call || k == OpKind::Experts || k == OpKind::Contract || k == OpKind::Attention)
      return true;
  return false;
}

ir::Op& ForwardTracer::record(OpKind kind, std::string name, const std::vector<Value>& inputs, const Value& result,
                              const ir::Span& site) {
  ir::Op op;
  op.kind = kind;
  op.name = std::move(name);
  for (auto& v : inputs)
    if (v.as<TensorObj>()) op.inputs.push_back(id_of(std::static_pointer_cast<TensorObj>(v.obj)));
  std::vector<Value> outs;
  collect_tensors(result, outs);
  for (auto& v : outs) {
    auto t = std::static_pointer_cast<TensorObj>(v.obj);
    // A result that is one of the inputs (in-place ops) becomes a new version of that tensor.
    op.outputs.push_back(new_version(t));
  }
  op.module = module_stack_.empty() ? 0 : module_stack_.back();
  op.span = site;
  flow_->ops.push_back(std::move(op));
  return flow_->ops.back();
}

std::shared_ptr<TensorObj> ForwardTracer::make(Interpreter& in, ir::Shape shape, const std::string& dtype,
                                               const ir::Span& site) {
  // A kernel larger than its input (or a bad size) gives no valid shape: unknown, with the reason.
  for (auto d : shape)
    if (d < 0) {
      auto t = in.new_tensor(std::nullopt, site);
      t->dtype = dtype;
      t->why = std::make_shared<UnknownInfo>(UnknownInfo{"the input is too small for this op (negative size)", site, false});
      return t;
    }
  auto t = in.new_tensor(std::move(shape), site);
  t->dtype = dtype;
  return t;
}

Value ForwardTracer::record_unknown(Interpreter& in, const std::string& name, const std::vector<Value>& inputs,
                                    const std::string& why, const ir::Span& site) {
  auto t = in.new_tensor(std::nullopt, site);
  t->why = std::make_shared<UnknownInfo>(UnknownInfo{why, site, false});
  Value r = Value::object(t);
  record(OpKind::Unknown, name, inputs, r, site).detail = why;
  return r;
}

Value ForwardTracer::same_shape(Interpreter& in, OpKind kind, const std::string& name, const Value& x,
                                const std::vector<Value>& extra, const ir::Span& site) {
  auto* t = x.as<TensorObj>();
  auto r = in.new_tensor(t->shape, site);
  r->dtype = t->dtype;
  r->why = t->why;
  std::vector<Value> inputs{x};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  Value out = Value::object(r);
  record(kind, name, inputs, out, site);
  return out;
}

Value ForwardTracer::contract(Interpreter& in, const std::string& name, const std::string& equation,
                              const std::vector<Value>& inputs, const ir::Span& site) {
  // Output shape from the letters: each output letter takes its size from an input that has it.
  auto arrow = equation.find("->");
  std::string out_letters = equation.substr(arrow + 2);
  std::vector<std::string> in_letters = ir::split(std::string_view(equation).substr(0, arrow), ',');
  std::vector<int64_t> shape;
  std::string dtype = "float32";
  for (size_t i = 0; i < inputs.size(); ++i)
    if (auto* t = inputs[i].as<TensorObj>()) dtype = t->dtype;
  for (char c : out_letters) {
    int64_t size = -1;
    for (size_t i = 0; i < inputs.size() && i < in_letters.size(); ++i) {
      auto* s = shape_of(inputs[i]);
      if (!s) return record_unknown(in, name, inputs, "input shape unknown", site);
      auto pos = in_letters[i].find(c);
      if (pos != std::string::npos && pos < s->size() && (*s)[pos] != 1) size = (*s)[pos];
      else if (pos != std::string::npos && size < 0 && pos < s->size()) size = (*s)[pos];
    }
    if (size < 0) return record_unknown(in, name, inputs, "einsum output letter not found", site);
    shape.push_back(size);
  }
  Value r = Value::object(make(in, shape, dtype, site));
  record(OpKind::Contract, name, inputs, r, site).equation = equation;
  return r;
}

// After code the front end could not follow (a half-typed line, an unmodelled call), a layer's
// weights still say what it reads: assume [batch, tokens, features] (or an image for a conv) and go
// on behind an unknown op, so that the rest of the model is analysed. The planner keeps tensors
// whole across that op.
Value ForwardTracer::resync(Interpreter& in, const std::string& name, const Value& x, std::vector<int64_t> shape,
                            const std::vector<Value>& weights, const ir::Span& site) {
  std::vector<Value> inputs;
  if (x.as<TensorObj>()) inputs.push_back(x);
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  std::string s;
  for (auto d : shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
  Value r = Value::object(make(in, std::move(shape), "float32", site));
  record(OpKind::Unknown, name, inputs, r, site).detail =
      "input shape unknown here (after code the analysis could not follow); assumed [" + s + "] from the layer's weights";
  return r;
}

Value ForwardTracer::linear(Interpreter& in, const std::string& name, const Value& x_in, const Value& weight,
                            const Value& bias, bool weight_out_in, const ir::Span& site) {
  Value x = x_in;
  auto* ws = shape_of(weight);
  if (!shape_of(x) && ws && ws->size() == 2)
    x = resync(in, name, x, {workload_.batch, workload_.tokens, weight_out_in ? (*ws)[1] : (*ws)[0]}, {weight}, site);
  auto* xs = shape_of(x);
  std::vector<Value> inputs{x, weight};
  if (bias.as<TensorObj>()) inputs.push_back(bias);
  if (!xs || !ws || ws->size() != 2 || xs->empty())
    return record_unknown(in, name, inputs, "linear with unknown or unexpected shapes", site);
  int64_t in_features = weight_out_in ? (*ws)[1] : (*ws)[0];
  if (xs->back() != in_features)
    return record_unknown(in, name, inputs, "input features do not match the weight", site);
  bool has_bias = bias.as<TensorObj>() != nullptr;
  bool bias_1d = has_bias && shape_of(bias) && shape_of(bias)->size() == 1;
  std::string eq = ir::linear_equation(xs->size(), weight_out_in, has_bias, bias_1d);
  return contract(in, name, eq, inputs, site);
}

Value ForwardTracer::matmul(Interpreter& in, const std::string& name, const Value& a, const Value& b,
                            const ir::Span& site) {
  auto* as = shape_of(a);
  auto* bs = shape_of(b);
  if (!as || !bs || as->empty() || bs->empty()) return record_unknown(in, name, {a, b}, "matmul operand shapes unknown", site);
  auto eq = ir::matmul_equation(*as, *bs);
  if (!eq) return record_unknown(in, name, {a, b}, "matmul rank too high", site);
  if (as->size() > 1 && bs->size() > 1 && (*as)[as->size() - 1] != (*bs)[bs->size() - 2])
    return record_unknown(in, name, {a, b}, "matmul inner dims differ", site);
  return contract(in, name, *eq, {a, b}, site);
}

Value ForwardTracer::conv(Interpreter& in, const std::string& name, const Value& x_in, const Value& weight,
                          const Value& bias, const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                          const std::vector<int64_t>& dilation, int64_t groups, const ir::Span& site) {
  Value x = x_in;
  auto* ws = shape_of(weight);
  if (!shape_of(x) && ws && ws->size() >= 3 && ws->size() <= 5) {
    std::vector<int64_t> assumed{workload_.batch, (*ws)[1] * groups};
    for (size_t i = 2; i < ws->size(); ++i)
      assumed.push_back(ws->size() == 3 ? std::max<int64_t>(workload_.tokens, workload_.spatial[0] * workload_.spatial[1]) : workload_.spatial[(i - 2) % 2]);
    x = resync(in, name, x, assumed, {weight}, site);
  }
  auto* xs = shape_of(x);
  std::vector<Value> inputs{x, weight};
  if (bias.as<TensorObj>()) inputs.push_back(bias);
  if (!xs || !ws || xs->size() != ws->size() || xs->size() < 3)
    return record_unknown(in, name, inputs, "convolution with unknown shapes", site);
  size_t spatial = xs->size() - 2;
  static const char kSpatial[] = "HWD";
  static const char kKernel[] = "KLM";
  if (spatial > 3) return record_unknown(in, name, inputs, "convolution rank", site);
  std::vector<int64_t> out{(*xs)[0], (*ws)[0]};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t k = (*ws)[2 + i];
    int64_t size = ((*xs)[2 + i] + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i] + 1;
    out.push_back(size);
  }
  int64_t cin = (*xs)[1], cout = (*ws)[0];
  bool depthwise = groups > 1 && groups == cin && groups == cout;
  std::string sp(kSpatial, spatial), ker(kKernel, spatial);
  std::string eq;
  if (depthwise) eq = "ac" + sp + ",c1" + ker;
  else if (groups > 1) eq = "aC" + sp + ",NC" + ker;  // grouped: channels kept whole (uppercase)
  else eq = "ac" + sp + ",nc" + ker;
  std::string out_ch = depthwise ? "c" : groups > 1 ? "N" : "n";
  if (bias.as<TensorObj>()) eq += "," + out_ch;
  eq += "->a" + out_ch + sp;
  auto t = make(in, out, x.as<TensorObj>()->dtype, site);
  Value r = Value::object(t);
  auto& op = record(OpKind::Contract, name, inputs, r, site);
  op.equation = eq;
  op.groups = groups;
  return r;
}

Value ForwardTracer::attention(Interpreter& in, const std::string& name, const Value& q, const Value& k,
                               const Value& v, const ir::Span& site, bool causal_requested) {
  auto *qs = shape_of(q), *ks = shape_of(k), *vs = shape_of(v);
  if (!qs || !ks || !vs || qs->size() < 2 || vs->size() != qs->size())
    return record_unknown(in, name, {q, k, v}, "attention operand shapes unknown", site);
  auto out = *qs;
  out.back() = vs->back();
  Value r = Value::object(make(in, out, q.as<TensorObj>()->dtype, site));
  bool causal = causal_requested;
  // HF attention modules say so (`self.is_causal = True`) even where one query token makes
  // is_causal moot; a decode step reads keys of a cache longer than its one query token.
  if (!causal && !module_stack_.empty())
    if (InstanceObj* module = walk_[static_cast<size_t>(module_stack_.back())].module) {
      const Value* flag = module->find_attribute("is_causal");
      if (!flag && module->cls) flag = module->cls->lookup("is_causal");
      causal = flag && flag->kind == Value::Kind::Bool && flag->b;
    }
  if (!causal && ks->size() >= 2) causal = (*qs)[qs->size() - 2] == 1 && (*ks)[ks->size() - 2] > 1;
  record(OpKind::Attention, name, {q, k, v}, r, site).causal = causal;
  return r;
}

namespace {
Value child_module(InstanceObj& layer, const std::string& name) {
  for (auto& [key, child] : layer.module->modules)
    if (key == name && child) return Value::object(child);
  return Value::none();
}

// forward(x, other, ...), positionally or by keyword.
Value argument_of(CallArgs& args, size_t position, const char* name) {
  if (position < args.positional.size()) return args.positional[position];
  for (auto& [key, v] : args.keywords)
    if (key == name) return v;
  return Value::none();
}

Value first_of(const Value& v) {
  if (auto* t = TupleView::of(v); t && !t->items.empty()) return t->items[0];
  return v;
}
}  // namespace

// nn.MultiheadAttention as PyTorch computes it: a fused in-projection split into q, k, v,
// heads, the attention core, and the out-projection.
Value ForwardTracer::mha(Interpreter& in, InstanceObj& layer, CallArgs& args, const ir::Span& site) {
  auto find_param = [&](const std::string& key) { return layer_param(layer, key); };
  auto attr_int = [&](const char* key, int64_t fallback) {
    Value* v = layer.find_attribute(key);
    return v && v->is_int() ? v->as_int() : fallback;
  };
  bool batch_first = false;
  if (Value* bf = layer.find_attribute("batch_first")) batch_first = in.truth(*bf).value_or(false);
  // forward(query, key, value, ...): torchvision's ViT passes query=x, key=x, value=x.
  Value query = argument_of(args, 0, "query"), key = argument_of(args, 1, "key"), value = argument_of(args, 2, "value");
  auto same_tensor = [&](const Value& v) { return v.is_none() || v.as<TensorObj>() == query.as<TensorObj>(); };
  auto* qs = shape_of(query);
  Value w = find_param("in_proj_weight");
  if (!qs || qs->size() != 3 || !w.as<TensorObj>())
    return record_unknown(in, "MultiheadAttention", tensors_in(args), "MultiheadAttention with separate q/k/v weights or unknown shapes", site);
  if (!same_tensor(key) || !same_tensor(value))
    return record_unknown(in, "MultiheadAttention", tensors_in(args), "MultiheadAttention over keys and values other than its queries (cross-attention)", site);
  int64_t e = attr_int("embed_dim", qs->back()), h = attr_int("num_heads", 1);
  Value qkv = linear(in, "MultiheadAttention.in_proj", query, w, find_param("in_proj_bias"), true, site);
  std::vector<Value> segs;
  auto* s = shape_of(qkv);
  if (!s) return qkv;
  for (int i = 0; i < 3; ++i) {
    auto shape = *s;
    shape.back() = e;
    segs.push_back(Value::object(make(in, shape, qkv.as<TensorObj>()->dtype, site)));
  }
  {
    auto& op = record(OpKind::Split, "split", {qkv}, make_tuple(segs), site);
    op.dims = {static_cast<int>(s->size()) - 1};
    op.sizes = {e, e, e};
  }
  int64_t b = batch_first ? (*qs)[0] : (*qs)[1], l = batch_first ? (*qs)[1] : (*qs)[0];
  std::vector<Value> heads;
  for (auto& seg : segs) {
    // [.., E] -> [B, L, H, D] -> [B, H, L, D]
    auto split = Value::object(make(in, {b, l, h, e / h}, "float32", site));
    record(OpKind::Reshape, "view", {seg}, split, site);
    auto perm = Value::object(make(in, {b, h, l, e / h}, "float32", site));
    record(OpKind::Permute, "transpose", {split}, perm, site).dims = {0, 2, 1, 3};
    heads.push_back(perm);
  }
  Value core = attention(in, "MultiheadAttention.attention", heads[0], heads[1], heads[2], site);
  auto back = Value::object(make(in, {b, l, h, e / h}, "float32", site));
  record(OpKind::Permute, "transpose", {core}, back, site).dims = {0, 2, 1, 3};
  auto merged = Value::object(make(in, {b, l, e}, "float32", site));
  record(OpKind::Reshape, "reshape", {back}, merged, site);
  Value out_proj = child_module(layer, "out_proj");
  Value out = merged;
  if (auto* op = out_proj.as<InstanceObj>()) {
    auto it = module_index_.find(op);
    module_stack_.push_back(it != module_index_.end() ? it->second : module_stack_.back());
    out = linear(in, "Linear", merged, layer_param(*op, "weight"), layer_param(*op, "bias"), true, site);
    module_stack_.pop_back();
  }
  return make_tuple({out, Value::none()});
}

Value ForwardTracer::transformer_layer(Interpreter& in, InstanceObj& layer, bool decoder, CallArgs& args, const ir::Span& site) {
  auto call = [&](const char* name, CallArgs a) {
    Value m = child_module(layer, name);
    if (m.is_none()) return in.raise("AttributeError", std::string("the layer has no submodule '") + name + "'", site);
    return in.call(m, std::move(a), site);
  };
  auto call1 = [&](const char* name, const Value& x) { return call(name, CallArgs{{x}, {}}); };
  Value x = argument_of(args, 0, decoder ? "tgt" : "src");
  Value memory = decoder ? argument_of(args, 1, "memory") : Value::none();
  bool norm_first = false;
  if (Value* nf = layer.find_attribute("norm_first")) norm_first = in.truth(*nf).value_or(false);
  auto self_attention = [&](const Value& h) {
    return call1("dropout1", first_of(call("self_attn", CallArgs{{h, h, h}, {{"need_weights", Value::boolean(false)}}})));
  };
  auto cross_attention = [&](const Value& h) {
    return call1("dropout2", first_of(call("multihead_attn", CallArgs{{h, memory, memory}, {{"need_weights", Value::boolean(false)}}})));
  };
  auto activation = [&](const Value& h) {
    Value act = child_module(layer, "activation");
    if (act.is_none())
      if (Value* a = layer.find_attribute("activation")) act = *a;
    if (act.is_str()) {
      const Value* f = in.builtin("torch.nn.functional." + act.s);
      if (!f) return in.raise("RuntimeError", "activation should be relu/gelu, not " + act.s, site);
      act = *f;
    }
    return in.call(act, CallArgs{{h}, {}}, site);
  };
  auto feed_forward = [&](const Value& h) {
    Value y = activation(call1("linear1", h));
    return call1(decoder ? "dropout3" : "dropout2", call1("linear2", call1("dropout", y)));
  };
  auto add = [&](const Value& a, const Value& b) { return in.binary("+", a, b, site); };
  const char* last_norm = decoder ? "norm3" : "norm2";
  if (norm_first) {
    x = add(x, self_attention(call1("norm1", x)));
    if (decoder) x = add(x, cross_attention(call1("norm2", x)));
    return add(x, feed_forward(call1(last_norm, x)));
  }
  x = call1("norm1", add(x, self_attention(x)));
  if (decoder) x = call1("norm2", add(x, cross_attention(x)));
  return call1(last_norm, add(x, feed_forward(x)));
}

Value ForwardTracer::transformer_stack(Interpreter& in, InstanceObj& layer, bool decoder, CallArgs& args, const ir::Span& site) {
  Value x = argument_of(args, 0, decoder ? "tgt" : "src");
  Value memory = decoder ? argument_of(args, 1, "memory") : Value::none();
  Value layers = child_module(layer, "layers");
  auto items = in.iterate(layers, site);
  if (!items) return record_unknown(in, decoder ? "TransformerDecoder" : "TransformerEncoder", tensors_in(args), "its layers are not known", site);
  for (const Value& l : *items) {
    CallArgs a{{x}, {}};
    if (decoder) a.positional.push_back(memory);
    x = in.call(l, std::move(a), site);
  }
  Value norm = child_module(layer, "norm");
  return norm.is_none() ? x : in.call(norm, CallArgs{{x}, {}}, site);
}

Value ForwardTracer::builtin_layer(Interpreter& in, InstanceObj& layer, CallArgs& args, const ir::Span& site) {
  // The built-in class this layer is (user subclasses without a forward inherit its behaviour).
  std::string cls;
  for (auto* c : layer.cls->mro)
    if (c->is_builtin) { cls = c->name; break; }
  auto param = [&](const std::string& key) { return layer_param(layer, key); };
  Value x = args.positional.empty() ? Value() : args.positional[0];
  if (cls == "Sequential") {
    Value v = x;
    for (auto& [key, child] : layer.module->modules) {
      if (!child) continue;
      CallArgs next{{v}, {}};
      v = in.call(Value::object(child), next, site);
    }
    return v;
  }
  if (cls == "MultiheadAttention") return mha(in, layer, args, site);
  if (cls == "TransformerEncoderLayer" || cls == "TransformerDecoderLayer")
    return transformer_layer(in, layer, cls == "TransformerDecoderLayer", args, site);
  if (cls == "TransformerEncoder" || cls == "TransformerDecoder") return transformer_stack(in, layer, cls == "TransformerDecoder", args, site);
  std::vector<Value> inputs = tensors_in(args);
  // The layer's own weights are inputs too (what the first use of a forward input reveals).
  for (auto& [key, p] : layer.module->parameters)
    if (p) inputs.push_back(Value::object(p));
  static const std::set<std::string> weighted = {"Linear", "LayerNorm", "RMSNorm", "Conv1d", "Conv2d", "Conv3d"};
  if (!x.as<TensorObj>() && weighted.count(cls)) {
    auto t = in.new_tensor(std::nullopt, site);  // what a line the analysis lost would have produced
    t->why = std::make_shared<UnknownInfo>(UnknownInfo{cls + " input not known", site, false});
    x = Value::object(t);
  }
  if (!x.as<TensorObj>()) return record_unknown(in, cls, inputs, cls + " called without a tensor", site);
  auto* xs = shape_of(x);
  if (cls == "Linear") return linear(in, cls, x, param("weight"), param("bias"), true, site);
  if (cls == "Embedding") {
    auto* ws = shape_of(param("weight"));
    if (!xs || !ws) return record_unknown(in, cls, {x, param("weight")}, "embedding shapes unknown", site);
    auto out = *xs;
    out.push_back((*ws)[1]);
    Value r = Value::object(make(in, out, param("weight").as<TensorObj>()->dtype, site));
    record(OpKind::Embedding, cls, {x, param("weight")}, r, site);
    return r;
  }
  if (cls == "Conv1d" || cls == "Conv2d" || cls == "Conv3d") {
    size_t n = cls[4] - '0';
    auto attr = [&](const char* key, int64_t fallback) {
      Value* v = layer.find_attribute(key);
      return v ? ints_of(*v, n, fallback) : std::vector<int64_t>(n, fallback);
    };
    auto padding = attr("padding", 0);
    if (Value* p = layer.find_attribute("padding"); p && p->is_str() && p->s == "same") {
      auto* ws = shape_of(param("weight"));
      for (size_t i = 0; ws && i < n; ++i) padding[i] = ((*ws)[2 + i] - 1) / 2;
    }
    Value* g = layer.find_attribute("groups");
    return conv(in, cls, x, param("weight"), param("bias"), attr("stride", 1), padding, attr("dilation", 1),
                g && g->is_int() ? g->as_int() : 1, site);
  }
  if (cls == "LayerNorm" || cls == "RMSNorm" || cls == "GroupNorm" || cls.rfind("BatchNorm", 0) == 0 ||
      cls.rfind("InstanceNorm", 0) == 0 || cls == "LocalResponseNorm") {
    if (!xs && (cls == "LayerNorm" || cls == "RMSNorm") && shape_of(param("weight")) && shape_of(param("weight"))->size() == 1) {
      x = resync(in, cls, x, {workload_.batch, workload_.tokens, (*shape_of(param("weight")))[0]}, {param("weight")}, site);
      xs = shape_of(x);
    }
    if (!xs) return record_unknown(in, cls, inputs, "norm input shape unknown", site);
    std::vector<Value> extra;
    for (const char* k : {"weight", "bias"})
      if (param(k).as<TensorObj>()) extra.push_back(param(k));
    Value r = same_shape(in, OpKind::Norm, cls, x, extra, site);
    auto& op = flow_->ops.back();
    int rank = static_cast<int>(xs->size());
    if (cls == "GroupNorm") {
      Value* g = layer.find_attribute("num_groups");
      op.groups = g && g->is_int() ? g->as_int() : 1;
      for (int d = 1; d < rank; ++d) op.dims.push_back(d);
    } else if (cls.rfind("BatchNorm", 0) == 0) {
      // Inference batch norm uses running statistics: a per-channel affine map, no reduction.
    } else if (cls.rfind("InstanceNorm", 0) == 0) {
      for (int d = 2; d < rank; ++d) op.dims.push_back(d);
    } else {
      size_t k = 1;
      if (Value* ns = layer.find_attribute("normalized_shape"))
        if (auto* l = TupleView::of(*ns)) k = l->items.size();
      for (int d = rank - static_cast<int>(k); d < rank; ++d) op.dims.push_back(d);
    }
    return r;
  }
  if (cls == "Softmax" || cls == "LogSoftmax" || cls == "Softmin") {
    Value r = same_shape(in, OpKind::Softmax, cls, x, {}, site);
    Value* d = layer.find_attribute("dim");
    int64_t dim = d && d->is_int() ? d->as_int() : -1;
    flow_->ops.back().dims = {static_cast<int>(xs ? norm_dim(dim, xs->size()) : 0)};
    return r;
  }
  // nn.Identity is its input (TorchScript inlines it away, so the exact graph has no op for it either).
  if (cls == "Identity") return x;
  if (cls.rfind("Dropout", 0) == 0 || cls == "AlphaDropout")
    return same_shape(in, OpKind::Scale, cls, x, {}, site);
  static const std::set<std::string> activations = {"ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid",
                                                    "Hardtanh", "Hardswish", "Hardsigmoid", "LeakyReLU", "ELU",
                                                    "SELU", "CELU", "Softplus", "Softsign", "Tanhshrink",
                                                    "Threshold", "LogSigmoid", "PReLU", "RReLU", "Hardshrink",
                                                    "Softshrink"};
  if (activations.count(cls)) {
    std::vector<Value> extra;
    if (param("weight").as<TensorObj>()) extra.push_back(param("weight"));
    return same_shape(in, OpKind::Unary, cls, x, extra, site);
  }
  if (cls == "Upsample" || cls == "UpsamplingNearest2d" || cls == "UpsamplingBilinear2d") {
    if (!xs) return record_unknown(in, cls, inputs, "upsample input shape unknown", site);
    Value* sf = layer.find_attribute("scale_factor");
    double f = sf && sf->is_number() ? sf->as_float() : 2.0;
    auto out = *xs;
    for (size_t i = 2; i < out.size(); ++i) out[i] = static_cast<int64_t>(std::floor(static_cast<double>(out[i]) * f));
    Value r = Value::object(make(in, out, x.as<TensorObj>()->dtype, site));
    record(OpKind::Interpolate, cls, {x}, r, site);
    return r;
  }
  // A layer that is its torch.nn.functional form on the layer's arguments (pools, padding).
  auto as_functional = [&](const std::string& functional, CallArgs& fa) {
    NativeObj f;
    f.name = "torch.nn.functional." + functional;
    if (const Value* v = in.builtin(f.name); v && v->as<NativeObj>()) f.fn = v->as<NativeObj>()->fn;
    return native(in, f, fa, site);
  };
  if (cls.find("Pool") != std::string::npos && cls.rfind("LPPool", 0) != 0) {
    // nn.AdaptiveAvgPool1d(1) and friends are their functional form on the layer's arguments.
    std::string functional;
    for (char c : cls) {  // AdaptiveAvgPool1d -> adaptive_avg_pool1d
      if (std::isupper(static_cast<unsigned char>(c)) && !functional.empty()) functional += '_';
      functional += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    CallArgs fa{{x}, {}};
    for (const char* key : {"output_size", "kernel_size", "stride", "padding"})
      if (Value* v = layer.find_attribute(key)) fa.keywords.emplace_back(key, *v);
    return as_functional(functional, fa);
  }
  if (const size_t at = cls.find("Pad"); at != std::string::npos && cls.size() == at + 5 && cls[at + 3] >= '1' && cls[at + 3] <= '3' &&
                                          cls.back() == 'd') {
    // nn.ReflectionPad1d(3) and kin: F.pad with the padding on each of the last 1-3 dims.
    const int dims = cls[at + 3] - '0';
    Value padding = Value::none();
    if (Value* p = layer.find_attribute("padding")) padding = *p;
    std::vector<Value> pads;
    if (padding.is_int()) pads.assign(static_cast<size_t>(2 * dims), padding);
    else if (auto* l = TupleView::of(padding)) pads = l->items;
    if (pads.empty()) return record_unknown(in, cls, inputs, "padding of " + cls + " not known", site);
    CallArgs fa{{x, make_tuple(std::move(pads))}, {}};
    return as_functional("pad", fa);
  }
  if (cls == "Flatten") {
    CallArgs fa{{Value::integer(1), Value::integer(-1)}, {}};
    if (Value* s = layer.find_attribute("start_dim")) fa.positional[0] = *s;
    if (Value* e = layer.find_attribute("end_dim")) fa.positional[1] = *e;
    NativeObj flatten;
    flatten.name = "tensor.flatten";
    flatten.self = x;
    if (const NativeFn* f = in.method("tensor", "flatten")) flatten.fn = *f;
    return native(in, flatten, fa, site);
  }
  return record_unknown(in, cls, inputs, "nn." + cls + " is not modelled by the dataflow front end", site);
}

namespace {

void collect_returns(const Block& block, std::vector<const Stmt*>& out) {
  for (const auto& st : block) {
    if (!st) continue;
    if (st->kind == StmtKind::Return) out.push_back(st.get());
    if (st->kind == StmtKind::FunctionDef || st->kind == StmtKind::ClassDef) continue;  // their returns are theirs
    collect_returns(st->body, out);
    collect_returns(st->orelse, out);
    collect_returns(st->finalbody, out);
    for (const auto& h : st->handlers) collect_returns(h.body, out);
  }
}

// What a summarised forward returns, by the shape of its return statements: a tuple's element
// names when every return is a tuple literal of the same length (Mixtral's and Qwen-MoE's
// `return final_hidden_states, router_logits`), nothing when it returns one value.
std::vector<std::string> returned_tuple_names(const FunctionDef& def) {
  std::vector<const Stmt*> returns;
  collect_returns(def.body, returns);
  std::vector<std::string> names;
  for (const Stmt* r : returns) {
    if (!r->value || r->value->kind != ExprKind::Tuple || r->value->items.size() < 2) return {};
    if (!names.empty() && names.size() != r->value->items.size()) return {};
    names.resize(r->value->items.size());
    for (size_t i = 0; i < names.size(); ++i)
      if (r->value->items[i] && r->value->items[i]->kind == ExprKind::Name) names[i] = r->value->items[i]->name;
  }
  return names;
}

}  // namespace

// A mixture-of-experts layer written with a ModuleList of identical experts and a router whose
// output has one logit per expert. Its forward loops over experts with data-dependent token
// selections; whatever the loop looks like, the planner needs the same facts: the router, top-k,
// and one expert's body on its share of the tokens. Routing is assumed balanced.
Value ForwardTracer::routed_experts(Interpreter& in, InstanceObj& moe, int index, CallArgs& args, const ir::Span& site) {
  if (!moe.module || args.positional.empty()) return Value::none();
  Value x = args.positional[0];
  auto* xs = shape_of(x);
  if (!xs || xs->size() < 2) return Value::none();
  std::shared_ptr<InstanceObj> experts, router;
  int64_t count = 0;
  for (auto& [key, child] : moe.module->modules) {
    if (!child || !child->module) continue;
    bool list = false;
    for (auto* c : child->cls->mro) list |= c->is_builtin && c->name == "ModuleList";
    if (list && child->module->modules.size() >= 2) {
      auto first = module_index_.find(child->module->modules[0].second.get());
      if (first == module_index_.end()) continue;
      uint64_t h = model_.modules[first->second].structure_hash;
      bool same = true;
      for (auto& [k2, member] : child->module->modules) {
        auto it = module_index_.find(member.get());
        same &= it != module_index_.end() && model_.modules[it->second].structure_hash == h;
      }
      if (same) {
        experts = child;
        count = static_cast<int64_t>(child->module->modules.size());
      }
    }
  }
  if (!experts) return Value::none();
  for (auto& [key, child] : moe.module->modules) {
    if (!child || !child->module || child == experts) continue;
    for (auto& [pk, p] : child->module->parameters)
      if (p && p->shape && p->shape->size() == 2 && (*p->shape)[0] == count && (*p->shape)[1] == xs->back()) router = child;
  }
  if (!router) return Value::none();
  int64_t top_k = 0;
  for (const char* attr : {"top_k", "num_experts_per_tok", "topk", "n_activated_experts", "k", "num_selected"})
    if (Value* v = moe.find_attribute(attr); v && v->is_int() && top_k == 0) top_k = v->as_int();
  bool guessed_k = top_k <= 0;
  if (guessed_k) top_k = 2;

  size_t at = flow_->ops.size();
  {
    ir::Op call;
    call.kind = OpKind::Call;
    call.name = moe.cls->name;
    call.inputs.push_back(id_of(std::static_pointer_cast<TensorObj>(x.obj)));
    call.module = index;
    call.span = site;
    flow_->ops.push_back(std::move(call));
  }
  module_stack_.push_back(index);
  CallArgs router_args{{x}, {}};
  Value logits = in.call(Value::object(router), router_args, site);
  Value probs = x;
  if (auto* ls = shape_of(logits)) {
    auto out = *ls;
    out.back() = top_k;
    Value weights = Value::object(make(in, out, "float32", site));
    Value chosen = Value::object(make(in, out, "int64", site));
    auto& op = record(OpKind::TopK, "topk", {logits}, make_tuple({weights, chosen}), site);
    op.dims = {static_cast<int>(ls->size()) - 1};
    op.sizes = {top_k};
    probs = weights;
  }
  int64_t tokens = 1;
  for (size_t i = 0; i + 1 < xs->size(); ++i) tokens *= (*xs)[i];
  int64_t share = std::max<int64_t>(1, (tokens * top_k + count - 1) / count);
  size_t experts_at = flow_->ops.size();
  {
    ir::Op op;
    op.kind = OpKind::Experts;
    op.name = "experts";
    op.inputs = {id_of(std::static_pointer_cast<TensorObj>(x.obj))};
    if (probs.as<TensorObj>()) op.inputs.push_back(id_of(std::static_pointer_cast<TensorObj>(probs.obj)));
    op.sizes = {count, top_k, tokens, share};
    auto eit = module_index_.find(experts.get());
    op.module = eit == module_index_.end() ? index : eit->second;
    op.span = site;
    flow_->ops.push_back(std::move(op));
  }
  // One expert's body on its share of the tokens.
  Value routed = Value::object(make(in, {share, xs->back()}, x.as<TensorObj>()->dtype, site));
  CallArgs expert_args{{routed}, {}};
  in.call(Value::object(experts->module->modules[0].second), expert_args, site);
  Value out = Value::object(make(in, *xs, x.as<TensorObj>()->dtype, site));
  {
    auto& op = flow_->ops[experts_at];
    op.outputs = {new_version(std::static_pointer_cast<TensorObj>(out.obj))};
    op.end = static_cast<int>(flow_->ops.size());
    op.dims = {flow_->tensors.empty() ? 0 : id_of(std::static_pointer_cast<TensorObj>(routed.obj))};
  }
  module_stack_.pop_back();
  auto& call = flow_->ops[at];
  call.outputs = {id_of(std::static_pointer_cast<TensorObj>(out.obj))};
  call.end = static_cast<int>(flow_->ops.size());
  // Said once for every layer that has it (layers.*.block_sparse_moe), not once per layer.
  note(ir::module_pattern(model_.modules[index].name) + ": routed experts recognised (" + std::to_string(count) + " experts, top-" +
       std::to_string(top_k) + (guessed_k ? " assumed" : "") + ", balanced routing assumed); its forward's routing code is summarised, not traced");
  // A forward that returns (output, router_logits) gives the same tuple; what else it returns is not modelled.
  const Value* forward = moe.cls->lookup("forward");
  const auto* fn = forward ? forward->as<FunctionObj>() : nullptr;
  const std::vector<std::string> names = fn && fn->def ? returned_tuple_names(*fn->def) : std::vector<std::string>{};
  if (names.empty()) return out;
  std::vector<Value> items{out};
  for (size_t i = 1; i < names.size(); ++i)
    items.push_back(names[i].find("logits") != std::string::npos && logits.as<TensorObj>()
                        ? logits
                        : in.unknown("value " + std::to_string(i) + " returned by the summarised " + moe.cls->name + ".forward", site));
  return make_tuple(std::move(items));
}

Value ForwardTracer::module_call(Interpreter& in, const Value& callee, CallArgs& args, const ir::Span& site) {
  auto* inst = callee.as<InstanceObj>();
  const Value* forward = inst->cls->lookup("forward");
  bool user_forward = forward && (forward->as<FunctionObj>() != nullptr);
  auto it = module_index_.find(inst);
  int index = it == module_index_.end() ? (module_stack_.empty() ? 0 : module_stack_.back()) : it->second;
  if (!user_forward) {
    module_stack_.push_back(index);
    Value r = builtin_layer(in, *inst, args, site);
    module_stack_.pop_back();
    return r;
  }
  if (Value moe = routed_experts(in, *inst, index, args, site); !moe.is_none()) return moe;
  size_t at = flow_->ops.size();
  {
    ir::Op call;
    call.kind = OpKind::Call;
    call.name = inst->cls->name;
    for (auto& v : tensors_in(args)) call.inputs.push_back(id_of(std::static_pointer_cast<TensorObj>(v.obj)));
    call.module = index;
    call.span = site;
    flow_->ops.push_back(std::move(call));
  }
  auto finish = [&](const Value& r) {
    std::vector<Value> outs;
    collect_tensors(r, outs);
    auto& call = flow_->ops[at];
    for (auto& v : outs) call.outputs.push_back(id_of(std::static_pointer_cast<TensorObj>(v.obj)));
    call.end = static_cast<int>(flow_->ops.size());
  };
  // The root's own call runs once: only the calls inside it are looked up and kept.
  bool memo = replay_ && !frames_.empty();
  std::vector<const TensorObj*> arg_tensors;
  uint64_t key = 0;
  if (memo) key = call_key(*inst, index, args, arg_tensors, memo);
  if (memo) {
    Value r;
    if (replay_call(key, *inst, arg_tensors, r)) {
      finish(r);
      if (probe_inputs_) probe_inputs();
      return r;
    }
  }
  const size_t first_tensor = flow_->tensors.size(), first_note = flow_->notes.size(), events = in.events().size();
  frames_.push_back({Object::serials_issued(), reads_.size(), true, in.call_depth(), in.deepest_call()});
  in.set_deepest_call(in.call_depth());
  module_stack_.push_back(index);
  Value bound = in.get_attribute(callee, "forward", site);
  Value r = in.call(bound, args, site);
  module_stack_.pop_back();
  const CallFrame frame = frames_.back();
  frames_.pop_back();
  if (frames_.empty() && !frame.pure) changed_prior_state_ = true;
  const int depth_used = in.deepest_call() - frame.depth;
  in.set_deepest_call(std::max(frame.outer_deepest, in.deepest_call()));
  finish(r);
  if (probe_inputs_) probe_inputs();
  // A run that reached the call depth limit was cut short there: a replay elsewhere would not be.
  if (memo && frame.pure && !in.exception_pending() && in.events().size() == events && frame.depth + depth_used < in.max_call_depth())
    remember_call(key, *inst, frame, depth_used, at + 1, first_tensor, first_note, arg_tensors, r);
  // Reads matter to the calls in progress only; under the root nothing is kept.
  if (frames_.size() <= 1) reads_.clear();
  return r;
}

Value ForwardTracer::native(Interpreter& in, const NativeObj& fn, CallArgs& args, const ir::Span& site) {
  const std::string name = short_name(fn.name);
  const bool method = fn.name.rfind("tensor.", 0) == 0;
  const Value* self = method ? &fn.self : nullptr;
  std::vector<Value> inputs = tensors_in(args, self);
  auto arg = [&](size_t pos, const char* key) -> Value {
    // Positional arguments count from the tensor for functions, from after it for methods.
    const Value* v = argument(args, pos, key);
    return v ? *v : Value();
  };
  auto call_original = [&] {
    if (fn.fn) return fn.fn(in, fn.self, args, site);
    auto t = in.new_tensor(std::nullopt, site);
    t->why = std::make_shared<UnknownInfo>(UnknownInfo{"Tensor." + name + "() is not modelled", site, false});
    return Value::object(t);
  };
  Value x = method ? fn.self : arg(0, "input");
  size_t a0 = method ? 0 : 1;  // index of the first argument after the tensor

  if (inputs.empty() && !kCreateNames.count(name)) return call_original();
  // A built-in layer's forward reached through super() (Whisper's LayerNorm subclass): the layer
  // records its own op; the call adds nothing. Python's container builtins move tensors around
  // without computing (next(iter(self.parameters())).dtype); map and filter call their function,
  // whose tensor operations are traced (vit-pytorch's map(lambda t: rearrange(t, ...), qkv)).
  static const std::set<std::string> kContainerBuiltins = {"builtins.iter", "builtins.next", "builtins.list", "builtins.tuple",
                                                           "builtins.len", "builtins.enumerate", "builtins.zip", "builtins.reversed",
                                                           "builtins.id", "builtins.isinstance", "builtins.getattr", "builtins.hasattr",
                                                           "builtins.map", "builtins.filter"};
  if ((name == "forward" && !method) || kContainerBuiltins.count(fn.name)) return call_original();

  if (name == "linear") return linear(in, "F.linear", x, arg(1, "weight"), arg(2, "bias"), true, site);
  if (name == "matmul" || name == "mm" || name == "bmm") {
    Value a = method ? fn.self : arg(0, "input"), b = arg(a0, method ? "other" : "mat2");
    if (b.is_none()) b = arg(a0, "other");
    return matmul(in, name, a, b, site);
  }
  if (name == "addmm") {
    Value r = matmul(in, "addmm", arg(1, "mat1"), arg(2, "mat2"), site);
    if (auto* bias = arg(0, "input").as<TensorObj>(); bias && r.as<TensorObj>() && !flow_->ops.back().equation.empty()) {
      auto& op = flow_->ops.back();
      op.inputs.push_back(id_of(std::static_pointer_cast<TensorObj>(arg(0, "input").obj)));
      op.equation.insert(op.equation.find("->"), std::string(",") + (bias->shape && bias->shape->size() == 1 ? "n" : "mn"));
    }
    return r;
  }
  if (name == "baddbmm") {
    // input + batch1 @ batch2 (BLOOM adds its ALiBi bias to the scores so): the product, then
    // a broadcasting add (beta and alpha are scalars: they move no data).
    Value input = method ? fn.self : arg(0, "input");
    Value product = matmul(in, "baddbmm", arg(a0, "batch1"), arg(a0 + 1, "batch2"), site);
    if (!product.as<TensorObj>() || !input.as<TensorObj>()) return product;
    return binary(in, "+", input, product, site);
  }
  if (name == "einsum") {
    Value eqv = arg(0, "equation");
    std::vector<Value> operands;
    for (size_t i = 1; i < args.positional.size(); ++i) collect_tensors(args.positional[i], operands);
    if (!eqv.is_str()) return record_unknown(in, "einsum", operands, "einsum equation not a constant", site);
    std::vector<const ir::Shape*> shapes;
    for (auto& operand : operands) shapes.push_back(shape_of(operand));
    return contract(in, "einsum", ir::einsum_equation(eqv.s, shapes), operands, site);
  }
  if (name == "embedding") {
    Value ids = arg(0, "input"), w = arg(1, "weight");
    auto *is = shape_of(ids), *ws = shape_of(w);
    if (!is || !ws) return record_unknown(in, "F.embedding", inputs, "embedding shapes unknown", site);
    auto out = *is;
    out.push_back((*ws)[1]);
    Value r = Value::object(make(in, out, w.as<TensorObj>()->dtype, site));
    record(OpKind::Embedding, "F.embedding", {ids, w}, r, site);
    return r;
  }
  if (name == "conv1d" || name == "conv2d" || name == "conv3d") {
    size_t n = name[4] - '0';
    Value g = arg(6, "groups");
    return conv(in, "F." + name, x, arg(1, "weight"), arg(2, "bias"), ints_of(arg(3, "stride"), n, 1),
                ints_of(arg(4, "padding"), n, 0), ints_of(arg(5, "dilation"), n, 1), g.is_int() ? g.as_int() : 1, site);
  }
  if (name == "scaled_dot_product_attention") {
    const Value is_causal = arg(5, "is_causal");
    return attention(in, "F.scaled_dot_product_attention", arg(0, "query"), arg(1, "key"), arg(2, "value"), site,
                     is_causal.kind == Value::Kind::Bool && is_causal.b);
  }
  if (name == "layer_norm" || name == "rms_norm" || name == "group_norm" || name == "batch_norm" ||
      name == "instance_norm" || name == "normalize") {
    auto* xs = shape_of(x);
    if (!xs) return record_unknown(in, "F." + name, inputs, "norm input shape unknown", site);
    std::vector<Value> extra(inputs.begin() + 1, inputs.end());
    Value r = same_shape(in, OpKind::Norm, "F." + name, x, extra, site);
    auto& op = flow_->ops.back();
    int rank = static_cast<int>(xs->size());
    if (name == "group_norm") {
      op.groups = int_arg(args, 1, "num_groups").value_or(1);
      for (int d = 1; d < rank; ++d) op.dims.push_back(d);
    } else if (name == "normalize") {
      op.dims = {static_cast<int>(norm_dim(int_arg(args, 2, "dim").value_or(1), xs->size()))};
    } else if (name == "layer_norm" || name == "rms_norm") {
      Value ns = arg(1, "normalized_shape");
      size_t k = TupleView::of(ns) ? TupleView::of(ns)->items.size() : 1;
      for (int d = rank - static_cast<int>(k); d < rank; ++d) op.dims.push_back(d);
    }
    return r;
  }
  if (name == "softmax" || name == "log_softmax" || name == "softmin") {
    auto* xs = shape_of(x);
    if (!xs) return record_unknown(in, name, inputs, "softmax input shape unknown", site);
    Value r = same_shape(in, OpKind::Softmax, name, x, {}, site);
    flow_->ops.back().dims = {static_cast<int>(norm_dim(int_arg(args, a0, "dim").value_or(-1), xs->size()))};
    return r;
  }
  if (name == "glu") {
    auto* xs = shape_of(x);
    if (!xs) return record_unknown(in, name, inputs, "glu input shape unknown", site);
    auto out = *xs;
    int64_t d = norm_dim(int_arg(args, a0, "dim").value_or(-1), out.size());
    out[d] /= 2;
    Value r = Value::object(make(in, out, x.as<TensorObj>()->dtype, site));
    record(OpKind::Unknown, "glu", {x}, r, site).detail = "glu splits its input in two halves";
    return r;
  }
  if (kSpatialNames.count(name)) {
    auto* xs = shape_of(x);
    if (!xs || xs->size() < 3) return record_unknown(in, name, inputs, name + " input shape unknown", site);
    auto out = *xs;
    if (name == "interpolate" || name == "upsample") {
      Value sf = arg(a0 + 1, "scale_factor"), size = arg(a0, "size");
      if (sf.is_number())
        for (size_t i = 2; i < out.size(); ++i) out[i] = static_cast<int64_t>(std::floor(static_cast<double>(out[i]) * sf.as_float()));
      else if (auto s = ints_of(size, out.size() - 2, -1); s[0] > 0)
        for (size_t i = 2; i < out.size(); ++i) out[i] = s[i - 2];
    } else if (name == "pad") {
      auto p = ints_of(arg(1, "pad"), 0, 0);
      if (auto* l = TupleView::of(arg(1, "pad"))) {
        for (size_t i = 0; i + 1 < l->items.size(); i += 2) {
          size_t d = out.size() - 1 - i / 2;
          if (l->items[i].is_int() && l->items[i + 1].is_int()) out[d] += l->items[i].as_int() + l->items[i + 1].as_int();
        }
      }
    } else if (name.find("pool") != std::string::npos && name.size() > 2 && name[name.size() - 2] >= '1' && name[name.size() - 2] <= '3') {
      // The last 1, 2 or 3 dims are pooled: to output_size (None keeps a dim) for adaptive pools, to
      // (n + 2 padding - kernel) // stride + 1 for the others (stride defaults to the kernel).
      const size_t pooled = static_cast<size_t>(name[name.size() - 2] - '0');
      if (out.size() < pooled + 1) return record_unknown(in, name, inputs, name + " input has too few dims", site);
      auto per_dim = [&](const Value& v, size_t k, int64_t fallback) -> std::optional<int64_t> {
        if (v.is_int()) return v.as_int();
        auto* l = TupleView::of(v);
        if (!l || (k < l->items.size() && l->items[k].is_none())) return fallback;
        if (k >= l->items.size() || !l->items[k].is_int()) return std::nullopt;
        return l->items[k].as_int();
      };
      const bool adaptive = name.rfind("adaptive_", 0) == 0;
      for (size_t k = 0; k < pooled; ++k) {
        const size_t d = out.size() - pooled + k;
        std::optional<int64_t> size;
        if (adaptive) {
          Value o = arg(a0, "output_size");
          size = o.is_none() || o.is_unknown() ? std::nullopt : per_dim(o, k, out[d]);
        } else {
          auto kernel = per_dim(arg(a0, "kernel_size"), k, -1);
          Value stride_arg = arg(a0 + 1, "stride");
          auto stride = stride_arg.is_none() || stride_arg.is_unknown() ? kernel : per_dim(stride_arg, k, -1);
          auto padding = per_dim(arg(a0 + 2, "padding"), k, 0);
          if (kernel && stride && padding && *kernel > 0 && *stride > 0) size = (out[d] + 2 * *padding - *kernel) / *stride + 1;
        }
        if (!size || *size <= 0) return record_unknown(in, name, inputs, name + " arguments could not be read", site);
        out[d] = *size;
      }
    } else {
      return record_unknown(in, name, inputs, name + " output shape is not modelled", site);
    }
    Value r = Value::object(make(in, out, x.as<TensorObj>()->dtype, site));
    record(OpKind::Interpolate, name, {x}, r, site);
    return r;
  }
  if (name == "topk" || name == "argmax" || name == "argmin" || name == "sort" || name == "argsort") {
    auto* xs = shape_of(x);
    if (!xs || xs->empty()) return record_unknown(in, name, inputs, name + " input shape unknown", site);
    int64_t k = name == "topk" ? int_arg(args, a0, "k").value_or(1) : 1;
    int64_t dim = norm_dim(int_arg(args, name == "topk" ? a0 + 1 : a0, "dim").value_or(-1), xs->size());
    auto out = *xs;
    bool keep = name == "topk" || name == "sort" || name == "argsort";
    if (name == "sort" || name == "argsort") k = out[dim];
    if (keep) out[dim] = k;
    else out.erase(out.begin() + dim);
    auto values = make(in, out, x.as<TensorObj>()->dtype, site);
    auto indices = make(in, out, "int64", site);
    Value r = name == "topk" || name == "sort" ? make_tuple({Value::object(values), Value::object(indices)})
                                               : Value::object(indices);
    auto& op = record(OpKind::TopK, name, {x}, r, site);
    op.dims = {static_cast<int>(dim)};
    op.sizes = {k};
    index_range_[op.outputs.back()] = (*xs)[dim];
    return r;
  }
  if (name == "where" && args.positional.size() + (method ? 1 : 0) == 1) {
    // torch.where(cond): indices of the true entries, as many as the routing selects.
    auto* cs = shape_of(x);
    if (!cs) return record_unknown(in, "where", inputs, "condition shape unknown", site);
    int cid = id_of(std::static_pointer_cast<TensorObj>(x.obj));
    double fraction = true_fraction_.count(cid) ? true_fraction_[cid] : 0.5;
    int64_t total = 1;
    for (auto d : *cs) total *= d;
    int64_t count = std::max<int64_t>(1, static_cast<int64_t>(std::llround(static_cast<double>(total) * fraction)));
    std::vector<Value> parts;
    for (size_t i = 0; i < cs->size(); ++i) parts.push_back(Value::object(make(in, {count}, "int64", site)));
    Value r = make_tuple(parts);
    auto& op = record(OpKind::Create, "where", {x}, r, site);
    for (int o : op.outputs) {
      flow_->tensors[o].data_dependent = true;
    }
    for (size_t i = 0; i < cs->size(); ++i) index_range_[op.outputs[i]] = (*cs)[i];
    return r;
  }
  if (name == "where") {
    Value cond = arg(0, "condition");
    std::vector<Value> ops = inputs;
    auto* a = shape_of(arg(method ? 0 : 1, "input")), *b = shape_of(arg(method ? 1 : 2, "other"));
    const ir::Shape* s = a ? a : b;
    if (!s) return record_unknown(in, "where", inputs, "operand shapes unknown", site);
    auto out = *s;
    for (auto* other : {a, b, shape_of(cond)})
      if (other && other->size() == out.size())
        for (size_t i = 0; i < out.size(); ++i) out[i] = std::max(out[i], (*other)[i]);
    Value r = Value::object(make(in, out, "float32", site));
    record(OpKind::Unary, "where", ops, r, site);
    return r;
  }
  if (name == "one_hot") {
    auto* xs = shape_of(x);
    auto c = int_arg(args, 1, "num_classes");
    if (!xs || !c) return record_unknown(in, "one_hot", inputs, "one_hot shape unknown", site);
    auto out = *xs;
    out.push_back(*c);
    Value r = Value::object(make(in, out, "int64", site));
    record(OpKind::Create, "one_hot", {x}, r, site);
    return r;
  }
  if (name == "cat" || name == "concat" || name == "concatenate" || name == "stack") {
    std::vector<Value> parts;
    collect_tensors(arg(0, "tensors"), parts);
    int64_t dim = int_arg(args, 1, "dim").value_or(0);
    bool stack = name == "stack";
    if (parts.empty() || !shape_of(parts[0])) {
      Value r = record_unknown(in, name, parts, "operand shapes unknown", site);
      // Where the stacked dim goes is known without the shape when it counts from the front (first_use).
      if (stack && dim >= 0) flow_->ops.back().dims = {static_cast<int>(dim)};
      return r;
    }
    auto out = *shape_of(parts[0]);
    int64_t d = norm_dim(dim, out.size() + (stack ? 1 : 0));
    if (stack) out.insert(out.begin() + d, static_cast<int64_t>(parts.size()));
    else {
      out[d] = 0;
      for (auto& p : parts) {
        auto* s = shape_of(p);
        if (!s || s->size() != out.size()) return record_unknown(in, name, parts, "operand shapes unknown", site);
        out[d] += (*s)[d];
      }
    }
    Value r = Value::object(make(in, out, parts[0].as<TensorObj>()->dtype, site));
    // Small tensors of known values keep them (Wan stacks each video's [F, H, W] grid, then reads it back with tolist()).
    if (auto* made = r.as<TensorObj>(); made && made->shape && made->numel() <= 4096) {
      int64_t outer = 1;
      for (int64_t i = 0; i < d; ++i) outer *= out[static_cast<size_t>(i)];
      std::vector<double> values;
      bool known = true;
      for (int64_t o = 0; o < outer && known; ++o)
        for (auto& p : parts) {
          auto* pt = p.as<TensorObj>();
          if (!pt->values || static_cast<int64_t>(pt->values->size()) != pt->numel()) { known = false; break; }
          const int64_t chunk = pt->numel() / outer;
          values.insert(values.end(), pt->values->begin() + o * chunk, pt->values->begin() + (o + 1) * chunk);
        }
      if (known && static_cast<int64_t>(values.size()) == made->numel()) made->values = std::move(values);
    }
    auto& op = record(OpKind::Concat, name, parts, r, site);
    op.dims = {static_cast<int>(d)};
    if (stack) op.sizes = {1};  // stack: a new dim of size parts.size() at dims[0]
    return r;
  }
  if (name == "split" || name == "chunk" || name == "unbind" || name == "tensor_split" || name == "split_with_sizes") {
    auto* xs = shape_of(x);
    if (!xs) return record_unknown(in, name, inputs, name + " input shape unknown", site);
    int64_t dim = norm_dim(int_arg(args, name == "unbind" ? a0 : a0 + 1, "dim").value_or(0), xs->size());
    if (dim < 0 || dim >= static_cast<int64_t>(xs->size())) return record_unknown(in, name, inputs, "dim out of range", site);
    int64_t n = (*xs)[dim];
    std::vector<int64_t> sizes;
    if (name == "unbind") sizes.assign(n, 1);
    else if (name == "chunk") {
      int64_t k = int_arg(args, a0, "chunks").value_or(1);
      int64_t each = (n + k - 1) / k;
      for (int64_t at = 0; at < n; at += each) sizes.push_back(std::min(each, n - at));
    } else {
      Value s = arg(a0, name == "split" ? "split_size_or_sections" : name == "split_with_sizes" ? "split_sizes" : "sections");
      if (s.is_int()) {
        int64_t each = s.as_int();
        if (name == "tensor_split") {
          int64_t k = each;
          each = (n + k - 1) / k;
        }
        for (int64_t at = 0; at < n && each > 0; at += each) sizes.push_back(std::min(each, n - at));
      } else if (auto* l = TupleView::of(s)) {
        for (auto& item : l->items) sizes.push_back(item.is_int() ? item.as_int() : 0);
      }
    }
    if (sizes.empty()) return record_unknown(in, name, inputs, "split sizes unknown", site);
    std::vector<Value> parts;
    for (auto sz : sizes) {
      auto out = *xs;
      if (name == "unbind") out.erase(out.begin() + dim);
      else out[dim] = sz;
      parts.push_back(Value::object(make(in, out, x.as<TensorObj>()->dtype, site)));
    }
    Value r = make_tuple(parts);
    auto& op = record(OpKind::Split, name, {x}, r, site);
    op.dims = {static_cast<int>(dim)};
    op.sizes = sizes;
    op.linear = name == "unbind";  // the split dim disappears
    return r;
  }
  if (name == "repeat_interleave") {
    auto* xs = shape_of(x);
    auto reps = int_arg(args, a0, "repeats");
    auto dim = int_arg(args, a0 + 1, "dim");
    if (!xs || !reps || !dim) return record_unknown(in, name, inputs, "repeat_interleave arguments unknown", site);
    auto out = *xs;
    int64_t d = norm_dim(*dim, out.size());
    out[d] *= *reps;
    Value r = Value::object(make(in, out, x.as<TensorObj>()->dtype, site));
    auto& op = record(OpKind::Repeat, name, {x}, r, site);
    op.dims = {static_cast<int>(d)};
    op.sizes = {*reps};
    return r;
  }
  if (name == "index_add" || name == "index_add_" || name == "scatter_add" || name == "scatter_add_" ||
      name == "index_put_" || name == "index_copy_" || name == "scatter_" || name == "scatter") {
    Value r = method && name.back() == '_' ? fn.self : Value::object(make(in, shape_of(x) ? *shape_of(x) : ir::Shape{}, x.as<TensorObj>()->dtype, site));
    auto& op = record(OpKind::Accumulate, name, inputs, r, site);
    op.dims = {static_cast<int>(int_arg(args, a0, "dim").value_or(0))};
    op.linear = name.find("add") != std::string::npos;
    return r;
  }
  if (name == "gather" || name == "index_select") {
    Value r = call_original();
    auto* xs = shape_of(x);
    auto idx = argument(args, a0 + 1, "index");
    if (xs && idx && shape_of(*idx)) {
      int64_t d = norm_dim(int_arg(args, a0, "dim").value_or(0), xs->size());
      auto out = *xs;
      if (name == "index_select") out[d] = (*shape_of(*idx))[0];
      else out = *shape_of(*idx);
      r = Value::object(make(in, out, x.as<TensorObj>()->dtype, site));
      auto& op = record(OpKind::Gather, name, inputs, r, site);
      op.dims = {static_cast<int>(d)};
      return r;
    }
    return record_unknown(in, name, inputs, name + " shapes unknown", site);
  }

  // A weight cast to the activations' dtype or moved to their device (Whisper's Linear:
  // F.linear(x, self.weight.to(x.dtype))) is still the weight: the planner shards it as one.
  // (Buffers are not: an int position table made float is another tensor.)
  static const std::set<std::string> kCasts = {"to", "float", "half", "bfloat16", "double", "type", "type_as", "contiguous", "detach", "cpu", "cuda"};
  if (kCasts.count(name) && shape_of(x))
    if (auto* t = x.as<TensorObj>(); t && parameter_index_.count(t)) return x;
  // torch.pow(base, exponent) with two tensors broadcasts like ** (Bloom's ALiBi slopes: a 0-d base
  // raised to [heads] powers), and so does a number raised to a tensor (sinusoidal frequencies:
  // torch.pow(10000, -torch.arange(half) / half)); a tensor to a number keeps its shape, as the
  // unary ops below.
  if (name == "pow" || name == "float_power") {
    const Value base = method ? fn.self : arg(0, "input"), exponent = arg(a0, "exponent");
    if (exponent.as<TensorObj>() && (base.as<TensorObj>() || base.is_number())) return binary(in, "**", base, exponent, site);
  }
  if ((kUnaryNames.count(name) || kScaleNames.count(name)) && x.as<TensorObj>() && !shape_of(x) && name.back() != '_')
    // The result follows from its input even while neither shape is known: recorded, so that what
    // reads the input (first_use) and the strides after it are followed through activations.
    return record_unknown(in, name, inputs, x.as<TensorObj>()->why ? x.as<TensorObj>()->why->reason : name + " of a tensor whose shape is unknown", site);
  if ((kUnaryNames.count(name) || kScaleNames.count(name)) && shape_of(x)) {
    // Elementwise: the shape of the tensor operand (F.gelu and friends return unknown shapes during
    // extraction; while tracing they are computed here).
    // type_as(other) / to(other) read only other's dtype: it is not an operand.
    std::vector<Value> extra;
    if (name != "type_as" && name != "to") extra.assign(inputs.begin() + 1, inputs.end());
    Value r = same_shape(in, kScaleNames.count(name) ? OpKind::Scale : OpKind::Unary, name, x, extra, site);
    if (name.back() == '_' && method) {
      // In place: the receiver now holds the result.
      mutated(x.as<TensorObj>());
      version_[x.as<TensorObj>()] = flow_->ops.back().outputs[0];
      return x;
    }
    return r;
  }
  // Everything else: the original shape logic, then classify.
  Value r = call_original();
  std::vector<Value> outs;
  collect_tensors(r, outs);
  if (outs.empty()) return r;
  if (kCreateNames.count(name)) {
    record(OpKind::Create, name, inputs, r, site);
    return r;
  }
  bool out_known = shape_of(outs[0]) != nullptr;
  if (!out_known || !shape_of(x)) {
    std::string why = outs[0].as<TensorObj>()->why ? outs[0].as<TensorObj>()->why->reason : name + "() output shape unknown";
    auto& op = record(OpKind::Unknown, name, inputs, r, site);
    op.detail = why;
    if (name == "unsqueeze")  // the new dim's place is known without the shape when it counts from the front
      if (auto d = int_arg(args, a0, "dim"); d && *d >= 0) op.dims = {static_cast<int>(*d)};
    return r;
  }
  const auto& xs = *shape_of(x);
  const auto& os = *shape_of(outs[0]);
  if (kReshapeNames.count(name)) {
    record(OpKind::Reshape, name, inputs, r, site);
    return r;
  }
  if (name == "transpose" || name == "swapaxes" || name == "t" || name == "permute" || name == "movedim") {
    std::vector<int> order(xs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    // The dims follow the tensor: args[a0] on for torch.transpose(x, 0, 1) as for x.transpose(0, 1).
    if (name == "permute") {
      std::vector<Value> dims(args.positional.begin() + static_cast<long>(std::min(a0, args.positional.size())), args.positional.end());
      if (dims.empty())
        if (const Value* d = argument(args, a0, "dims")) dims = {*d};
      if (dims.size() == 1 && TupleView::of(dims[0])) dims = TupleView::of(dims[0])->items;
      for (size_t i = 0; i < dims.size() && i < order.size(); ++i)
        order[i] = static_cast<int>(norm_dim(dims[i].is_int() ? dims[i].as_int() : static_cast<int64_t>(i), xs.size()));
    } else if (name == "t") {
      if (order.size() == 2) std::swap(order[0], order[1]);
    } else if (name == "movedim") {
      // One dim moved to a new place, the others keeping their order.
      auto from = int_arg(args, a0, "source"), to = int_arg(args, a0 + 1, "destination");
      const int64_t rank = static_cast<int64_t>(xs.size());
      const int64_t f = from ? norm_dim(*from, xs.size()) : -1, d = to ? norm_dim(*to, xs.size()) : -1;
      if (f >= 0 && d >= 0 && f < rank && d < rank) {
        order.erase(order.begin() + f);
        order.insert(order.begin() + d, static_cast<int>(f));
      }
    } else {
      int64_t a = norm_dim(int_arg(args, a0, "dim0").value_or(0), xs.size());
      int64_t b = norm_dim(int_arg(args, a0 + 1, "dim1").value_or(1), xs.size());
      if (a >= 0 && b >= 0 && a < static_cast<int64_t>(order.size()) && b < static_cast<int64_t>(order.size()))
        std::swap(order[a], order[b]);
    }
    record(OpKind::Permute, name, inputs, r, site).dims = order;
    return r;
  }
  if (name == "expand" || name == "expand_as" || name == "repeat" || name == "broadcast_to") {
    auto& op = record(OpKind::Repeat, name, inputs, r, site);
    for (size_t i = 0; i < os.size(); ++i) {
      size_t j = i + xs.size() - os.size();
      if (i + xs.size() < os.size() || xs[j] != os[i]) op.dims.push_back(static_cast<int>(i));
    }
    op.sizes = {0};
    return r;
  }
  if (kReduceLinear.count(name) || kReduceOther.count(name)) {
    auto& op = record(OpKind::Reduce, name, {x}, r, site);
    op.linear = kReduceLinear.count(name) > 0;
    const Value* d = argument(args, a0, "dim");
    if (!d || d->is_none()) {
      for (size_t i = 0; i < xs.size(); ++i) op.dims.push_back(static_cast<int>(i));
    } else if (auto* l = TupleView::of(*d)) {
      for (auto& item : l->items)
        if (item.is_int()) op.dims.push_back(static_cast<int>(norm_dim(item.as_int(), xs.size())));
    } else if (d->is_int()) {
      op.dims.push_back(static_cast<int>(norm_dim(d->as_int(), xs.size())));
    }
    return r;
  }
  if ((name == "mul" || name == "div" || name == "add" || name == "sub" || name == "mul_" || name == "add_" ||
       name == "div_" || name == "sub_")) {
    bool both = inputs.size() >= 2;
    OpKind k = name[0] == 'a' || name[0] == 's' ? (both ? OpKind::Add : OpKind::Unary) : (both ? OpKind::Mul : OpKind::Scale);
    record(k, name, inputs, r, site);
    return r;
  }
  record(OpKind::Unknown, name, inputs, r, site).detail = name + "() is not modelled by the planner";
  return r;
}

Value ForwardTracer::binary(Interpreter& in, const std::string& op, const Value& a, const Value& b,
                            const ir::Span& site) {
  if (op == "@") return matmul(in, "@", a, b, site);
  const NativeFn* f = in.method("tensor", "__binary__");
  CallArgs args{{a, b, Value::str(op)}, {}};
  Value r = (*f)(in, Value(), args, site);
  if (!r.as<TensorObj>()) return r;
  std::vector<Value> inputs;
  if (a.as<TensorObj>()) inputs.push_back(a);
  if (b.as<TensorObj>()) inputs.push_back(b);
  OpKind kind;
  static const std::set<std::string> comparisons = {"<", "<=", ">", ">=", "==", "!="};
  if (comparisons.count(op) || op == "&" || op == "|" || op == "^") kind = OpKind::Unary;
  else if (op == "+" || op == "-") kind = inputs.size() == 2 ? OpKind::Add : OpKind::Unary;
  else if (op == "*" || op == "/") kind = inputs.size() == 2 ? OpKind::Mul : (op == "/" && !a.as<TensorObj>() ? OpKind::Unary : OpKind::Scale);
  else kind = OpKind::Unary;  // **, //, %
  auto& rec = record(kind, op, inputs, r, site);
  if (op == "==" && inputs.size() == 1) {
    // Comparing routing indices with one expert id: true for 1/range of the entries.
    int src = rec.inputs[0];
    if (index_range_.count(src) && index_range_[src] > 0) true_fraction_[rec.outputs[0]] = 1.0 / static_cast<double>(index_range_[src]);
  }
  return r;
}

Value ForwardTracer::unary(Interpreter& in, const std::string& op, const Value& v, const ir::Span& site) {
  const NativeFn* f = in.method("tensor", "__unary__");
  CallArgs args{{v, Value::str(op)}, {}};
  Value r = (*f)(in, v, args, site);
  if (r.as<TensorObj>()) record(op == "-" || op == "+" ? OpKind::Scale : OpKind::Unary, op, {v}, r, site);
  return r;
}

Value ForwardTracer::subscript(Interpreter& in, const Value& target, const Value& index, const ir::Span& site) {
  const NativeFn* f = in.method("tensor", "__getitem__");
  std::vector<Value> items;
  if (index.kind == Value::Kind::Obj && index.obj->kind == ObjKind::Tuple) items = TupleView::of(index)->items;
  else items.push_back(index);
  std::vector<Value> index_tensors;
  for (auto& it : items) collect_tensors(it, index_tensors);
  auto* ts = shape_of(target);
  if (!index_tensors.empty()) {
    // Advanced indexing with data-dependent indices: gathers rows (routing tokens to an expert).
    if (!ts) return record_unknown(in, "[]", {target}, "indexed tensor shape unknown", site);
    std::vector<int64_t> out;
    size_t dim = 0;
    int gather_dim = -1;
    bool first_index = true;
    // Per dim before the gathered one: where a whole-dim slice (`:`) puts it in the output, else -1
    // (the planner may keep such a dim sharded: Mochi's query[i:i+1, :, kept_tokens] with heads split).
    std::vector<int64_t> passed;
    for (auto& it : items) {
      if (it.is_none()) { out.push_back(1); continue; }
      if (auto* t = it.as<TensorObj>()) {
        if (first_index && t->shape) {
          out.insert(out.end(), t->shape->begin(), t->shape->end());
          gather_dim = static_cast<int>(dim);
          first_index = false;
        }
        ++dim;
        continue;
      }
      if (auto* sl = it.as<SliceObj>()) {
        if (first_index)
          passed.push_back(sl->lower.is_none() && sl->upper.is_none() && sl->step.is_none() ? static_cast<int64_t>(out.size()) : -1);
        out.push_back(dim < ts->size() ? (*ts)[dim] : 1);
        ++dim;
        continue;
      }
      if (it.is_int()) {
        if (first_index) passed.push_back(-1);
        ++dim;
        continue;
      }
      return record_unknown(in, "[]", {target}, "index kind not modelled", site);
    }
    while (dim < ts->size()) out.push_back((*ts)[dim++]);
    Value r = Value::object(make(in, out, target.as<TensorObj>()->dtype, site));
    std::vector<Value> inputs{target};
    inputs.insert(inputs.end(), index_tensors.begin(), index_tensors.end());
    auto& op = record(OpKind::Gather, "[]", inputs, r, site);
    op.dims = {gather_dim < 0 ? 0 : gather_dim};
    if (gather_dim > 0 && passed.size() == static_cast<size_t>(gather_dim)) op.sizes.assign(passed.begin(), passed.end());
    for (int o : op.outputs) flow_->tensors[o].data_dependent = true;
    return r;
  }
  CallArgs args{{index}, {}};
  Value r = (*f)(in, target, args, site);
  if (!r.as<TensorObj>()) return r;
  auto* rs = shape_of(r);
  if (!ts || !rs) {
    auto& op = record(OpKind::Unknown, "[]", {target}, r, site);
    op.detail = "indexing with unknown shapes";
    // Only None and slices: where the index puts new dims is known all the same (x[:, None] turns a
    // waveform [batch, samples] into a conv's [batch, 1, samples]; first_use reads it back).
    const bool none_and_slices = std::all_of(items.begin(), items.end(), [](const Value& it) { return it.is_none() || it.as<SliceObj>(); });
    for (size_t i = 0; none_and_slices && i < items.size(); ++i)
      if (items[i].is_none()) op.dims.push_back(static_cast<int>(i));
    return r;
  }
  // Basic indexing: None / full slices / ints reshape; a partial slice of one dim keeps a part.
  int sliced_dim = -1;
  size_t dim = 0;
  bool reshape_only = true;
  for (auto& it : items) {
    if (it.is_none()) continue;
    if (it.kind == Value::Kind::Ellipsis) {
      size_t consumed = 0;
      for (auto& other : items)
        if (!other.is_none() && other.kind != Value::Kind::Ellipsis) ++consumed;
      dim += ts->size() - consumed;
      continue;
    }
    if (auto* s = it.as<SliceObj>()) {
      // Whole when its bounds reach both ends (`slice(-0, None)`, `x[:, 0:n]` over n).
      const int64_t size = dim < ts->size() ? (*ts)[dim] : 0;
      const bool from_start = s->lower.is_none() || (s->lower.is_int() && (s->lower.as_int() == 0 || s->lower.as_int() <= -size));
      const bool to_end = s->upper.is_none() || (s->upper.is_int() && s->upper.as_int() >= size);
      bool full = from_start && to_end && (s->step.is_none() || (s->step.is_int() && s->step.as_int() == 1));
      if (!full) {
        if (sliced_dim >= 0) reshape_only = false;
        sliced_dim = static_cast<int>(dim);
      }
      ++dim;
      continue;
    }
    if (it.is_int()) {
      if ((*ts)[dim] != 1) {
        if (sliced_dim >= 0) reshape_only = false;
        sliced_dim = static_cast<int>(dim);
      }
      ++dim;
      continue;
    }
    if (int_list_length(it) >= 0) {
      // Picked entries of one dim, kept in place: a part of it, as a slice takes.
      if (sliced_dim >= 0) reshape_only = false;
      sliced_dim = static_cast<int>(dim);
      ++dim;
      continue;
    }
    reshape_only = false;
  }
  if (!reshape_only) {
    // Slices of several dims (Swin's patch merging x[:, 0::2, 0::2, :]): one dim at a time, each a
    // slice the planner reads, giving the same result.
    const bool slices_only = std::all_of(items.begin(), items.end(), [](const Value& it) { return it.as<SliceObj>() != nullptr; });
    if (slices_only && items.size() <= ts->size()) {
      Value part = target;
      for (size_t d = 0; d < items.size(); ++d) {
        const auto* s = items[d].as<SliceObj>();
        if (s->lower.is_none() && s->upper.is_none() && s->step.is_none()) continue;
        std::vector<Value> one;
        for (size_t k = 0; k < d; ++k) one.push_back(Value::object(std::make_shared<SliceObj>()));
        one.push_back(items[d]);
        part = subscript(in, part, make_tuple(std::move(one)), site);
        if (!part.as<TensorObj>()) break;
      }
      if (auto* ps = shape_of(part); ps && *ps == *rs) return part;
    }
    record(OpKind::Unknown, "[]", {target}, r, site).detail = "indexing several dims at once";
    return r;
  }
  if (sliced_dim < 0) {
    record(OpKind::Reshape, "[]", {target}, r, site);
    return r;
  }
  // A slice of one dim: like taking one part of a split (then a reshape for ints / None).
  auto part = *ts;
  bool int_index = false;
  for (auto& it : items)
    if (it.is_int()) int_index = true;
  int64_t kept = 1;
  if (!int_index) {
    // find the kept size from the result: dims match except the sliced one (and Nones); an
    // ellipsis stands for the dims the other items leave
    size_t ri = 0, ti = 0;
    for (auto& it : items) {
      if (it.is_none()) { ++ri; continue; }
      if (it.kind == Value::Kind::Ellipsis) {
        size_t consumed = 0;
        for (auto& other : items)
          if (!other.is_none() && other.kind != Value::Kind::Ellipsis) ++consumed;
        ri += ts->size() - consumed;
        ti += ts->size() - consumed;
        continue;
      }
      if (static_cast<int>(ti) == sliced_dim && ri < rs->size()) kept = (*rs)[ri];
      ++ri;
      ++ti;
    }
  }
  part[sliced_dim] = kept;
  Value piece = Value::object(make(in, part, target.as<TensorObj>()->dtype, site));
  auto& op = record(OpKind::Split, "[]", {target}, make_tuple({piece}), site);
  op.dims = {sliced_dim};
  op.sizes = {kept, (*ts)[sliced_dim] - kept};
  if (part != *rs) record(OpKind::Reshape, "[]", {piece}, r, site);
  else {
    // The piece is the result.
    flow_->tensors[op.outputs[0]].shape = *rs;
    mutated(r.as<TensorObj>());
    version_[r.as<TensorObj>()] = op.outputs[0];
    keep_alive_.push_back(std::static_pointer_cast<TensorObj>(r.obj));
  }
  return r;
}

void ForwardTracer::set_item(Interpreter& in, const Value& target, const Value& index, const Value& value,
                             const ir::Span& site) {
  std::vector<Value> inputs{target};
  collect_tensors(index, inputs);
  if (value.as<TensorObj>()) inputs.push_back(value);
  auto& op = record(OpKind::Accumulate, "[]=", inputs, target, site);
  op.dims = {0};
  op.linear = true;
}

void ForwardTracer::find_position_tables() {
  position_tables_.clear();
  for (auto& m : model_.modules) {
    if (m.class_name != "Embedding") continue;
    // The table itself named for positions, or its wrapper (x-transformers' pos_emb.emb): then the
    // wrapper's owner owns it.
    std::string owner = parent_of(m.name);
    if (!position_table_name(last_component(m.name), true)) {
      if (owner.empty() || !position_table_name(last_component(owner), true)) continue;
      owner = parent_of(owner);
    }
    for (int i : m.parameters) {
      auto& p = model_.parameters[i];
      if (p.shape_known && p.shape.size() == 2 && last_component(p.name) == "weight") position_tables_.push_back({owner, m.name, p.shape[0]});
    }
  }
  auto add = [&](const std::string& name, const std::vector<int64_t>& shape, bool known) {
    if (!known || shape.size() < 2 || !position_table_name(last_component(name), false)) return;
    if (shape[shape.size() - 2] > 1) position_tables_.push_back({parent_of(name), name, shape[shape.size() - 2]});
  };
  for (auto& p : model_.parameters) add(p.name, p.shape, p.shape_known);
  for (auto& b : model_.buffers) add(b.name, b.shape, b.shape_known);
}

std::vector<const ForwardTracer::PositionTable*> ForwardTracer::position_tables_near(const std::string& module, bool for_tokens,
                                                                                     std::string& scope) const {
  std::vector<const PositionTable*> found;
  if (position_tables_.empty()) return found;
  std::string prefix = module;
  while (true) {
    prefix = parent_of(prefix);
    for (auto& t : position_tables_)
      if (prefix.empty() || t.owner == prefix || t.owner.rfind(prefix + ".", 0) == 0) found.push_back(&t);
    if (!found.empty() || prefix.empty()) break;
  }
  scope = prefix;
  // An encoder-decoder may keep both tables under one owner (Whisper: 1500 source positions for
  // the audio, 448 target positions for the tokens): a table named for the other side is not this
  // input's bound while one of its own side remains.
  static const std::vector<std::string> source_side = {"enc", "source", "src", "audio", "image", "vision", "patch"};
  static const std::vector<std::string> target_side = {"dec", "target", "tgt", "text"};
  auto named_for = [](const PositionTable* t, const std::vector<std::string>& words) {
    const std::string n = lower_name(t->name);
    for (const std::string& w : words)
      if (n.find(w) != std::string::npos) return true;
    return false;
  };
  std::vector<const PositionTable*> own;
  for (auto* t : found)
    if (!named_for(t, for_tokens ? source_side : target_side)) own.push_back(t);
  if (!own.empty()) return own;
  // Token ids are never bounded by another modality's table (Llava: a RoPE language model beside a
  // CLIP vision tower whose 577 positions count patches, not tokens).
  static const std::vector<std::string> other_modality = {"audio", "image", "vision", "patch"};
  if (for_tokens) std::erase_if(found, [&](const PositionTable* t) { return named_for(t, other_modality); });
  return found;
}

std::string ForwardTracer::infer_input(const Placeholder& p, std::vector<int64_t>& shape, std::string& dtype) const {
  if (const IndexInput kind = index_input_kind(p.name); kind == IndexInput::PerSample || kind == IndexInput::LabelPerSample) {
    // The name says one per sample; a Linear reading it as its first use says a vector of features
    // per sample (Flux's `y`, the pooled text embedding, where DiT's `y` is a class label; a
    // timestep goes through its sinusoidal embedding first).
    std::vector<int64_t> used;
    std::string used_dtype;
    const ir::Op* use = nullptr;
    std::string what = first_use(p, used, used_dtype, &use);
    if (use && std::find(use->inputs.begin(), use->inputs.end(), p.id) != use->inputs.end() &&
        what.rfind("features for ", 0) == 0 && !used.empty()) {
      shape = {workload_.batch, used.back()};
      if (!used_dtype.empty()) dtype = used_dtype;
      return "one vector of " + std::to_string(used.back()) + " " + what + ", per sample by the name model code gives it";
    }
    shape = {workload_.batch};
    dtype = kind == IndexInput::PerSample ? "float32" : "int64";
    return kind == IndexInput::PerSample ? "one value per sample (a diffusion timestep), by the name model code gives it"
                                         : "one class label per sample, by the name model code gives it";
  } else if (kind != IndexInput::None) {
    int64_t tokens = workload_.tokens;
    if (!workload_.tokens_given && max_tokens_seen_ > 0) tokens = std::min(tokens, max_tokens_seen_);
    shape = kind == IndexInput::PerToken ? std::vector<int64_t>{tokens} : std::vector<int64_t>{workload_.batch, tokens};
    dtype = "int64";
    return "indices, one per token, by the name model code gives them";
  }
  std::string what = first_use(p, shape, dtype);
  std::string from;
  if (what.empty() && p.name.size() > 4 && p.name.ends_with("_ids"))
    if (auto axes = rotary_axes(from)) {
      // Position ids of a multi-axis RoPE (Flux's img_ids / txt_ids): one row per token of the
      // stream they go with, one column per rotary axis; read as ids.shape[-1] before any op uses them.
      int64_t tokens = workload_.tokens;
      if (!workload_.tokens_given && max_tokens_seen_ > 0) tokens = std::min(tokens, max_tokens_seen_);
      shape = {tokens, *axes};
      dtype = "float32";
      return "positions of its tokens on the " + std::to_string(*axes) + " rotary axes of " + from + ", one row per token";
    }
  return latent_by_unpacking(p, shape, what);
}

std::optional<int64_t> ForwardTracer::rotary_axes(std::string& from) const {
  for (size_t m = 0; m < walk_.size(); ++m) {
    InstanceObj* inst = walk_[m].module;
    if (!inst) continue;
    for (const char* attr : {"axes_dim", "axes_dims", "axes_dims_rope"}) {
      Value* v = inst->find_attribute(attr);
      auto* l = v ? TupleView::of(*v) : nullptr;
      if (!l || l->items.size() < 2 || l->items.size() > 8) continue;
      if (!std::all_of(l->items.begin(), l->items.end(), [](const Value& v) { return v.is_int(); })) continue;
      const std::string& name = model_.modules[m].name;
      from = (name.empty() ? std::string("the root") : name) + "." + attr;
      return static_cast<int64_t>(l->items.size());
    }
  }
  return std::nullopt;
}

// forward() iterates an input whose shape pass 1 does not know yet (Wan's `for u in x`, the
// documented List[Tensor] of videos; a batch walked sample by sample): one row stands for all, an
// unknown op from the input, so that first_use reads the rows' first use and puts the dim of rows
// (one per sample) back in front.
std::optional<std::vector<Value>> ForwardTracer::rows_of_unknown(Interpreter& in, const TensorObj& t, const ir::Span& site) {
  if (!probe_inputs_) return std::nullopt;
  auto input = std::find_if(probe_inputs_->begin(), probe_inputs_->end(),
                            [&](const Placeholder& p) { return p.tensor.get() == &t && !p.given; });
  if (input == probe_inputs_->end()) return std::nullopt;
  return std::vector<Value>{record_unknown(in, kRowOfInput, {Value::object(input->tensor)}, "a row of an input whose shape is not known yet", site)};
}

// The first informative op that reads the placeholder, or a tensor computed from it, decides
// what it is (a norm written by hand reads x through pow / mean before its weight shows the width).
// What reaches the op may have new size-1 dims the input has not (x[:, None], x.unsqueeze(1) on the
// still unknown input, recorded as unknown ops whose dims say where): they are taken out again.
std::string ForwardTracer::first_use(const Placeholder& p, std::vector<int64_t>& shape, std::string& dtype, const ir::Op** at) const {
  std::vector<char> reached(flow_->tensors.size(), 0);
  reached[p.id] = 1;
  std::unordered_map<int, std::vector<int>> inserted;  // reached tensor -> dims put in since the input, in order
  for (auto& op : flow_->ops) {
    const std::vector<int>* before = nullptr;
    for (int t : op.inputs)
      if (reached[static_cast<size_t>(t)]) {
        auto it = inserted.find(t);
        before = it == inserted.end() ? nullptr : &it->second;
        break;
      }
    std::vector<int> now = before ? *before : std::vector<int>{};
    std::string what = input_told_by(op, reached, shape, dtype);
    if (!what.empty()) {
      for (size_t k = now.size(); k-- > 0;) {
        if (now[k] == kRowTaken) shape.insert(shape.begin(), workload_.batch);
        else if (now[k] < static_cast<int>(shape.size()) && shape[static_cast<size_t>(now[k])] == 1) shape.erase(shape.begin() + now[k]);
      }
      if (at) *at = &op;
      return what;
    }
    if (op.kind == OpKind::Unknown && (op.name == "[]" || op.name == "unsqueeze" || op.name == "stack"))
      now.insert(now.end(), op.dims.begin(), op.dims.end());
    if (op.kind == OpKind::Unknown && op.name == kRowOfInput) now.push_back(kRowTaken);
    if (!now.empty())
      for (int t : op.outputs)
        if (reached[static_cast<size_t>(t)]) inserted[t] = now;
  }
  return "";
}

std::string ForwardTracer::input_told_by(const ir::Op& op, std::vector<char>& reached, std::vector<int64_t>& shape,
                                         std::string& dtype) const {
  if (op.kind == OpKind::Call) return "";
  bool reads = false;
  for (int t : op.inputs) reads |= reached[t] != 0;
  if (!reads) return "";
  for (int t : op.outputs) reached[t] = 1;
  if ((op.kind == OpKind::Mul || op.kind == OpKind::Add) && op.inputs.size() == 2) {
    for (int t : op.inputs)
      if (flow_->tensors[t].parameter >= 0 && flow_->tensors[t].shape.size() == 1) {
        shape = {workload_.batch, workload_.tokens, flow_->tensors[t].shape[0]};
        return "features scaled by " + model_.parameters[flow_->tensors[t].parameter].name;
      }
  }
  auto weight_shape = [&](size_t i) -> const ir::Shape* {
    if (i < op.inputs.size() && flow_->tensors[op.inputs[i]].parameter >= 0) return &flow_->tensors[op.inputs[i]].shape;
    return nullptr;
  };
  auto& mod = model_.modules[op.module];
  // F.embedding on ids whose shape pass 1 does not know yet is recorded as unknown, by that name.
  if (op.kind == OpKind::Embedding || op.name == "Embedding" || op.name == "F.embedding") {
    std::string told = "token ids for " + (mod.name.empty() ? std::string("the root") : mod.name);
    int64_t tokens = workload_.tokens;
    // No more tokens than the nearest position table has rows (nanoGPT asserts t <= block_size;
    // BERT slices its position ids): the largest power of two within them.
    std::string scope;
    auto tables = position_tables_near(mod.name, true, scope);
    if (!tables.empty()) {
      const PositionTable* least = tables[0];
      for (auto* t : tables)
        if (t->positions < least->positions) least = t;
      int64_t fit = 1;
      while (fit * 2 <= least->positions) fit *= 2;
      max_tokens_seen_ = max_tokens_seen_ == 0 ? fit : std::min(max_tokens_seen_, fit);
      if (!workload_.tokens_given && tokens > fit) {
        tokens = fit;
        told += ", as many as " + least->name + "'s " + std::to_string(least->positions) + " positions allow";
      }
    }
    shape = {workload_.batch, tokens};
    if (!packed_lengths_.empty()) {
      // Packed: every sequence's ids one after another, their lengths in the list beside them.
      shape = {workload_.batch * tokens};
      told += ", packed: " + std::to_string(workload_.batch) + " sequence(s) of " + std::to_string(tokens) + " in one flat tensor, lengths in " +
              packed_lengths_;
    }
    dtype = "int64";
    return told;
  }
  const ir::Shape* w = weight_shape(1);
  if ((op.name == "Linear" || op.name == "F.linear") && w && w->size() >= 2) {
    shape = {workload_.batch, workload_.tokens, (*w)[1]};
    return "features for " + mod.name;
  }
  if (op.name.find("onv") != std::string::npos && w && w->size() >= 3) {
    size_t spatial = w->size() - 2;
    shape = {workload_.batch, (*w)[1]};
    // 1-D convs read sequences (audio, tokens): the sequence length, or H*W samples when one
    // token per forward (decode) would be shorter than any kernel.
    for (size_t i = 0; i < spatial; ++i)
      shape.push_back(spatial == 1 ? (workload_.tokens > 1 ? workload_.tokens : workload_.spatial[0] * workload_.spatial[1])
                                   : workload_.spatial[i % 2]);
    std::string told = "image-like input for " + mod.name;
    // A position table after the convs fixes the input's size: Whisper's encoder adds 1500
    // positions after two convs of strides 1 and 2 (3000 mel frames); a ViT's 197 positions are a
    // class token and 14x14 patches of 16 pixels (224x224); a DiT's are its latent's patches.
    std::string scope;
    auto tables = position_tables_near(mod.name, false, scope);
    if (!tables.empty() && spatial == 1 && !workload_.tokens_given) {
      int64_t strides = 1;
      for (auto& m : model_.modules)
        if ((scope.empty() || m.name.rfind(scope + ".", 0) == 0) && m.class_name.find("Conv1d") != std::string::npos)
          strides *= first_stride(m.extra_repr);
      shape[2] = tables[0]->positions * strides;
      told += ", " + std::to_string(tables[0]->positions) + " positions of " + tables[0]->name + " after convs of total stride " +
              std::to_string(strides);
    } else if (spatial == 1 && tables.empty() && workload_.tokens > 1 && !workload_.tokens_given) {
      // A signal (a waveform) that strided convs turn into frames (wav2vec2's feature encoder, total
      // stride 320): samples enough for the workload's tokens after them. The strides multiply along
      // the data's path from here, one conv after another (parallel branches, a multi-scale
      // discriminator's, do not multiply); the longest path counts.
      std::unordered_map<int, int64_t> stride_at{{op.inputs[0], 1}};
      int64_t strides = 1;
      for (size_t i = static_cast<size_t>(&op - flow_->ops.data()); i < flow_->ops.size(); ++i) {
        const ir::Op& next = flow_->ops[i];
        if (next.kind == OpKind::Call) continue;
        int64_t at = 0;
        for (int t : next.inputs)
          if (auto it = stride_at.find(t); it != stride_at.end()) at = std::max(at, it->second);
        if (at == 0) continue;
        // (Not the stand-in for an input the trace lost before a conv: that conv's own op follows.)
        const bool stand_in = next.kind == OpKind::Unknown && next.detail.rfind("input shape unknown here", 0) == 0;
        if (next.name.find("onv1d") != std::string::npos && next.module >= 0 && !stand_in)
          at *= first_stride(model_.modules[static_cast<size_t>(next.module)].extra_repr);
        for (int t : next.outputs) stride_at[t] = at;
        strides = std::max(strides, at);
      }
      if (strides > 1) {
        shape[2] = workload_.tokens * strides;
        told += ", " + std::to_string(workload_.tokens) + " frames after convs of total stride " + std::to_string(strides);
      }
    } else if (std::string from; spatial == 2 && !workload_.spatial_given && tables.empty()) {
      // No position table to count patches from (Swin's relative biases, a conv backbone): the
      // image size the model was built for.
      if (auto size = image_size_near(op.module, from)) {
        shape[2] = size->first;
        shape[3] = size->second;
        told += ", " + std::to_string(size->first) + "x" + std::to_string(size->second) + " as " + from + " says";
      }
    } else if (!tables.empty() && spatial == 2 && !workload_.spatial_given) {
      int64_t stride = first_stride(mod.extra_repr);
      for (int64_t extra = 0; stride > 1 && extra <= 8 && extra < tables[0]->positions; ++extra) {
        auto n = tables[0]->positions - extra;  // class and register tokens come before the patches
        auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
        if (side * side != n) continue;
        shape[2] = shape[3] = side * stride;
        told += ", " + std::to_string(side) + "x" + std::to_string(side) + " patches of " + std::to_string(stride) +
                " for the positions of " + tables[0]->name;
        break;
      }
    }
    return told;
  }
  if ((op.name == "LayerNorm" || op.name == "RMSNorm") && w && !w->empty()) {
    shape = {workload_.batch, workload_.tokens, (*w)[0]};
    return "features for " + mod.name;
  }
  return "";
}

std::optional<std::pair<int64_t, int64_t>> ForwardTracer::image_size_near(int module, std::string& from) const {
  auto size_of = [](const Value* v) -> std::optional<std::pair<int64_t, int64_t>> {
    if (!v) return std::nullopt;
    if (v->is_int() && v->as_int() > 0) return std::make_pair(v->as_int(), v->as_int());
    if (auto* l = TupleView::of(*v); l && l->items.size() == 2 && l->items[0].is_int() && l->items[1].is_int() &&
                                     l->items[0].as_int() > 0 && l->items[1].as_int() > 0)
      return std::make_pair(l->items[0].as_int(), l->items[1].as_int());
    return std::nullopt;
  };
  for (int m = module; m >= 0 && static_cast<size_t>(m) < walk_.size();) {
    InstanceObj* inst = walk_[static_cast<size_t>(m)].module;
    const std::string& name = model_.modules[static_cast<size_t>(m)].name;
    for (const char* attr : {"image_size", "img_size"}) {
      if (auto s = size_of(inst->find_attribute(attr))) {
        from = (name.empty() ? std::string("the root") : name) + "." + attr;
        return s;
      }
      if (Value* config = inst->find_attribute("config"))
        if (auto* c = config->as<InstanceObj>())
          if (auto s = size_of(c->find_attribute(attr))) {
            from = (name.empty() ? std::string("the root") : name) + ".config." + attr;
            return s;
          }
    }
    InstanceObj* parent = walk_[static_cast<size_t>(m)].parent;
    if (!parent) break;
    auto it = module_index_.find(parent);
    m = it == module_index_.end() ? -1 : it->second;
  }
  return std::nullopt;
}

// Pass 1 runs forward() only to learn what its inputs are: once the ops recorded so far tell that
// for every input (the first informative op infer_input reads is among them), the rest of the
// pass cannot change the answer, and it stops.
void ForwardTracer::probe_inputs() {
  const auto& inputs = *probe_inputs_;
  if (probe_reached_.empty()) {
    probe_reached_.resize(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      probe_reached_[k].assign(flow_->tensors.size(), 0);
      probe_reached_[k][inputs[k].id] = 1;
    }
    probe_decided_.assign(inputs.size(), false);
    // A padding mask is told by the input it pairs with (mask_told_by), not by a use of its own.
    for (size_t k = 0; k < inputs.size(); ++k) probe_decided_[k] = inputs[k].given != nullptr || padding_mask_of(inputs[k].name);
  }
  bool all = true;
  std::vector<int64_t> shape;
  std::string dtype;
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto& reached = probe_reached_[k];
    reached.resize(flow_->tensors.size(), 0);
    for (size_t i = probe_next_op_; i < flow_->ops.size() && !probe_decided_[k]; ++i) {
      // A 1-D conv's input is as long as the strided convs after it make it (input_told_by): the
      // probe goes on past them, to the next informative op.
      const bool told = !input_told_by(flow_->ops[i], reached, shape, dtype).empty();
      probe_decided_[k] = told && !(shape.size() == 3 && flow_->ops[i].name.find("onv1d") != std::string::npos);
    }
    all = all && probe_decided_[k];
  }
  probe_next_op_ = flow_->ops.size();
  if (all) interp_.request_stop();
}

void ForwardTracer::run(const std::shared_ptr<InstanceObj>& root, std::vector<Placeholder>& inputs) {
  version_.clear();
  object_of_id_.clear();
  reset_memo();
  keep_alive_.clear();
  true_fraction_.clear();
  index_range_.clear();
  flow_->tensors.clear();
  flow_->ops.clear();
  flow_->inputs.clear();
  flow_->outputs.clear();
  CallArgs args;
  for (auto& p : inputs) {
    p.id = id_of(p.tensor);
    flow_->inputs.push_back(p.id);
    if (p.by_keyword)
      args.keywords.emplace_back(p.name, Value::object(p.tensor));
    else
      args.positional.push_back(Value::object(p.tensor));
  }
  // Where this forward's tokens start in the sequence (Meta's Llama: forward(tokens, start_pos: int)):
  // 0 for a prompt, after the context the cache already holds for a decode step.
  for (auto& name : start_positions_)
    args.keywords.emplace_back(name, Value::integer(std::max<int64_t>(0, workload_.context - workload_.tokens)));
  for (auto& name : sequence_lengths_) args.keywords.emplace_back(name, Value::integer(sequence_length_ > 0 ? sequence_length_ : workload_.tokens));
  if (!packed_lengths_.empty()) {
    // One length per sequence: the flat token ids shared out (before they are sized: the workload's).
    int64_t per_sequence = std::max<int64_t>(1, workload_.tokens / std::max<int64_t>(1, workload_.batch));
    for (auto& p : inputs)
      if (p.tensor && p.tensor->shape && p.tensor->shape->size() == 1 && p.tensor->dtype.rfind("int", 0) == 0)
        per_sequence = std::max<int64_t>(1, (*p.tensor->shape)[0] / std::max<int64_t>(1, workload_.batch));
    auto lengths = std::make_shared<ListObj>();
    for (int64_t b = 0; b < workload_.batch; ++b) lengths->items.push_back(Value::integer(per_sequence));
    args.keywords.emplace_back(packed_lengths_, Value::object(lengths));
  }
  module_stack_ = {0};
  Value out = module_call(interp_, Value::object(root), args, root->module ? root->module->span : ir::Span{});
  std::vector<Value> outs;
  collect_tensors(out, outs);
  for (auto& v : outs) flow_->outputs.push_back(id_of(std::static_pointer_cast<TensorObj>(v.obj)));
}

namespace {

// A parameter that gives the lengths of sequences packed into one flat tensor of token ids
// (mistral-inference's `seqlens: List[int]`; xformers' BlockDiagonalMask.from_seqlens takes the same).
bool packed_lengths_name(const std::string& name) {
  static const std::set<std::string> names = {"seqlens", "seq_lens", "seqlen_list", "sequence_lengths"};
  return names.count(name) > 0;
}

// Names that Hugging Face, diffusers and most model code give a forward()'s main tensor inputs. An
// optional parameter (default None) with one of these names is an input: `forward(self,
// input_ids=None, attention_mask=None, ...)` needs input_ids, and an encoder-decoder also needs its
// decoder's ids; masks, caches, labels and flags stay at their defaults.
bool is_main_input_name(const std::string& name) {
  static const std::set<std::string> names = {
      "input_ids", "pixel_values", "input_features", "input_values", "decoder_input_ids", "hidden_states",
      "x", "idx", "tokens", "input", "inputs", "sample", "src", "tgt", "images", "image", "mel", "audio_features"};
  return names.count(name) > 0;
}

// The function a functools.wraps wrapper stands for (its __wrapped__, as inspect.signature reads it).
const FunctionObj& unwrapped(const FunctionObj& forward) {
  const FunctionObj* fn = &forward;
  for (int hops = 0; hops < 8 && fn->attributes; ++hops) {
    const Value* inner = fn->attributes->find_str("__wrapped__");
    auto* next = inner ? inner->as<FunctionObj>() : nullptr;
    if (!next) break;
    fn = next;
  }
  return *fn;
}

// Whether forward() (read through functools.wraps' __wrapped__) takes a parameter `name`, or **kwargs.
bool takes_parameter(const FunctionObj& forward, const std::string& name) {
  const FunctionObj* fn = &unwrapped(forward);
  for (auto& p : fn->def->params)
    if ((p.kind == ParamKind::Normal && p.name == name) || p.kind == ParamKind::VarKwargs) return true;
  return false;
}

}  // namespace

// `batch, channels, height, width = x.shape` in forward()'s own body fixes x's rank: a latent that
// a DiT patchifies by hand (CogView4, Lumina 2, Mochi) before its first Linear, which alone would
// make x a [B, T, F] sequence. Its channels are the model's in_channels (or its config's), its
// other dims the workload's image size, as for a conv's image-like input; without in_channels the
// first use stands.
std::string ForwardTracer::latent_by_unpacking(const Placeholder& p, std::vector<int64_t>& shape, std::string what) const {
  const bool features = what.rfind("features for ", 0) == 0, image = what.rfind("image-like input", 0) == 0;
  if (!root_forward_ || !root_forward_->def || !root_instance_ || (!features && !image)) return what;
  size_t rank = 0;
  for (const auto& st : unwrapped(*root_forward_).def->body) {
    if (!st || st->kind != StmtKind::Assign || st->targets.size() != 1 || !st->value) continue;
    const Expr* target = st->targets[0].get();
    const Expr* value = st->value.get();
    const bool names = target && target->kind == ExprKind::Tuple &&
                       std::all_of(target->items.begin(), target->items.end(), [](const ExprPtr& e) { return e && e->kind == ExprKind::Name; });
    if (names && value->kind == ExprKind::Attribute && value->name == "shape" && !value->items.empty() && value->items[0] &&
        value->items[0]->kind == ExprKind::Name && value->items[0]->name == p.name) {
      rank = target->items.size();
      break;
    }
  }
  if (rank < 4 || rank == shape.size()) return what;
  if (image) {
    // A video whose frames a 2-D conv reads one by one (Mochi folds them into the batch): the
    // conv's image, one more dim of frames before its rows.
    if (rank != shape.size() + 1 || shape.size() < 4) return what;
    shape.insert(shape.begin() + 2, workload_.spatial[0]);
    return "a video of " + std::to_string(rank) + " dims (forward() unpacks its shape), " + std::to_string(workload_.spatial[0]) +
           " frames of an " + what;
  }
  auto int_attribute = [](InstanceObj* o, const char* name) -> int64_t {
    const Value* v = o ? o->find_attribute(name) : nullptr;
    return v && v->is_int() && v->kind != Value::Kind::Bool ? v->as_int() : 0;
  };
  // diffusers' ConfigMixin keeps the config in _internal_dict (`self.config` is a property over it).
  int64_t channels = int_attribute(root_instance_, "in_channels");
  for (const char* config : {"config", "_internal_dict"})
    if (Value* c = root_instance_->find_attribute(config); c && channels <= 0) channels = int_attribute(c->as<InstanceObj>(), "in_channels");
  if (channels <= 0) return what;
  shape = {workload_.batch, channels};
  for (size_t i = 2; i < rank; ++i) shape.push_back(workload_.spatial[(i - 2) % 2]);
  return "a latent of " + std::to_string(rank) + " dims (forward() unpacks its shape) with the model's " + std::to_string(channels) +
         " in_channels, then " + what;
}

std::optional<GivenInput> parse_given_input(const std::string& spec, std::string& error) {
  static const std::map<std::string, std::string> dtypes = {
      {"float32", "float32"}, {"float", "float32"}, {"fp32", "float32"}, {"float16", "float16"}, {"half", "float16"},
      {"fp16", "float16"}, {"bfloat16", "bfloat16"}, {"bf16", "bfloat16"}, {"float64", "float64"}, {"double", "float64"},
      {"int64", "int64"}, {"long", "int64"}, {"int32", "int32"}, {"int", "int32"}, {"int16", "int16"}, {"int8", "int8"},
      {"uint8", "uint8"}, {"bool", "bool"}};
  auto bad = [&](const std::string& why) {
    error = "--input takes NAME=SHAPE[:DTYPE] (e.g. input_ids=1x128:int64), not '" + spec + "': " + why;
    return std::nullopt;
  };
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return bad("no NAME=");
  GivenInput in;
  in.name = spec.substr(0, eq);
  for (char c : in.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return bad("NAME must be a Python identifier");
  std::string shape = spec.substr(eq + 1);
  if (auto colon = shape.find(':'); colon != std::string::npos) {
    auto d = dtypes.find(shape.substr(colon + 1));
    if (d == dtypes.end()) return bad("unknown dtype '" + shape.substr(colon + 1) + "'");
    in.dtype = d->second;
    shape = shape.substr(0, colon);
  }
  size_t at = 0;
  while (true) {
    size_t x = shape.find_first_of("x,", at);  // 1x128, or 1,128 as `graph --input` has always taken it
    std::string part = shape.substr(at, x == std::string::npos ? std::string::npos : x - at);
    if (part.empty() || part.size() > 12 || !std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return bad("SHAPE must be sizes joined by 'x' (or ',')");
    int64_t n = std::stoll(part);
    if (n <= 0) return bad("sizes must be positive");
    in.shape.push_back(n);
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return in;
}

// A padding mask's shape: [batch, tokens] of the input it pairs with (`shape_of_input` gives the
// inputs' shapes told so far), all ones (every token real). "" when that input is not told, or is
// not a sequence ([batch, tokens] ids or [batch, tokens, features]).
std::string ForwardTracer::mask_told_by(const Placeholder& mask, const std::vector<Placeholder>& inputs,
                                        const std::function<const std::vector<int64_t>*(const Placeholder&)>& shape_of_input,
                                        std::vector<int64_t>& shape, std::string& dtype) const {
  auto prefix = padding_mask_of(mask.name);
  if (!prefix) return "";
  const Placeholder* pair = nullptr;
  for (const auto& p : inputs) {
    if (&p == &mask || padding_mask_of(p.name)) continue;
    const bool named = prefix->empty() || p.name == *prefix || p.name.starts_with(*prefix + "_");
    if (named) {
      pair = &p;
      break;
    }
  }
  const std::vector<int64_t>* told = pair ? shape_of_input(*pair) : nullptr;
  if (!told || told->size() < 2 || told->size() > 3) return "";
  shape = {(*told)[0], (*told)[1]};
  dtype = "int64";
  return "a padding mask over the " + std::to_string((*told)[1]) + " tokens of " + pair->name + ", every token real (all ones)";
}

// The tensor an input is traced with; a padding mask's values are known (all ones): model code sums
// it into sequence lengths (Lumina 2) or turns it into an additive bias.
std::shared_ptr<TensorObj> ForwardTracer::input_tensor(const std::string& name, const std::vector<int64_t>& shape, const std::string& dtype) {
  auto t = interp_.new_tensor(shape, {});
  t->dtype = dtype;
  if (padding_mask_of(name) && t->numel() <= (int64_t{1} << 16)) t->values = std::vector<double>(static_cast<size_t>(t->numel()), 1.0);
  return t;
}

// A parameter (int, or not annotated) named as the length of the sequence forward() makes or pads to
// (Wan's `seq_len`, "maximum sequence length for positional encoding").
bool ForwardTracer::sequence_length_param(const FunctionObj& forward, const std::string& name) {
  static const std::set<std::string> names = {"seq_len", "seq_length", "seqlen", "max_seq_len", "max_seqlen", "max_seq_length",
                                              "sequence_length", "max_sequence_length"};
  if (!names.count(name)) return false;
  for (auto& p : forward.def->params)
    if (p.name == name) return p.annotation.empty() || p.annotation == "int" || p.annotation == "Optional[int]";
  return false;
}

// The longest sequence of a [batch, sequence, features] activation the trace made.
int64_t ForwardTracer::longest_sequence() const {
  int64_t longest = 0;
  for (const auto& t : flow_->tensors)
    if (t.shape.size() == 3 && t.parameter < 0 && t.buffer < 0) longest = std::max(longest, t.shape[1]);
  return longest;
}

// A parameter annotated int and named as a position (start_pos, offset): where the tokens start.
bool ForwardTracer::int_position_param(const FunctionObj& forward, const std::string& name) {
  for (auto& p : forward.def->params)
    if (p.name == name && p.annotation == "int") {
      const std::string n = lower_name(name);
      return n.find("pos") != std::string::npos || n.find("offset") != std::string::npos || n.find("start") != std::string::npos;
    }
  return false;
}

namespace {

// Whether a module's forward() dereferences parameter `name` where a None would raise, whatever
// the other inputs: in a statement of its body that always runs (not inside an `if`'s branches or
// a loop's body), before the body assigns the name, as the object of an attribute, a subscript or
// an arithmetic operand, or handed to a submodule (`self.<attr>(...)`) that does so itself: a
// built-in layer's input, or a parameter its own forward() needs by the same rule. A test against
// None (`x is None`), `x or ...`, `x and ...`, a lambda or a comprehension, and only one branch of
// a conditional expression do not count. diffusers' DiTs take every input with a None default
// (`timestep: torch.LongTensor = None`) and dereference them unconditionally; Hugging Face's
// optional masks and ids are tested against None first (or by their submodules).
class RequiredScan {
 public:
  // `self`: the module whose forward() it is (null: a plain function); `module`: the Python module
  // it was defined in, whose functions calls are looked up among (`globals`: null, not followed).
  using Globals = std::function<const Scope*(const std::string& module)>;
  RequiredScan(const std::string& name, const InstanceObj* self, const Globals* globals, std::string module, int depth = 0)
      : name_(name), self_(self), globals_(globals), module_(std::move(module)), depth_(depth) {}

  bool in(const Block& body) {
    for (const auto& st : body) {
      if (found_ || assigned_) break;
      statement(*st);
    }
    return found_;
  }

 private:
  bool is_name(const Expr* e) const { return e && e->kind == ExprKind::Name && e->name == name_; }
  // Whether an expression reads the name anywhere.
  bool mentions(const Expr* e) const {
    if (!e) return false;
    if (is_name(e)) return true;
    return std::any_of(e->items.begin(), e->items.end(), [&](const ExprPtr& item) { return mentions(item.get()); });
  }

  // Whether a statement binds the name anywhere inside (`if x is None: x = ...` gives it a value
  // of its own: from there on, a None input is no longer what is dereferenced).
  bool binds(const Block& block) const {
    for (const auto& st : block) {
      for (const auto& t : st->targets)
        if (is_name(t.get()) || (t && t->kind == ExprKind::Tuple && std::any_of(t->items.begin(), t->items.end(), [&](const ExprPtr& i) {
                                   return is_name(i.get());
                                 })))
          return true;
      for (const auto& [context, target] : st->with_items)
        if (is_name(target.get())) return true;
      if (binds(st->body) || binds(st->orelse) || binds(st->finalbody)) return true;
      for (const auto& h : st->handlers)
        if (binds(h.body)) return true;
    }
    return false;
  }

  // Whether a block assigns the name a value computed without reading it (`x = f(y)`, not `x = f(x)`).
  bool binds_from_elsewhere(const Block& block) const {
    for (const auto& st : block) {
      if (st->kind == StmtKind::Assign && !mentions(st->value.get()))
        for (const auto& t : st->targets)
          if (is_name(t.get())) return true;
      if (binds_from_elsewhere(st->body) || binds_from_elsewhere(st->orelse)) return true;
    }
    return false;
  }

  void statement(const Stmt& st) {
    switch (st.kind) {
      case StmtKind::If:
        // A branch on the module's own settings (`if self.norm_type == "ada_norm_zero":`) is
        // decided: the branch taken always runs.
        expr(st.value.get());
        if (std::optional<bool> taken = decided(st.value.get()); taken && !found_) {
          in(*taken ? st.body : st.orelse);
          assigned_ = assigned_ || binds(*taken ? st.body : st.orelse);
          return;
        }
        // A branch that may give the name a value of its own guards what follows when its test looks
        // at the name (`if x is None: x = ...`), or when it makes the value from something else
        // (DistilBERT's `if input_ids is not None: input_embeds = self.word_embeddings(input_ids)`: the
        // other input stands in). A branch that only transforms the input (diffusers' LabelEmbedding:
        // `labels = self.token_drop(labels, ...)` when dropping some) still needs it after.
        if (mentions(st.value.get())) assigned_ = assigned_ || binds(st.body) || binds(st.orelse);
        else assigned_ = assigned_ || binds_from_elsewhere(st.body) || binds_from_elsewhere(st.orelse);
        return;
      case StmtKind::While:  // the test runs; `x is None` in it is a check, not a use (expr)
        expr(st.value.get());
        assigned_ = binds(st.body) || binds(st.orelse);
        return;
      case StmtKind::For: {
        expr(st.value.get());
        // A loop over a non-empty list of submodules (`for block in self.blocks:`, `enumerate(...)`,
        // `self.layers[:n]`) runs its body; a call of the loop variable calls the first of them.
        const InstanceObj* first = first_listed_module(st.value.get());
        const Expr* target = st.targets.empty() ? nullptr : st.targets[0].get();
        if (target && target->kind == ExprKind::Tuple && !target->items.empty()) target = target->items.back().get();
        if (first && target && target->kind == ExprKind::Name && target->name != name_ && !found_) {
          auto saved = std::make_pair(loop_var_, loop_module_);
          loop_var_ = target->name;
          loop_module_ = first;
          in(st.body);
          std::tie(loop_var_, loop_module_) = saved;
        }
        assigned_ = assigned_ || binds(st.body) || binds(st.orelse);
        return;
      }
      case StmtKind::With:
        for (const auto& [context, target] : st.with_items) expr(context.get());
        in(st.body);
        return;
      case StmtKind::Try:
        in(st.body);
        assigned_ = assigned_ || binds(st.body) || binds(st.orelse) || binds(st.finalbody);
        for (const auto& h : st.handlers) assigned_ = assigned_ || binds(h.body);
        return;
      case StmtKind::Assign:
      case StmtKind::AnnAssign:
      case StmtKind::AugAssign:
        expr(st.value.get());
        if (st.kind == StmtKind::AugAssign && is_name(st.targets.empty() ? nullptr : st.targets[0].get())) found_ = true;
        for (const auto& t : st.targets) assigned_ = assigned_ || is_name(t.get());
        return;
      case StmtKind::Expr:
      case StmtKind::Return:
      case StmtKind::Assert:
        expr(st.value.get());
        return;
      default:
        return;
    }
  }

  void expr(const Expr* e) {
    if (!e || found_) return;
    switch (e->kind) {
      case ExprKind::Attribute:
      case ExprKind::Subscript:
        if (is_name(e->items.empty() ? nullptr : e->items[0].get())) found_ = true;
        break;
      case ExprKind::BinOp:
        for (const auto& item : e->items)
          if (is_name(item.get())) found_ = true;
        break;
      case ExprKind::Call: {
        const Expr* callee = e->items.empty() ? nullptr : e->items[0].get();
        const bool submodule = callee && callee->kind == ExprKind::Attribute && !callee->items.empty() && callee->items[0] &&
                               callee->items[0]->kind == ExprKind::Name && callee->items[0]->name == "self";
        const bool loop_module = callee && callee->kind == ExprKind::Name && loop_module_ && callee->name == loop_var_;
        const bool function = callee && callee->kind == ExprKind::Name && !loop_module;
        if (submodule || function || loop_module)
          for (size_t i = 1; i < e->items.size() && !found_; ++i) {
            const Expr* arg = e->items[i].get();
            const bool keyword = arg && arg->kind == ExprKind::Keyword && !arg->items.empty();
            if (!is_name(keyword ? arg->items[0].get() : arg)) continue;
            const size_t position = keyword ? SIZE_MAX : i - 1;
            const std::string by_name = keyword ? arg->name : std::string();
            found_ = submodule     ? module_needs(child_of(self_, callee->name), position, by_name)
                     : loop_module ? module_needs(loop_module_, position, by_name)
                                   : function_needs(callee->name, position, by_name);
          }
        break;
      }
      case ExprKind::Compare:
        // `x is None` / `x is not None`: a check.
        for (const auto& op : e->ops)
          if (op == "is" || op == "is not") return;
        break;
      case ExprKind::BoolOp:
        // `x or default`, `x and x.foo`: None is expected there.
        return;
      case ExprKind::IfExp:
        // Only what both branches do counts; the test is a condition.
        if (e->items.size() == 3) {
          expr(e->items[1].get());
          RequiredScan body(name_, self_, globals_, module_, depth_), orelse(name_, self_, globals_, module_, depth_);
          body.expr(e->items[0].get());
          orelse.expr(e->items[2].get());
          found_ = found_ || (body.found_ && orelse.found_);
        }
        return;
      case ExprKind::Lambda:
      case ExprKind::ListComp:
      case ExprKind::SetComp:
      case ExprKind::GenExp:
      case ExprKind::DictComp:
        return;
      default:
        break;
    }
    for (const auto& item : e->items) expr(item.get());
  }

  // The value of a test that reads only the module's own plain attributes and literals (a str, int,
  // bool or None): `self.a == "x"`, `self.a != 3`, `self.a in ("x", "y")`, `self.a is None`,
  // `self.flag`, `not ...`, and `and` / `or` where one such operand decides; nullopt otherwise.
  std::optional<bool> decided(const Expr* e) const {
    if (!e || !self_) return std::nullopt;
    auto attribute = [&](const Expr* a) -> const Value* {
      if (!a || a->kind != ExprKind::Attribute || a->items.empty() || !a->items[0] || a->items[0]->kind != ExprKind::Name ||
          a->items[0]->name != "self")
        return nullptr;
      const Value* v = self_->dict ? self_->dict->find_str(a->name) : nullptr;
      return v && (v->is_str() || v->is_int() || v->kind == Value::Kind::Bool || v->is_none()) ? v : nullptr;
    };
    auto literal = [](const Expr* l) -> std::optional<Value> {
      if (!l) return std::nullopt;
      if (l->kind == ExprKind::Str) return Value::str(l->name);
      if (l->kind == ExprKind::Int) return Value::integer(l->int_value);
      if (l->kind == ExprKind::Bool) return Value::boolean(l->int_value != 0);
      if (l->kind == ExprKind::NoneLit) return Value::none();
      return std::nullopt;
    };
    auto same = [](const Value& a, const Value& b) {
      if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
      if (a.is_str() || b.is_str()) return a.is_str() && b.is_str() && a.s == b.s;
      return !a.is_str() && !b.is_str() && a.as_int() == b.as_int();
    };
    if (e->kind == ExprKind::UnaryOp && e->name == "not" && !e->items.empty())
      if (auto inner = decided(e->items[0].get())) return !*inner;
    // `a and b` is false when one operand is (`torch.is_grad_enabled() and self.gradient_checkpointing`),
    // `a or b` true when one is.
    if (e->kind == ExprKind::BoolOp) {
      const bool conjunction = e->name == "and";
      for (const auto& item : e->items)
        if (auto v = decided(item.get()); v && *v != conjunction) return !conjunction;
      return std::nullopt;
    }
    if (const Value* v = attribute(e)) return v->is_str() ? !v->s.empty() : v->is_none() ? false : v->as_int() != 0;
    if (e->kind != ExprKind::Compare || e->items.size() != 2 || e->ops.size() != 1) return std::nullopt;
    // `self.emb is not None` on a submodule slot: set unless the module holds None there.
    if (const Expr* a = e->items[0].get(); a && a->kind == ExprKind::Attribute && !a->items.empty() && a->items[0] &&
        a->items[0]->kind == ExprKind::Name && a->items[0]->name == "self" && e->items[1] &&
        e->items[1]->kind == ExprKind::NoneLit && (e->ops[0] == "is" || e->ops[0] == "is not") && self_->module)
      for (const auto& [key, module] : self_->module->modules)
        if (key == a->name) return (module == nullptr) == (e->ops[0] == "is");
    const Value* v = attribute(e->items[0].get());
    if (!v) return std::nullopt;
    const std::string& op = e->ops[0];
    if (op == "in" || op == "not in") {
      const Expr* list = e->items[1].get();
      if (!list || (list->kind != ExprKind::Tuple && list->kind != ExprKind::List && list->kind != ExprKind::Set)) return std::nullopt;
      bool found = false;
      for (const auto& item : list->items) {
        auto l = literal(item.get());
        if (!l) return std::nullopt;
        found = found || same(*v, *l);
      }
      return op == "in" ? found : !found;
    }
    auto l = literal(e->items[1].get());
    if (!l) return std::nullopt;
    if (op == "==" || op == "is") return same(*v, *l);
    if (op == "!=" || op == "is not") return !same(*v, *l);
    return std::nullopt;
  }

  static const InstanceObj* child_of(const InstanceObj* parent, const std::string& attr) {
    if (!parent || !parent->module) return nullptr;
    for (const auto& [key, module] : parent->module->modules)
      if (key == attr) return module.get();
    return nullptr;
  }

  // The first module of a list of submodules the loop runs over (null: not such a loop).
  const InstanceObj* first_listed_module(const Expr* e) const {
    if (e && e->kind == ExprKind::Call && e->items.size() == 2 && e->items[0] && e->items[0]->kind == ExprKind::Name &&
        e->items[0]->name == "enumerate")
      e = e->items[1].get();
    if (e && e->kind == ExprKind::Subscript && !e->items.empty()) e = e->items[0].get();
    if (!e || e->kind != ExprKind::Attribute || e->items.empty() || !e->items[0] || e->items[0]->kind != ExprKind::Name ||
        e->items[0]->name != "self")
      return nullptr;
    const InstanceObj* list = child_of(self_, e->name);
    if (!list || !list->module || list->module->modules.empty()) return nullptr;
    return list->module->modules.front().second.get();
  }

  // Whether a submodule (`child`) raises when handed None as its positional argument `position`
  // (SIZE_MAX: the keyword argument `keyword`).
  bool module_needs(const InstanceObj* child, size_t position, const std::string& keyword) const {
    if (!child || !child->cls || depth_ >= kDepth) return false;
    const Value* forward = child->cls->lookup("forward");
    const auto* fn = forward ? forward->as<FunctionObj>() : nullptr;
    if (!fn) return position == 0 || keyword == "input";  // a built-in layer's input
    return callee_needs(unwrapped(*fn), child, 1, position, keyword);
  }

  // The same for a function of the module the scanned code is in (`get_timestep_embedding(t, ...)`).
  bool function_needs(const std::string& name, size_t position, const std::string& keyword) const {
    if (!globals_ || depth_ >= kDepth) return false;
    const Scope* globals = (*globals_)(module_);
    if (!globals) return false;
    auto it = globals->vars.find(name);
    if (it == globals->vars.end()) return false;
    const auto* fn = it->second.as<FunctionObj>();
    return fn && fn->def && callee_needs(unwrapped(*fn), nullptr, 0, position, keyword);
  }

  // Whether `fn` (its parameters from `first`: 1 skips self) needs the argument at `position`
  // (or `keyword`) by this rule.
  bool callee_needs(const FunctionObj& fn, const InstanceObj* self, size_t first, size_t position, const std::string& keyword) const {
    const auto& def = *fn.def;
    size_t index = 0;
    for (size_t k = first; k < def.params.size(); ++k) {
      const Param& p = def.params[k];
      if (p.kind != ParamKind::Normal) {
        if (p.kind == ParamKind::KeywordOnlyMarker || p.kind == ParamKind::VarArgs) index = SIZE_MAX;
        continue;
      }
      if (position == SIZE_MAX ? p.name == keyword : index == position)
        return RequiredScan(p.name, self, globals_, fn.module, depth_ + 1).in(def.body);
      if (index != SIZE_MAX) ++index;
    }
    return false;
  }

  static constexpr int kDepth = 8;
  const std::string& name_;
  const InstanceObj* self_;
  std::string loop_var_;                      // the loop variable of the enclosing submodule loop
  const InstanceObj* loop_module_ = nullptr;  // and the first module it runs over
  const Globals* globals_;
  std::string module_;
  int depth_;
  bool found_ = false, assigned_ = false;
};

}  // namespace

// forward()'s inputs, in order, each with whether it is passed by name: every required parameter,
// then the optional ones (default None) named as main inputs or that forward() dereferences
// unconditionally (RequiredScan); with neither, the first optional
// parameter whose default is None. A wrapper made with functools.wraps is read through __wrapped__,
// as inspect.signature does.
std::vector<std::pair<std::string, bool>> ForwardTracer::forward_inputs(const FunctionObj& forward, bool with_index_inputs,
                                                                        const InstanceObj* self, const Interpreter* interp) {
  const FunctionObj* fn = &unwrapped(forward);
  const RequiredScan::Globals globals = [interp](const std::string& module) -> const Scope* {
    return interp ? interp->module_globals(module) : nullptr;
  };
  std::vector<std::pair<std::string, bool>> chosen;
  std::string first_optional;
  bool first = true, optional_seen = false;
  for (auto& p : fn->def->params) {
    if (p.kind == ParamKind::KeywordOnlyMarker || p.kind == ParamKind::VarArgs) optional_seen = true;
    if (p.kind != ParamKind::Normal) continue;
    if (first) { first = false; continue; }  // self
    if (!p.default_value && !optional_seen) {
      chosen.emplace_back(p.name, false);
      continue;
    }
    if (!p.default_value) {  // keyword-only and required
      chosen.emplace_back(p.name, true);
      continue;
    }
    optional_seen = true;
    if (p.default_value->kind != ExprKind::NoneLit) continue;
    if (first_optional.empty()) first_optional = p.name;
    if (is_main_input_name(p.name) || (with_index_inputs && index_input_kind(p.name) != IndexInput::None) ||
        RequiredScan(p.name, self, &globals, fn->module).in(fn->def->body))
      chosen.emplace_back(p.name, true);
  }
  if (chosen.empty() && !first_optional.empty()) chosen.emplace_back(first_optional, true);
  return chosen;
}

namespace {

// Methods model code requires to run before forward() (gpt-fast's Transformer.setup_caches(
// max_batch_size, max_seq_length) allocates the caches its forward() asserts are there).
const char* const kPreconditions[] = {"setup_caches", "setup_cache", "init_caches", "init_cache"};

// A weight read transposed (`x @ self.weight.T`, `F.linear(x, w.t())`, Falcon's and GPT-NeoX's
// linears): the contractions that read the transpose read the weight itself, with their letters
// permuted, and the transpose goes. That is what a compiler does with it (a transposed operand, or
// a const-eval of the parameter), and what the planner needs: otherwise the weight is stored whole
// and each device slices the transposed copy for free, so its layout never shows in memory or plan.
// Only transposes whose every reader is such a contraction; ops are renumbered (Call / Experts ends).
void fold_stored_transposes(ir::Dataflow& flow) {
  std::vector<std::vector<std::pair<int, int>>> readers(flow.tensors.size());  // (op, input position)
  for (size_t i = 0; i < flow.ops.size(); ++i)
    for (size_t k = 0; k < flow.ops[i].inputs.size(); ++k)
      readers[static_cast<size_t>(flow.ops[i].inputs[k])].emplace_back(static_cast<int>(i), static_cast<int>(k));
  std::vector<char> is_output(flow.tensors.size());
  for (int t : flow.outputs) is_output[static_cast<size_t>(t)] = 1;
  std::vector<char> gone(flow.ops.size());
  size_t removed = 0;
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    const ir::Op& permute = flow.ops[i];
    if (permute.kind != ir::OpKind::Permute || permute.inputs.size() != 1 || permute.outputs.size() != 1) continue;
    const int w = permute.inputs[0], v = permute.outputs[0];
    const auto& stored = flow.tensors[static_cast<size_t>(w)];
    if ((stored.parameter < 0 && stored.buffer < 0) || is_output[static_cast<size_t>(v)] || readers[static_cast<size_t>(v)].empty()) continue;
    const size_t rank = flow.tensors[static_cast<size_t>(v)].shape.size();
    if (permute.dims.size() != rank) continue;
    // Each reader's equation with the weight's letters in place of the transpose's.
    std::vector<std::string> equations;
    int last_reader = -1;
    for (auto [reader, at] : readers[static_cast<size_t>(v)]) {
      if (reader == last_reader) break;  // read twice by one op: left as it is
      last_reader = reader;
      const ir::Op& op = flow.ops[static_cast<size_t>(reader)];
      const auto arrow = op.equation.find("->");
      if (op.kind != ir::OpKind::Contract || arrow == std::string::npos || op.equation.find('.') != std::string::npos) break;
      auto operands = ir::split(std::string_view(op.equation).substr(0, arrow), ',');
      if (static_cast<size_t>(at) >= operands.size() || operands[static_cast<size_t>(at)].size() != rank) break;
      const std::string& seen = operands[static_cast<size_t>(at)];
      std::string letters(rank, ' ');
      for (size_t o = 0; o < rank; ++o) letters[static_cast<size_t>(permute.dims[o])] = seen[o];
      operands[static_cast<size_t>(at)] = letters;
      std::string equation;
      for (const auto& part : operands) equation += (equation.empty() ? "" : ",") + part;
      equations.push_back(equation + op.equation.substr(arrow));
    }
    if (equations.size() != readers[static_cast<size_t>(v)].size()) continue;
    for (size_t r = 0; r < equations.size(); ++r) {
      auto [reader, at] = readers[static_cast<size_t>(v)][r];
      ir::Op& op = flow.ops[static_cast<size_t>(reader)];
      op.equation = equations[r];
      op.inputs[static_cast<size_t>(at)] = w;
    }
    gone[i] = 1;
    ++removed;
  }
  if (removed == 0) return;
  // Per op index: how many ops before it were removed (for the ends of Call / Experts bodies).
  std::vector<int> removed_before(flow.ops.size() + 1, 0);
  for (size_t i = 0; i < flow.ops.size(); ++i) removed_before[i + 1] = removed_before[i] + gone[i];
  std::vector<ir::Op> kept;
  kept.reserve(flow.ops.size() - removed);
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    if (gone[i]) continue;
    ir::Op& op = flow.ops[i];
    if (op.end >= 0) op.end -= removed_before[static_cast<size_t>(op.end)];
    kept.push_back(std::move(op));
  }
  flow.ops = std::move(kept);
}

}  // namespace

// A model whose forward() fails one of its own assertions on the workload (a serving limit its
// loader left at 0, a sequence longer than it declares) is traced again past them: the plan covers
// the whole forward and each failed assertion is a warning at its line.
void ForwardTracer::trace(const std::shared_ptr<InstanceObj>& root, const TraceWorkload& workload) {
  past_assertions_ = false;
  trace_with_retries(root, workload);
  if (model_.dataflow.error.starts_with("forward() raised AssertionError")) {
    past_assertions_ = true;
    trace_with_retries(root, workload);
    past_assertions_ = false;
  }
  fold_stored_transposes(model_.dataflow);
}

void ForwardTracer::trace_with_retries(const std::shared_ptr<InstanceObj>& root, const TraceWorkload& workload) {
  named_by_error_.clear();
  sequence_length_ = 0;
  trace_once(root, workload);
  // forward() takes the length of the sequence it makes (Wan pads every video's patches to
  // `seq_len`): given the workload's tokens first, it is the longest sequence that trace made, and
  // the trace runs again with it when that is longer.
  if (const int64_t longest = sequence_lengths_.empty() ? 0 : longest_sequence(); longest > workload.tokens) {
    sequence_length_ = longest;
    trace_once(root, workload);
    model_.dataflow.notes.push_back(sequence_lengths_.front() + " = " + std::to_string(sequence_length_) +
                                    ": the longest sequence forward() makes from the inputs");
  }
  if (model_.dataflow.error.empty() || !model_.dataflow.error.starts_with("forward() raised")) return;
  auto joined = [](const std::vector<std::string>& names) {
    std::string out;
    for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  // forward()'s optional parameters (default None) that the trace left None, in signature order.
  std::vector<const Param*> left_none;
  if (const Value* forward = root->cls->lookup("forward"); forward && forward->as<FunctionObj>()) {
    std::vector<std::string> chosen;
    for (auto& name : forward_inputs(*forward->as<FunctionObj>(), with_index_inputs_, root.get(), &interp_)) chosen.push_back(name.first);
    for (auto& p : unwrapped(*forward->as<FunctionObj>()).def->params)
      if (p.kind == ParamKind::Normal && p.default_value && p.default_value->kind == ExprKind::NoneLit &&
          std::find(chosen.begin(), chosen.end(), p.name) == chosen.end())
        left_none.push_back(&p);
  }
  // forward() raised naming an optional input that was left None: trace again with it given.
  {
    const std::string before = model_.dataflow.error;
    for (const Param* p : left_none)
      for (size_t at = before.find(p->name); at != std::string::npos; at = before.find(p->name, at + 1)) {
        auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        const size_t end = at + p->name.size();
        if ((at == 0 || !word(before[at - 1])) && (end >= before.size() || !word(before[end]))) {
          named_by_error_.push_back(p->name);
          break;
        }
      }
    if (!named_by_error_.empty()) {
      trace_once(root, workload);
      model_.dataflow.notes.push_back("traced again with " + joined(named_by_error_) + " given: forward() raised naming " +
                                      (named_by_error_.size() > 1 ? "them" : "it") + " while left None (" + before + ")");
      if (model_.dataflow.error.empty() || !model_.dataflow.error.starts_with("forward() raised")) return;
    }
  }
  // forward() raised on a None that no message names (Flux hands its pooled_projections, left
  // None, through a conditional expression to a submodule that reads its dtype): the optional
  // inputs typed as tensors (masks aside: None is their usual value) are given one at a time, in
  // the signature's order, each kept when forward() then runs further (more ops traced).
  if (model_.dataflow.error.find("NoneType") != std::string::npos) {
    const std::string before = model_.dataflow.error;
    size_t best_ops = model_.dataflow.ops.size();
    std::vector<std::string> kept;
    bool last_kept = true;
    for (const Param* p : left_none) {
      if (p->annotation.find("Tensor") == std::string::npos || lower_name(p->name).find("mask") != std::string::npos) continue;
      if (std::find(named_by_error_.begin(), named_by_error_.end(), p->name) != named_by_error_.end()) continue;
      named_by_error_.push_back(p->name);
      trace_once(root, workload);
      last_kept = model_.dataflow.error.empty() || model_.dataflow.ops.size() > best_ops;
      if (last_kept) {
        best_ops = model_.dataflow.ops.size();
        kept.push_back(p->name);
        if (model_.dataflow.error.empty()) break;
      } else {
        named_by_error_.pop_back();
      }
    }
    if (!last_kept) trace_once(root, workload);
    if (!kept.empty())
      model_.dataflow.notes.push_back("traced again with " + joined(kept) + " given: forward() raised on a None while " +
                                      (kept.size() > 1 ? "they were" : "it was") + " left None (" + before + ")");
    if (model_.dataflow.error.empty() || !model_.dataflow.error.starts_with("forward() raised")) return;
  }
  // forward() raised: when the model has a method that prepares it (its caches), run that with
  // the workload's batch and sequence as its sizes, and trace again.
  Value self = Value::object(root);
  for (const char* name : kPreconditions) {
    const Value* method = root->cls->lookup(name);
    auto* fn = method ? method->as<FunctionObj>() : nullptr;
    if (!fn) continue;
    CallArgs args;
    bool first = true, callable = true;
    for (auto& p : fn->def->params) {
      if (p.kind != ParamKind::Normal) continue;
      if (first) { first = false; continue; }  // self
      std::string n = lower_name(p.name);
      int64_t value = n.find("batch") != std::string::npos ? workload.batch
                      : (n.find("seq") != std::string::npos || n.find("len") != std::string::npos || n.find("ctx") != std::string::npos)
                          ? std::max(workload.tokens, workload.context)
                          : -1;
      if (value > 0) args.keywords.emplace_back(p.name, Value::integer(value));
      else if (!p.default_value) callable = false;
    }
    if (!callable) return;
    std::string before = model_.dataflow.error;
    interp_.call(interp_.get_attribute(self, name, root->module ? root->module->span : ir::Span{}), std::move(args),
                 root->module ? root->module->span : ir::Span{});
    if (interp_.exception_pending()) {
      interp_.take_exception("Exception");
      return;
    }
    // A model with caches is stepped with the positions it writes (gpt-fast's input_pos).
    with_index_inputs_ = true;
    trace_once(root, workload);
    with_index_inputs_ = false;
    model_.dataflow.notes.push_back(std::string("ran ") + root->cls->name + "." + name + "() before forward(), which " +
                                    (model_.dataflow.error.empty() ? "needs it" : "still fails after it") + " (" + before + ")");
    return;
  }
}

bool ForwardTracer::assertion_failed(const ir::Span& site) {
  if (!past_assertions_) return false;
  auto& seen = flow_->failed_assertions;
  if (std::find(seen.begin(), seen.end(), site) == seen.end()) seen.push_back(site);
  return true;
}

void ForwardTracer::trace_once(const std::shared_ptr<InstanceObj>& root, const TraceWorkload& workload) {
  workload_ = workload;
  flow_ = &model_.dataflow;
  *flow_ = ir::Dataflow();
  const Value* forward = root->cls->lookup("forward");
  auto* fn = forward ? forward->as<FunctionObj>() : nullptr;
  root_forward_ = fn;
  root_instance_ = root.get();
  if (!fn) {
    flow_->error = root->cls->name + " has no forward() the front end can read";
    return;
  }
  std::vector<Placeholder> inputs;
  packed_lengths_.clear();
  sequence_lengths_.clear();
  auto chosen = forward_inputs(*fn, with_index_inputs_, root.get(), &interp_);
  for (auto& n : named_by_error_) chosen.emplace_back(n, true);
  start_positions_.clear();
  for (auto& name : chosen) {
    if (int_position_param(unwrapped(*fn), name.first)) {
      start_positions_.push_back(name.first);  // an int, not a tensor (run() passes it by name)
      continue;
    }
    if (packed_lengths_name(name.first)) {
      packed_lengths_ = name.first;  // a list of ints, not a tensor (run() passes it by name)
      continue;
    }
    if (sequence_length_param(unwrapped(*fn), name.first)) {
      sequence_lengths_.push_back(name.first);  // an int, not a tensor (run() passes it by name)
      continue;
    }
    inputs.push_back({name.first, interp_.new_tensor(std::nullopt, {}), -1, name.second});
  }
  find_position_tables();
  max_tokens_seen_ = 0;
  // Inputs given by name (--input): any parameter of forward(), chosen or not; a name forward()
  // does not take is an error, not a silent default.
  for (auto& given : workload_.inputs) {
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const Placeholder& p) { return p.name == given.name; });
    if (it == inputs.end()) {
      if (!takes_parameter(*fn, given.name)) {
        flow_->error = "--input " + given.name + ": " + root->cls->name + ".forward() has no parameter of that name";
        return;
      }
      inputs.push_back({given.name, nullptr, -1, true});
      it = inputs.end() - 1;
    }
    it->given = &given;
    it->tensor = interp_.new_tensor(given.shape, {});
    it->tensor->dtype = given.dtype;
  }
  found_.clear();
  guess_held_ = false;
  if (workload_.inputs.empty() && trace_with_guess(root, inputs)) {
    flow_->max_tokens = max_tokens_seen_;
    return;
  }
  // Pass 1: find what each input is from its first use (it ends there); pass 2: trace with those shapes.
  // An input whose first use comes after code that needs another input's shape (a decoder's
  // tokens after the encoder has read the audio) is told by a further pass 1, run with the inputs
  // told so far: as many passes as tell something new.
  std::vector<GivenInput> told;
  told.reserve(inputs.size());
  std::map<std::string, std::string> told_by;
  bool probe_finished = false;  // the last pass 1 ran forward() to its end
  for (size_t round = 0;; ++round) {
    probe_inputs_ = &inputs;
    probe_reached_.clear();
    probe_next_op_ = 0;
    run(root, inputs);
    probe_finished = interp_.pending_exception() == nullptr;
    probe_inputs_ = nullptr;
    interp_.end_stop();
    interp_.take_exception("Exception");
    bool all = true, progress = false;
    std::vector<std::pair<Placeholder*, GivenInput>> now;
    auto told_now = [&](const Placeholder& p) -> const std::vector<int64_t>* {
      if (p.given) return &p.given->shape;
      for (auto& [q, g] : now)
        if (q == &p) return &g.shape;
      return nullptr;
    };
    for (bool masks : {false, true})  // a padding mask after the input it pairs with
      for (auto& p : inputs) {
        if (p.given || masks != padding_mask_of(p.name).has_value()) continue;
        GivenInput g{p.name, {}, "float32"};
        std::string what = masks ? mask_told_by(p, inputs, told_now, g.shape, g.dtype) : infer_input(p, g.shape, g.dtype);
        if (what.empty()) {
          all = false;
          continue;
        }
        progress = true;
        told_by[p.name] = what;
        now.emplace_back(&p, std::move(g));
      }
    if (all || !progress || round + 1 >= inputs.size()) break;
    for (auto& [p, g] : now) {
      told.push_back(std::move(g));
      p->given = &told.back();
      p->tensor = input_tensor(p->name, told.back().shape, told.back().dtype);
    }
  }
  // An optional input chosen by its name that forward() never read, on a pass 1 that ran to the
  // end, is not needed on this path (mistral-inference's `images` without a vision encoder): it
  // keeps its default.
  if (probe_finished)
    std::erase_if(inputs, [&](const Placeholder& p) {
      if (p.given || !p.by_keyword) return false;
      std::vector<int64_t> shape;
      std::string dtype;
      if (!infer_input(p, shape, dtype).empty()) return false;
      for (const auto& op : flow_->ops)
        if (op.kind != OpKind::Call && std::find(op.inputs.begin(), op.inputs.end(), p.id) != op.inputs.end()) return false;
      flow_->notes.push_back("forward input '" + p.name + "' is not read on the path traced: left at its default");
      return true;
    });
  bool all_known = true;
  std::vector<InputShape> final_shapes(inputs.size());
  for (bool masks : {false, true})  // a padding mask after the input it pairs with
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Placeholder& p = inputs[k];
      if (masks != (!p.given && padding_mask_of(p.name).has_value())) continue;
      InputShape& f = final_shapes[k];
      f.dtype = "float32";
      if (p.given) {
        f.told_by = told_by.count(p.name) ? told_by[p.name] : "given";
        f.shape = p.given->shape;
        f.dtype = p.given->dtype;
      } else if (masks) {
        f.told_by = mask_told_by(p, inputs, [&](const Placeholder& q) -> const std::vector<int64_t>* {
          const InputShape& told = final_shapes[static_cast<size_t>(&q - inputs.data())];
          return told.told_by.empty() ? nullptr : &told.shape;
        }, f.shape, f.dtype);
      } else {
        f.told_by = infer_input(p, f.shape, f.dtype);
      }
    }
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto& p = inputs[k];
    std::vector<int64_t> shape = final_shapes[k].shape;
    std::string dtype = final_shapes[k].dtype;
    std::string what = final_shapes[k].told_by;
    if (what.empty()) {
      all_known = false;
      flow_->notes.push_back("could not tell the shape of forward input '" + p.name + "' from its first use: give it with --input " +
                             p.name + "=SHAPE[:DTYPE] (in an editor, the `inputs` setting)");
      continue;
    }
    p.tensor = input_tensor(p.name, shape, dtype);
    flow_->input_descriptions.push_back(describe_input({p.name, shape, dtype, what}));
    found_.push_back({p.name, shape, dtype, what});
  }
  if (!all_known) found_.clear();
  // Keep pass 1's notes about inputs; what pass 1 noted while tracing is noted again by pass 2.
  std::vector<std::string> input_notes;
  for (auto& n : flow_->notes)
    if (n.rfind("could not tell", 0) == 0 || n.rfind("forward input '", 0) == 0) input_notes.push_back(n);
  flow_->notes = input_notes;
  flow_->failed_assertions.clear();
  run(root, inputs);
  if (const PendingException* raised = interp_.pending_exception()) {
    // What raised and where: the user's next step is to look at that line.
    flow_->error = "forward() raised " + raised->type + (raised->message.empty() ? "" : ": " + raised->message) +
                   " at " + ir::span_location(raised->span, "the script");
    interp_.take_exception("Exception");
  }
  flow_->traced = all_known && flow_->error.empty();
  if (!all_known && flow_->error.empty()) flow_->error = "input shapes unknown";
  flow_->max_tokens = max_tokens_seen_;
}

// Pass 2 alone, on the guessed inputs. It stands when infer_input, reading this pass's own ops,
// tells every input exactly as guessed. Pass 1, blind to the inputs' shapes, reaches the same first
// informative use and reads the same weights there, unless forward() branches on an input's shape
// before that use; the sweep in tests/unit/test_input_guess.cpp checks every model script against
// the two passes.
bool ForwardTracer::trace_with_guess(const std::shared_ptr<InstanceObj>& root, std::vector<Placeholder>& inputs) {
  if (guess_.empty() || guess_.size() != inputs.size()) return false;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (guess_[k].name != inputs[k].name) return false;
  auto checkpoint = interp_.checkpoint();
  for (size_t k = 0; k < inputs.size(); ++k) inputs[k].tensor = input_tensor(inputs[k].name, guess_[k].shape, guess_[k].dtype);
  // Sized as the earlier trace was: a single pass would otherwise grow them from nothing (pass 2
  // of two inherits pass 1's), about a millisecond on the bench's 6,600-op model.
  flow_->ops.reserve(guess_sizes_.ops);
  flow_->tensors.reserve(guess_sizes_.tensors);
  object_of_id_.reserve(guess_sizes_.tensors);
  version_.reserve(guess_sizes_.tensors);
  run(root, inputs);
  bool held = !interp_.exception_pending() && !changed_prior_state_;
  for (size_t k = 0; k < inputs.size() && held; ++k) {
    std::vector<int64_t> shape;
    std::string dtype = "float32";
    std::string what = padding_mask_of(inputs[k].name)
                           ? mask_told_by(inputs[k], inputs, [&](const Placeholder& q) { return &guess_[static_cast<size_t>(&q - inputs.data())].shape; },
                                          shape, dtype)
                           : infer_input(inputs[k], shape, dtype);
    held = InputShape{inputs[k].name, shape, dtype, what} == guess_[k];
  }
  if (!held) {
    // As if this pass had not run: its events and notes would not be the two passes' own.
    interp_.rollback(checkpoint);
    for (auto& p : inputs) p.tensor = interp_.new_tensor(std::nullopt, {});
    *flow_ = ir::Dataflow();
    return false;
  }
  for (auto& g : guess_) flow_->input_descriptions.push_back(describe_input(g));
  found_ = guess_;
  guess_held_ = true;
  flow_->traced = flow_->error.empty();
  return true;
}

}  // namespace shardlens::python
