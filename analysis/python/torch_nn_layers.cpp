// nn layers with PyTorch's exact parameter and buffer names, shapes and registration order
// (checked against torch 1.13 by the test suite), and the layers without parameters.
#include "python/interpreter.h"
#include "python/native_support.h"

namespace shardlens::python::native {

namespace {

Value new_param(Interpreter& in, std::vector<Value> dims, const ir::Span& site, const std::string& dtype,
                const std::string& what) {
  Value why;
  auto shape = dims_of(dims, &why);
  auto t = in.new_tensor(shape, site, true);
  if (!dtype.empty()) t->dtype = dtype;
  if (!shape) {
    t->why = why.unknown ? why.unknown : std::make_shared<UnknownInfo>(UnknownInfo{"shape not known", site, false});
    in.note("shape of parameter '" + what + "' could not be resolved", t->why->reason, site);
  } else {
    for (int64_t d : *shape)
      if (d < 0) {
        in.raise("RuntimeError", "parameter '" + what + "' would have a negative dimension", site);
        break;
      }
  }
  return Value::object(t);
}

// The n-tuple a conv's kernel_size / stride / padding argument means.
std::vector<Value> n_tuple(const Value& v, size_t n) {
  if (auto* l = TupleView::of(v)) return l->items;
  return std::vector<Value>(n, v);
}

std::string args_repr(Interpreter& in, const Args& a) {
  std::string s;
  for (auto& v : a.positional) s += (s.empty() ? "" : ", ") + repr(v);
  for (auto& [k, v] : a.keywords) s += (s.empty() ? "" : ", ") + k + "=" + repr(v);
  (void)in;
  return s;
}

std::string tuple_repr(const std::vector<Value>& items) {
  std::string s = "(";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + repr(items[i]);
  if (items.size() == 1) s += ",";
  return s + ")";
}

void set_attrs(const Value& self, const Bound& b, std::initializer_list<const char*> names) {
  if (auto* m = instance(self))
    for (const char* n : names) {
      if (const Value* v = b.find(n)) m->set_attribute(n, *v);
    }
}

void set_repr(const Value& self, std::string r) {
  if (auto* m = instance(self); m && m->module) m->module->extra_repr = std::move(r);
}

bool is_true(Interpreter& in, const Value& v) { return in.truth(v).value_or(false); }

}  // namespace

void install_nn_layers(Interpreter& in) {
  auto module = in.module_base();
  auto none = Value::none();
  auto T = Value::boolean(true);
  auto F = Value::boolean(false);
  auto layer = [&](const std::string& name, NativeFn init, std::shared_ptr<ClassObj> base = nullptr) {
    return in.make_builtin_class("torch.nn." + name, {base ? base : module}, std::move(init));
  };
  auto linear = layer("Linear", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    static const std::vector<P> kParams = {{"in_features", std::nullopt}, {"out_features", std::nullopt}, {"bias", T}, {"device", none}, {"dtype", none}};
    if (!bind_args(in, "Linear", kParams, a, b, site)) return Value::none();
    std::string dt = dtype_name(b["dtype"]);
    set_attrs(self, b, {"in_features", "out_features"});
    register_param(in, self, "weight", new_param(in, {b["out_features"], b["in_features"]}, instance(self)->module->span, dt, "weight"), site);
    if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, {b["out_features"]}, instance(self)->module->span, dt, "bias"), site);
    else register_none_param(self, "bias");
    set_repr(self, "in_features=" + repr(b["in_features"]) + ", out_features=" + repr(b["out_features"]) + ", bias=" + (is_true(in, b["bias"]) ? "True" : "False"));
    return Value::none();
  });
  in.make_builtin_class("torch.nn.modules.linear.NonDynamicallyQuantizableLinear", {linear}, nullptr);
  layer("LazyLinear", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    in.note("nn.LazyLinear infers its input size from the first forward pass", "shapes of lazy modules are not known statically", site);
    return Value::none();
  });
  layer("Bilinear", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "Bilinear", {{"in1_features", std::nullopt}, {"in2_features", std::nullopt}, {"out_features", std::nullopt}, {"bias", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    auto span = instance(self)->module->span;
    register_param(in, self, "weight", new_param(in, {b["out_features"], b["in1_features"], b["in2_features"]}, span, dtype_name(b["dtype"]), "weight"), site);
    if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, {b["out_features"]}, span, dtype_name(b["dtype"]), "bias"), site);
    else register_none_param(self, "bias");
    return Value::none();
  });
  auto embedding_init = [=](const std::string& cls) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      if (!bind_args(in, cls, {{"num_embeddings", std::nullopt}, {"embedding_dim", std::nullopt}, {"padding_idx", none}, {"max_norm", none},
                          {"norm_type", Value::floating(2.0)}, {"scale_grad_by_freq", F}, {cls == "EmbeddingBag" ? "mode" : "sparse", cls == "EmbeddingBag" ? Value::str("mean") : F},
                          {cls == "EmbeddingBag" ? "sparse" : "_weight", cls == "EmbeddingBag" ? F : none},
                          {cls == "EmbeddingBag" ? "_weight" : "_freeze", cls == "EmbeddingBag" ? none : F},
                          {"include_last_offset", F}, {"device", none}, {"dtype", none}}, a, b, site, true))
        return Value::none();
      set_attrs(self, b, {"num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"});
      auto span = instance(self)->module->span;
      if (auto* w = b["_weight"].as<TensorObj>()) {
        auto p = in.new_tensor(w->shape, span, true);
        register_param(in, self, "weight", Value::object(p), site);
      } else {
        register_param(in, self, "weight", new_param(in, {b["num_embeddings"], b["embedding_dim"]}, span, dtype_name(b["dtype"]), "weight"), site);
      }
      std::string r = repr(b["num_embeddings"]) + ", " + repr(b["embedding_dim"]);
      if (!b["padding_idx"].is_none()) r += ", padding_idx=" + repr(b["padding_idx"]);
      set_repr(self, r);
      return Value::none();
    };
  };
  layer("Embedding", embedding_init("Embedding"));
  layer("EmbeddingBag", embedding_init("EmbeddingBag"));
  auto shape_list = [](const Value& v) {
    if (auto* l = TupleView::of(v)) return l->items;
    return std::vector<Value>{v};
  };
  layer("LayerNorm", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "LayerNorm", {{"normalized_shape", std::nullopt}, {"eps", Value::floating(1e-5)}, {"elementwise_affine", T}, {"bias", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    auto dims = shape_list(b["normalized_shape"]);
    auto span = instance(self)->module->span;
    bool affine = is_true(in, b["elementwise_affine"]);
    if (affine) {
      register_param(in, self, "weight", new_param(in, dims, span, dtype_name(b["dtype"]), "weight"), site);
      if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, dims, span, dtype_name(b["dtype"]), "bias"), site);
      else register_none_param(self, "bias");
    } else {
      register_none_param(self, "weight");
      register_none_param(self, "bias");
    }
    if (auto* m = instance(self)) {
      m->set_attribute("normalized_shape", make_tuple(dims));
      m->set_attribute("eps", b["eps"]);
      m->set_attribute("elementwise_affine", b["elementwise_affine"]);
    }
    set_repr(self, tuple_repr(dims) + ", eps=" + repr(b["eps"]) + ", elementwise_affine=" + (affine ? "True" : "False"));
    return Value::none();
  });
  layer("RMSNorm", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "RMSNorm", {{"normalized_shape", std::nullopt}, {"eps", none}, {"elementwise_affine", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    auto dims = shape_list(b["normalized_shape"]);
    bool affine = is_true(in, b["elementwise_affine"]);
    if (affine) register_param(in, self, "weight", new_param(in, dims, instance(self)->module->span, dtype_name(b["dtype"]), "weight"), site);
    else register_none_param(self, "weight");
    set_repr(self, tuple_repr(dims) + ", eps=" + repr(b["eps"]) + ", elementwise_affine=" + (affine ? "True" : "False"));
    return Value::none();
  });
  layer("GroupNorm", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "GroupNorm", {{"num_groups", std::nullopt}, {"num_channels", std::nullopt}, {"eps", Value::floating(1e-5)}, {"affine", T}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    if (b["num_groups"].is_int() && b["num_channels"].is_int() && b["num_groups"].as_int() != 0 &&
        b["num_channels"].as_int() % b["num_groups"].as_int() != 0)
      return in.raise("ValueError", "num_channels must be divisible by num_groups", site);
    set_attrs(self, b, {"num_groups", "num_channels", "eps", "affine"});
    auto span = instance(self)->module->span;
    bool affine = is_true(in, b["affine"]);
    if (affine) {
      register_param(in, self, "weight", new_param(in, {b["num_channels"]}, span, dtype_name(b["dtype"]), "weight"), site);
      register_param(in, self, "bias", new_param(in, {b["num_channels"]}, span, dtype_name(b["dtype"]), "bias"), site);
    } else {
      register_none_param(self, "weight");
      register_none_param(self, "bias");
    }
    set_repr(self, repr(b["num_groups"]) + ", " + repr(b["num_channels"]) + ", eps=" + repr(b["eps"]) + ", affine=" + (affine ? "True" : "False"));
    return Value::none();
  });
  auto norm_base = [=](const std::string& cls, bool affine_default, bool track_default) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      if (!bind_args(in, cls, {{"num_features", std::nullopt}, {"eps", Value::floating(1e-5)}, {"momentum", Value::floating(0.1)},
                          {"affine", Value::boolean(affine_default)}, {"track_running_stats", Value::boolean(track_default)},
                          {cls == "SyncBatchNorm" ? "process_group" : "device", none}, {cls == "SyncBatchNorm" ? "device" : "dtype", none}, {"dtype", none}},
                a, b, site))
        return Value::none();
      set_attrs(self, b, {"num_features", "eps", "momentum", "affine", "track_running_stats"});
      auto span = instance(self)->module->span;
      bool affine = is_true(in, b["affine"]);
      bool track = is_true(in, b["track_running_stats"]);
      if (affine) {
        register_param(in, self, "weight", new_param(in, {b["num_features"]}, span, "", "weight"), site);
        register_param(in, self, "bias", new_param(in, {b["num_features"]}, span, "", "bias"), site);
      } else {
        register_none_param(self, "weight");
        register_none_param(self, "bias");
      }
      if (track) {
        auto stat = [&](std::vector<Value> dims, const char* dtype) {
          return std::static_pointer_cast<TensorObj>(new_buffer_tensor(in, std::move(dims), span, dtype).obj);
        };
        register_buffer(self, "running_mean", stat({b["num_features"]}, ""), true);
        register_buffer(self, "running_var", stat({b["num_features"]}, ""), true);
        register_buffer(self, "num_batches_tracked", stat({make_tuple({})}, "int64"), true);
      } else {
        register_buffer(self, "running_mean", nullptr, true);
        register_buffer(self, "running_var", nullptr, true);
        register_buffer(self, "num_batches_tracked", nullptr, true);
      }
      set_repr(self, repr(b["num_features"]) + ", eps=" + repr(b["eps"]) + ", momentum=" + repr(b["momentum"]) +
                         ", affine=" + (affine ? "True" : "False") + ", track_running_stats=" + (track ? "True" : "False"));
      return Value::none();
    };
  };
  for (const char* n : {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"}) layer(n, norm_base(n, true, true));
  for (const char* n : {"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"}) layer(n, norm_base(n, false, false));

  auto conv = [=](const std::string& cls, size_t n, bool transposed) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::vector<P> params = {{"in_channels", std::nullopt}, {"out_channels", std::nullopt}, {"kernel_size", std::nullopt},
                               {"stride", Value::integer(1)}, {"padding", Value::integer(0)}};
      if (transposed) {
        params.push_back({"output_padding", Value::integer(0)});
        params.push_back({"groups", Value::integer(1)});
        params.push_back({"bias", T});
        params.push_back({"dilation", Value::integer(1)});
      } else {
        params.push_back({"dilation", Value::integer(1)});
        params.push_back({"groups", Value::integer(1)});
        params.push_back({"bias", T});
      }
      params.push_back({"padding_mode", Value::str("zeros")});
      params.push_back({"device", none});
      params.push_back({"dtype", none});
      if (!bind_args(in, cls, params, a, b, site)) return Value::none();
      const Value &cin = b["in_channels"], &cout = b["out_channels"], &groups = b["groups"];
      if (cin.is_int() && cout.is_int() && groups.is_int() && groups.as_int() > 0) {
        if (cin.as_int() % groups.as_int()) return in.raise("ValueError", "in_channels must be divisible by groups", site);
        if (cout.as_int() % groups.as_int()) return in.raise("ValueError", "out_channels must be divisible by groups", site);
      }
      auto kernel = n_tuple(b["kernel_size"], n);
      std::vector<Value> dims;
      if (transposed) dims = {cin, in.binary("//", cout, groups, site)};
      else dims = {cout, in.binary("//", cin, groups, site)};
      dims.insert(dims.end(), kernel.begin(), kernel.end());
      auto span = instance(self)->module->span;
      set_attrs(self, b, {"in_channels", "out_channels", "groups", "padding_mode"});
      if (auto* m = instance(self)) {
        m->set_attribute("stride", make_tuple(n_tuple(b["stride"], n)));
        m->set_attribute("padding", b["padding"].is_str() ? b["padding"] : make_tuple(n_tuple(b["padding"], n)));
        m->set_attribute("dilation", make_tuple(n_tuple(b["dilation"], n)));
      }
      if (auto* m = instance(self)) m->set_attribute("kernel_size", make_tuple(kernel));
      register_param(in, self, "weight", new_param(in, dims, span, dtype_name(b["dtype"]), "weight"), site);
      if (is_true(in, b["bias"])) register_param(in, self, "bias", new_param(in, {cout}, span, dtype_name(b["dtype"]), "bias"), site);
      else register_none_param(self, "bias");
      std::string r = repr(cin) + ", " + repr(cout) + ", kernel_size=" + tuple_repr(kernel) + ", stride=" + tuple_repr(n_tuple(b["stride"], n));
      if (!(b["padding"].is_int() && b["padding"].as_int() == 0))
        r += ", padding=" + (b["padding"].is_str() ? repr(b["padding"]) : tuple_repr(n_tuple(b["padding"], n)));
      if (!(groups.is_int() && groups.as_int() == 1)) r += ", groups=" + repr(groups);
      if (!is_true(in, b["bias"])) r += ", bias=False";
      set_repr(self, r);
      return Value::none();
    };
  };
  layer("Conv1d", conv("Conv1d", 1, false));
  layer("Conv2d", conv("Conv2d", 2, false));
  layer("Conv3d", conv("Conv3d", 3, false));
  layer("ConvTranspose1d", conv("ConvTranspose1d", 1, true));
  layer("ConvTranspose2d", conv("ConvTranspose2d", 2, true));
  layer("ConvTranspose3d", conv("ConvTranspose3d", 3, true));

  layer("PReLU", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "PReLU", {{"num_parameters", Value::integer(1)}, {"init", Value::floating(0.25)}, {"device", none}, {"dtype", none}}, a, b, site)) return Value::none();
    register_param(in, self, "weight", new_param(in, {b["num_parameters"]}, instance(self)->module->span, "", "weight"), site);
    set_repr(self, "num_parameters=" + repr(b["num_parameters"]));
    return Value::none();
  });

  auto mha = layer("MultiheadAttention", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "MultiheadAttention", {{"embed_dim", std::nullopt}, {"num_heads", std::nullopt}, {"dropout", Value::floating(0.0)}, {"bias", T},
                                         {"add_bias_kv", F}, {"add_zero_attn", F}, {"kdim", none}, {"vdim", none}, {"batch_first", F}, {"device", none}, {"dtype", none}},
              a, b, site))
      return Value::none();
    Value e = b["embed_dim"];
    Value kdim = b["kdim"].is_none() ? e : b["kdim"];
    Value vdim = b["vdim"].is_none() ? e : b["vdim"];
    if (e.is_int() && b["num_heads"].is_int() && b["num_heads"].as_int() > 0 && e.as_int() % b["num_heads"].as_int())
      return in.raise("AssertionError", "embed_dim must be divisible by num_heads", site);
    auto span = instance(self)->module->span;
    std::string dt = dtype_name(b["dtype"]);
    bool same = in.equal(kdim, e).value_or(false) && in.equal(vdim, e).value_or(false);
    if (!same) {
      register_param(in, self, "q_proj_weight", new_param(in, {e, e}, span, dt, "q_proj_weight"), site);
      register_param(in, self, "k_proj_weight", new_param(in, {e, kdim}, span, dt, "k_proj_weight"), site);
      register_param(in, self, "v_proj_weight", new_param(in, {e, vdim}, span, dt, "v_proj_weight"), site);
      register_none_param(self, "in_proj_weight");
    } else {
      register_param(in, self, "in_proj_weight", new_param(in, {in.binary("*", Value::integer(3), e, site), e}, span, dt, "in_proj_weight"), site);
      register_none_param(self, "q_proj_weight");
      register_none_param(self, "k_proj_weight");
      register_none_param(self, "v_proj_weight");
    }
    if (is_true(in, b["bias"])) register_param(in, self, "in_proj_bias", new_param(in, {in.binary("*", Value::integer(3), e, site)}, span, dt, "in_proj_bias"), site);
    else register_none_param(self, "in_proj_bias");
    Value out_cls = *in.builtin("torch.nn.modules.linear.NonDynamicallyQuantizableLinear");
    Value out_proj = in.call(out_cls, Args{{e, e}, {{"bias", b["bias"]}}}, span);
    in.module_set(*instance(self), "out_proj", out_proj, site);
    if (is_true(in, b["add_bias_kv"])) {
      register_param(in, self, "bias_k", new_param(in, {Value::integer(1), Value::integer(1), e}, span, dt, "bias_k"), site);
      register_param(in, self, "bias_v", new_param(in, {Value::integer(1), Value::integer(1), e}, span, dt, "bias_v"), site);
    } else {
      instance(self)->set_attribute("bias_k", none);
      instance(self)->set_attribute("bias_v", none);
    }
    set_attrs(self, b, {"embed_dim", "num_heads", "batch_first", "dropout"});
    if (auto* m = instance(self)) {
      m->set_attribute("kdim", kdim);
      m->set_attribute("vdim", vdim);
      m->set_attribute("_qkv_same_embed_dim", Value::boolean(same));
      m->set_attribute("head_dim", in.binary("//", e, b["num_heads"], site));
    }
    return Value::none();
  });

  // Recurrent layers: PyTorch's RNNBase parameter naming.
  auto rnn = [=](const std::string& cls, int gates) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::vector<P> params = {{"input_size", std::nullopt}, {"hidden_size", std::nullopt}, {"num_layers", Value::integer(1)}};
      if (cls == "RNN") params.push_back({"nonlinearity", Value::str("tanh")});
      for (P p : std::vector<P>{{"bias", T}, {"batch_first", F}, {"dropout", Value::floating(0)}, {"bidirectional", F}, {"proj_size", Value::integer(0)}, {"device", none}, {"dtype", none}})
        params.push_back(p);
      if (!bind_args(in, cls, params, a, b, site)) return Value::none();
      if (!b["num_layers"].is_int() || !b["hidden_size"].is_int() || !b["input_size"].is_int() || !b["proj_size"].is_int()) {
        in.note(cls + " sizes could not be evaluated", "unknown sizes", site);
        return Value::none();
      }
      int64_t layers = b["num_layers"].as_int(), hidden = b["hidden_size"].as_int(), proj = b["proj_size"].as_int();
      int dirs = is_true(in, b["bidirectional"]) ? 2 : 1;
      bool bias = is_true(in, b["bias"]);
      int64_t real_hidden = proj > 0 ? proj : hidden;
      auto span = instance(self)->module->span;
      for (int64_t l = 0; l < layers; ++l)
        for (int d = 0; d < dirs; ++d) {
          int64_t layer_in = l == 0 ? b["input_size"].as_int() : real_hidden * dirs;
          std::string sfx = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
          auto I = [](int64_t v) { return Value::integer(v); };
          register_param(in, self, "weight_ih" + sfx, new_param(in, {I(gates * hidden), I(layer_in)}, span, "", "weight_ih" + sfx), site);
          register_param(in, self, "weight_hh" + sfx, new_param(in, {I(gates * hidden), I(real_hidden)}, span, "", "weight_hh" + sfx), site);
          if (bias) {
            register_param(in, self, "bias_ih" + sfx, new_param(in, {I(gates * hidden)}, span, "", "bias_ih" + sfx), site);
            register_param(in, self, "bias_hh" + sfx, new_param(in, {I(gates * hidden)}, span, "", "bias_hh" + sfx), site);
          }
          if (proj > 0) register_param(in, self, "weight_hr" + sfx, new_param(in, {I(proj), I(hidden)}, span, "", "weight_hr" + sfx), site);
        }
      set_repr(self, repr(b["input_size"]) + ", " + repr(b["hidden_size"]) + (layers != 1 ? ", num_layers=" + std::to_string(layers) : ""));
      return Value::none();
    };
  };
  layer("LSTM", rnn("LSTM", 4));
  layer("GRU", rnn("GRU", 3));
  layer("RNN", rnn("RNN", 1));
  auto cell = [=](const std::string& cls, int gates) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::vector<P> params = {{"input_size", std::nullopt}, {"hidden_size", std::nullopt}, {"bias", T}};
      if (cls == "RNNCell") params.push_back({"nonlinearity", Value::str("tanh")});
      params.push_back({"device", none});
      params.push_back({"dtype", none});
      if (!bind_args(in, cls, params, a, b, site)) return Value::none();
      Value g = in.binary("*", Value::integer(gates), b["hidden_size"], site);
      auto span = instance(self)->module->span;
      register_param(in, self, "weight_ih", new_param(in, {g, b["input_size"]}, span, "", "weight_ih"), site);
      register_param(in, self, "weight_hh", new_param(in, {g, b["hidden_size"]}, span, "", "weight_hh"), site);
      if (is_true(in, b["bias"])) {
        register_param(in, self, "bias_ih", new_param(in, {g}, span, "", "bias_ih"), site);
        register_param(in, self, "bias_hh", new_param(in, {g}, span, "", "bias_hh"), site);
      } else {
        register_none_param(self, "bias_ih");
        register_none_param(self, "bias_hh");
      }
      return Value::none();
    };
  };
  layer("LSTMCell", cell("LSTMCell", 4));
  layer("GRUCell", cell("GRUCell", 3));
  layer("RNNCell", cell("RNNCell", 1));

  // Transformer layers (torch 1.13 registration order).
  auto sub = [](Interpreter& in, const Value& self, const std::string& name, const std::string& cls, Args args, const ir::Span& site) {
    Value m = in.call(*in.builtin("torch.nn." + cls), std::move(args), instance(self)->module->span);
    if (!in.exception_pending()) in.module_set(*instance(self), name, m, site);
  };
  auto encoder_layer = [=](bool decoder) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      std::string cls = decoder ? "TransformerDecoderLayer" : "TransformerEncoderLayer";
      if (!bind_args(in, cls, {{"d_model", std::nullopt}, {"nhead", std::nullopt}, {"dim_feedforward", Value::integer(2048)}, {"dropout", Value::floating(0.1)},
                          {"activation", Value::str("relu")}, {"layer_norm_eps", Value::floating(1e-5)}, {"batch_first", F}, {"norm_first", F},
                          {"bias", T}, {"device", none}, {"dtype", none}}, a, b, site))
        return Value::none();
      Value d = b["d_model"], ff = b["dim_feedforward"], eps = b["layer_norm_eps"];
      sub(in, self, "self_attn", "MultiheadAttention", Args{{d, b["nhead"]}, {{"dropout", b["dropout"]}, {"batch_first", b["batch_first"]}}}, site);
      if (decoder) sub(in, self, "multihead_attn", "MultiheadAttention", Args{{d, b["nhead"]}, {{"dropout", b["dropout"]}, {"batch_first", b["batch_first"]}}}, site);
      sub(in, self, "linear1", "Linear", Args{{d, ff}, {}}, site);
      sub(in, self, "dropout", "Dropout", Args{{b["dropout"]}, {}}, site);
      sub(in, self, "linear2", "Linear", Args{{ff, d}, {}}, site);
      instance(self)->set_attribute("norm_first", b["norm_first"]);
      sub(in, self, "norm1", "LayerNorm", Args{{d}, {{"eps", eps}}}, site);
      sub(in, self, "norm2", "LayerNorm", Args{{d}, {{"eps", eps}}}, site);
      if (decoder) sub(in, self, "norm3", "LayerNorm", Args{{d}, {{"eps", eps}}}, site);
      sub(in, self, "dropout1", "Dropout", Args{{b["dropout"]}, {}}, site);
      sub(in, self, "dropout2", "Dropout", Args{{b["dropout"]}, {}}, site);
      if (decoder) sub(in, self, "dropout3", "Dropout", Args{{b["dropout"]}, {}}, site);
      if (auto* act = b["activation"].as<InstanceObj>(); act && act->module) in.module_set(*instance(self), "activation", b["activation"], site);
      else instance(self)->set_attribute("activation", b["activation"]);
      return Value::none();
    };
  };
  layer("TransformerEncoderLayer", encoder_layer(false));
  layer("TransformerDecoderLayer", encoder_layer(true));
  auto stack = [=](const std::string& cls, const std::string& layer_arg) {
    return [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
      Value self = self_of(a);
      Bound b;
      if (!bind_args(in, cls, {{layer_arg.c_str(), std::nullopt}, {"num_layers", std::nullopt}, {"norm", none}, {"enable_nested_tensor", T}, {"mask_check", T}}, a, b, site))
        return Value::none();
      auto* proto = b[layer_arg].as<InstanceObj>();
      if (!proto || !b["num_layers"].is_int()) {
        in.note(cls + " layers could not be resolved", "the layer or num_layers is not known", site);
        return Value::none();
      }
      std::vector<Value> copies;
      for (int64_t i = 0; i < b["num_layers"].as_int(); ++i)
        copies.push_back(in.call(*in.builtin("copy.deepcopy"), Args{{b[layer_arg]}, {}}, site));
      Value layers = in.call(*in.builtin("torch.nn.ModuleList"), Args{{make_list(copies)}, {}}, instance(self)->module->span);
      in.module_set(*instance(self), "layers", layers, site);
      instance(self)->set_attribute("num_layers", b["num_layers"]);
      in.module_set(*instance(self), "norm", b["norm"], site);
      return Value::none();
    };
  };
  layer("TransformerEncoder", stack("TransformerEncoder", "encoder_layer"));
  layer("TransformerDecoder", stack("TransformerDecoder", "decoder_layer"));
  layer("Transformer", [=](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    Value self = self_of(a);
    Bound b;
    if (!bind_args(in, "Transformer", {{"d_model", Value::integer(512)}, {"nhead", Value::integer(8)}, {"num_encoder_layers", Value::integer(6)},
                                  {"num_decoder_layers", Value::integer(6)}, {"dim_feedforward", Value::integer(2048)}, {"dropout", Value::floating(0.1)},
                                  {"activation", Value::str("relu")}, {"custom_encoder", none}, {"custom_decoder", none},
                                  {"layer_norm_eps", Value::floating(1e-5)}, {"batch_first", F}, {"norm_first", F}, {"bias", T}, {"device", none}, {"dtype", none}},
              a, b, site))
      return Value::none();
    auto span = instance(self)->module->span;
    Args layer_args{{b["d_model"], b["nhead"], b["dim_feedforward"], b["dropout"], b["activation"], b["layer_norm_eps"], b["batch_first"], b["norm_first"]}, {}};
    auto build = [&](const std::string& name, const std::string& layer_cls, const std::string& stack_cls, const char* n) {
      Value l = in.call(*in.builtin("torch.nn." + layer_cls), layer_args, span);
      Value norm = in.call(*in.builtin("torch.nn.LayerNorm"), Args{{b["d_model"]}, {{"eps", b["layer_norm_eps"]}}}, span);
      Value s = in.call(*in.builtin("torch.nn." + stack_cls), Args{{l, b[n], norm}, {}}, span);
      in.module_set(*instance(self), name, s, site);
    };
    if (!b["custom_encoder"].is_none()) in.module_set(*instance(self), "encoder", b["custom_encoder"], site);
    else build("encoder", "TransformerEncoderLayer", "TransformerEncoder", "num_encoder_layers");
    if (!b["custom_decoder"].is_none()) in.module_set(*instance(self), "decoder", b["custom_decoder"], site);
    else build("decoder", "TransformerDecoderLayer", "TransformerDecoder", "num_decoder_layers");
    return Value::none();
  });

  // --- layers without parameters: keep their arguments for the printed tree ---
  auto plain = [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    Value self = self_of(a);
    if (auto* m = instance(self); m && m->module) {
      m->module->extra_repr = args_repr(in, a);
      for (auto& [k, v] : a.keywords) m->set_attribute(k, v);
    }
    return Value::none();
  };
  for (const char* n : {"Identity", "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Hardtanh", "Hardswish",
                        "Hardsigmoid", "LeakyReLU", "ELU", "SELU", "CELU", "GLU", "Softplus", "Softsign", "Tanhshrink",
                        "Threshold", "LogSigmoid", "Softmax", "Softmax2d", "LogSoftmax", "Softmin", "Dropout", "Dropout1d",
                        "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Flatten", "Unflatten",
                        "LPPool1d", "LPPool2d", "Upsample",
                        "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
                        "ChannelShuffle", "CrossEntropyLoss", "MSELoss", "L1Loss", "NLLLoss", "BCELoss",
                        "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineSimilarity",
                        "PairwiseDistance", "Fold", "Unfold", "LocalResponseNorm", "Hardshrink",
                        "Softshrink", "RReLU", "CTCLoss", "TripletMarginLoss", "MarginRankingLoss"})
    layer(n, plain);
  // Pools keep their positional arguments by name too: the tracer sizes their outputs from them.
  auto pool = [plain](std::vector<std::string> names) -> NativeFn {
    return [plain, names](Interpreter& in, const Value& callee, Args& a, const ir::Span& site) {
      Value self = a.positional.empty() ? Value() : a.positional.front();
      Value r = plain(in, callee, a, site);  // takes self off the arguments
      if (auto* m = instance(self); m && m->module)
        for (size_t i = 0; i < a.positional.size() && i < names.size(); ++i) m->set_attribute(names[i], a.positional[i]);
      return r;
    };
  };
  // Padding layers keep their padding (an int, or F.pad's (left, right, top, bottom, ...)): the
  // tracer pads as F.pad does.
  for (const char* n : {"ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
                        "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
                        "CircularPad1d", "CircularPad2d", "CircularPad3d"})
    layer(n, [plain](Interpreter& in, const Value& callee, Args& a, const ir::Span& site) {
      Value self = a.positional.empty() ? Value() : a.positional.front();
      const Value* padding = a.positional.size() > 1 ? &a.positional[1] : a.keyword("padding");
      const Value kept = padding ? *padding : Value::none();
      Value r = plain(in, callee, a, site);
      if (auto* m = instance(self); m && m->module) m->set_attribute("padding", kept);
      return r;
    });
  for (const char* n : {"AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
                        "AdaptiveMaxPool3d"})
    layer(n, pool({"output_size"}));
  for (const char* n : {"MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"})
    layer(n, pool({"kernel_size", "stride", "padding"}));
  // einops (functions and layers) is a library model, library/einops: read as Python, so that its
  // shapes are computed while the model is built as well as while forward() is traced.
  (void)mha;

  // Aliases that model code imports from torch.nn.modules.* paths.
  for (const char* n : {"Linear", "Embedding", "LayerNorm", "Conv1d", "Conv2d", "Dropout", "ModuleList", "Sequential", "ModuleDict"}) {
    std::string name = n;
    in.define("torch.nn.modules." + name, *in.builtin("torch.nn." + name));
  }
}

}  // namespace shardlens::python::native
