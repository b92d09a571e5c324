// nn.Parameter, nn.init (initialisers change values, never shapes) and the torch.nn.utils
// reparametrisations that rename parameters.
#include <algorithm>
#include <functional>

#include "python/interpreter.h"
#include "python/native_support.h"

namespace shardlens::python::native {

void install_nn_parameters(Interpreter& in) {
  auto module = in.module_base();
  auto tensor_class = std::static_pointer_cast<ClassObj>(in.builtin("torch.Tensor")->obj);
  auto parameter_class = in.make_builtin_class("torch.nn.Parameter", {tensor_class}, nullptr);
  parameter_class->native_new = [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    const Value* data = argument(a, 0, "data");
    auto p = in.new_tensor(std::vector<int64_t>{0}, site, true);
    if (data && !data->is_none()) {
      if (auto* t = data->as<TensorObj>()) {
        p->shape = t->shape;
        p->dtype = t->dtype;
        p->why = t->why;
      } else {
        p->shape.reset();
        p->why = data->is_unknown() ? data->unknown
                                    : std::make_shared<UnknownInfo>(UnknownInfo{"nn.Parameter of a " + type_name(*data), site, false});
      }
    }
    if (const Value* rg = argument(a, 1, "requires_grad")) p->requires_grad = in.truth(*rg).value_or(true);
    if (!p->shape) in.note("shape of a parameter could not be resolved", p->why ? p->why->reason : "unknown data", site);
    return Value::object(p);
  };
  in.define("torch.nn.parameter.Parameter", Value::object(parameter_class));
  in.define("torch.nn.parameter", in.namespace_value("torch.nn.parameter"));


  // --- nn.init: initialisers change values, never shapes ---
  for (const char* n : {"uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_", "xavier_uniform_",
                        "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "orthogonal_",
                        "sparse_", "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
                        "kaiming_uniform", "kaiming_normal", "orthogonal"})
    in.define_native(std::string("torch.nn.init.") + n, [](Interpreter&, const Value&, Args& a, const ir::Span&) {
      return a.positional.empty() ? Value::none() : a.positional[0];
    });
  in.define_native("torch.nn.init.calculate_gain", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("init gain", site);
  });
  in.define_native("torch.nn.init._calculate_fan_in_and_fan_out", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
    auto* t = a.positional.empty() ? nullptr : a.positional[0].as<TensorObj>();
    if (!t || !t->shape || t->shape->size() < 2) return in.unknown("fan in/out", site);
    int64_t field = 1;
    for (size_t i = 2; i < t->shape->size(); ++i) field *= (*t->shape)[i];
    return make_tuple({Value::integer((*t->shape)[1] * field), Value::integer((*t->shape)[0] * field)});
  });

  // Optimisers and schedulers do not change a model's structure.
  for (const char* n : {"torch.optim.Adam", "torch.optim.AdamW", "torch.optim.SGD", "torch.optim.RMSprop",
                        "torch.optim.Adagrad", "torch.optim.Adafactor", "torch.optim.lr_scheduler.LambdaLR",
                        "torch.optim.lr_scheduler.CosineAnnealingLR", "torch.optim.lr_scheduler.StepLR",
                        "torch.optim.lr_scheduler.OneCycleLR", "torch.cuda.amp.GradScaler"}) {
    std::string name = n;
    in.define_native(name, [name](Interpreter& in, const Value&, Args&, const ir::Span& site) {
      return in.unknown(name + " (optimisation state is not part of the model)", site);
    });
  }

  // --- torch.nn.utils reparametrisations that rename parameters ---
  // weight_norm(module, name, ...) / spectral_norm: module.<name> is unregistered and `rename`
  // registers what replaces it; no such parameter raises.
  using Rename = std::function<void(Interpreter&, Bound&, InstanceObj& m, const std::string& name,
                                    const std::shared_ptr<TensorObj>& weight)>;
  auto reparametrisation = [](std::string fname, std::vector<P> params, Rename rename) -> NativeFn {
    return [fname, params, rename](Interpreter& in, const Value&, Args& a, const ir::Span& site) -> Value {
      Bound b;
      if (!bind_args(in, fname, params, a, b, site)) return Value::none();
      auto* m = instance(b["module"]);
      if (!m || !m->module || !b["name"].is_str()) return b["module"];
      const std::string name = b["name"].s;
      auto* slot = ModuleData::find(m->module->parameters, name);
      if (!slot || !*slot) {
        in.raise("AttributeError", "module has no parameter '" + name + "'", site);
        return Value::none();
      }
      auto weight = *slot;
      auto& registered = m->module->parameters;
      registered.erase(std::remove_if(registered.begin(), registered.end(), [&](auto& kv) { return kv.first == name; }),
                       registered.end());
      rename(in, b, *m, name, weight);
      return b["module"];
    };
  };
  // Weight normalisation's magnitude g (the weight's shape with every dim but `dim` of size 1; a
  // scalar for dim=None) and direction v (the weight's shape).
  auto weight_norm_pair = [](Interpreter& in, Bound& b, const std::shared_ptr<TensorObj>& weight) {
    std::optional<std::vector<int64_t>> g_shape;
    if (weight->shape) {
      g_shape = std::vector<int64_t>(weight->shape->size(), 1);
      if (b["dim"].is_none()) g_shape = std::vector<int64_t>{};
      else if (b["dim"].is_int()) {
        int64_t d = norm_dim(b["dim"].as_int(), weight->shape->size());
        if (d >= 0 && d < static_cast<int64_t>(weight->shape->size())) (*g_shape)[d] = (*weight->shape)[d];
      }
    }
    auto g = in.new_tensor(g_shape, weight->span, true);
    auto v = in.new_tensor(weight->shape, weight->span, true);
    g->dtype = v->dtype = weight->dtype;
    return std::pair{g, v};
  };
  const std::vector<P> weight_norm_params{{"module", std::nullopt}, {"name", Value::str("weight")}, {"dim", Value::integer(0)}};
  in.define_native("torch.nn.utils.weight_norm", reparametrisation(
      "weight_norm", weight_norm_params,
      [weight_norm_pair](Interpreter& in, Bound& b, InstanceObj& m, const std::string& name, const std::shared_ptr<TensorObj>& weight) {
        auto [g, v] = weight_norm_pair(in, b, weight);
        m.module->parameters.emplace_back(name + "_g", g);
        m.module->parameters.emplace_back(name + "_v", v);
        m.set_attribute(name, Value::object(v));  // forward reads module.<name>: g·v/‖v‖, v's shape
      }));
  // torch.nn.utils.parametrizations.weight_norm (PyTorch 2.1+, what current model code calls when it
  // exists), as torch's register_parametrization lays it out: the module's class becomes
  // Parametrized<Class>, and module.parametrizations.<name> (a ParametrizationList whose child 0 is
  // the _WeightNorm) holds original0 (g) and original1 (v).
  auto weight_norm_module = in.make_builtin_class("torch.nn.utils.parametrizations._WeightNorm", {module}, nullptr);
  in.define_native("torch.nn.utils.parametrizations.weight_norm", reparametrisation(
      "weight_norm", weight_norm_params,
      [weight_norm_pair, weight_norm_module](Interpreter& in, Bound& b, InstanceObj& m, const std::string& name,
                                             const std::shared_ptr<TensorObj>& weight) {
        auto [g, v] = weight_norm_pair(in, b, weight);
        const ir::Span site = m.module->span;
        std::shared_ptr<InstanceObj> holder;
        if (auto* existing = ModuleData::find(m.module->modules, "parametrizations"); existing && *existing) {
          holder = *existing;
        } else {
          Value dict = in.call(*in.builtin("torch.nn.ModuleDict"), Args{}, site);
          in.module_set(m, "parametrizations", dict, site);
          if (dict.as<InstanceObj>()) holder = std::static_pointer_cast<InstanceObj>(dict.obj);
          if (m.cls && m.cls->name.rfind("Parametrized", 0) != 0) {
            // Not built in itself: the forward tracer runs the layer it derives from.
            m.cls = in.make_builtin_class("torch.nn.utils.parametrize.Parametrized" + m.cls->name, {m.cls}, nullptr);
            m.cls->is_builtin = false;
          }
        }
        Value list = in.call(*in.builtin("torch.nn.utils.parametrize.ParametrizationList"), Args{}, site);
        Value norm = in.call(Value::object(weight_norm_module), Args{}, site);
        auto* plist = list.as<InstanceObj>();
        if (!holder || !holder->module || !plist || !plist->module || !norm.as<InstanceObj>()) return;
        plist->module->modules.emplace_back("0", std::static_pointer_cast<InstanceObj>(norm.obj));
        plist->module->parameters.emplace_back("original0", g);
        plist->module->parameters.emplace_back("original1", v);
        holder->module->modules.emplace_back(name, std::static_pointer_cast<InstanceObj>(list.obj));
        m.set_attribute(name, Value::object(v));  // forward reads module.<name>: g·v/‖v‖, v's shape
      }));
  in.define_native("torch.nn.utils.spectral_norm", reparametrisation(
      "spectral_norm", {{"module", std::nullopt}, {"name", Value::str("weight")}, {"n_power_iterations", Value::integer(1)},
                        {"eps", Value::floating(1e-12)}, {"dim", Value::none()}},
      [](Interpreter& in, Bound& b, InstanceObj& m, const std::string& name, const std::shared_ptr<TensorObj>& weight) {
        auto& params = m.module->parameters;
        params.emplace_back(name + "_orig", weight);
        m.set_attribute(name, Value::object(weight));
        int64_t dim = b["dim"].is_int() ? b["dim"].as_int()
                      : (m.cls->name.rfind("ConvTranspose", 0) == 0 ? 1 : 0);
        std::optional<std::vector<int64_t>> u_shape, v_shape;
        if (weight->shape && !weight->shape->empty()) {
          int64_t h = (*weight->shape)[norm_dim(dim, weight->shape->size())];
          u_shape = std::vector<int64_t>{h};
          v_shape = std::vector<int64_t>{h ? weight->numel() / h : 0};
        }
        register_buffer(b["module"], name + "_u", in.new_tensor(u_shape, weight->span), true);
        register_buffer(b["module"], name + "_v", in.new_tensor(v_shape, weight->span), true);
      }));
}

}  // namespace shardlens::python::native
