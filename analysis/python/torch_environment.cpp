// torch's dtypes, and what a script asks about the machine, the process group and torch's version:
// answered as for one process that plans the logical, unsharded model.
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "python/native_support.h"

namespace shardlens::python::native {

void install_torch_environment(Interpreter& in) {
  for (auto& [alias, name] : std::vector<std::pair<std::string, std::string>>{
           {"float32", "float32"}, {"float", "float32"}, {"float16", "float16"}, {"half", "float16"},
           {"bfloat16", "bfloat16"}, {"float64", "float64"}, {"double", "float64"}, {"int64", "int64"},
           {"long", "int64"}, {"int32", "int32"}, {"int", "int32"}, {"int16", "int16"}, {"short", "int16"},
           {"int8", "int8"}, {"uint8", "uint8"}, {"bool", "bool"}, {"complex64", "complex64"},
           {"cfloat", "complex64"}, {"complex128", "complex128"}, {"float8_e4m3fn", "float8_e4m3fn"}}) {
    auto d = std::make_shared<DtypeObj>();
    d->name = name;
    in.define("torch." + alias, Value::object(d));
  }
  in.define_native("torch.get_default_dtype", [](Interpreter& in, const Value&, Args&, const ir::Span&) {
    return *in.builtin("torch.float32");
  });
  for (const char* n : {"torch.set_default_dtype", "torch.manual_seed", "torch.set_grad_enabled",
                        "torch.set_float32_matmul_precision", "torch.set_num_threads", "torch.use_deterministic_algorithms"})
    in.define_native(n, [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::none(); });
  // The planner plans inference: the forward it reads runs without autograd (torch.no_grad /
  // inference_mode), so `if torch.is_grad_enabled() and self.gradient_checkpointing:` (diffusers)
  // takes the plain path.
  in.define_native("torch.is_grad_enabled", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::boolean(false); });
  in.define_native("torch.is_inference_mode_enabled", [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::boolean(true); });
  // ... and eagerly: not under torch.jit tracing or scripting, dynamo, ONNX export or FX symbolic
  // tracing (Swin's `torch.min(torch.tensor(res)) if torch.jit.is_tracing() else min(res)`).
  for (const char* n : {"torch.jit.is_tracing", "torch.jit.is_scripting", "torch._dynamo.is_compiling", "torch.compiler.is_compiling",
                        "torch.compiler.is_dynamo_compiling", "torch.onnx.is_in_onnx_export", "torch.fx._symbolic_trace.is_fx_tracing"})
    in.define_native(n, [](Interpreter&, const Value&, Args&, const ir::Span&) { return Value::boolean(false); });
  for (const char* n : {"torch.cuda.is_available", "torch.cuda.device_count", "torch.backends.mps.is_available",
                        "torch.cuda.is_bf16_supported"}) {
    std::string name = n;
    in.define_native(name, [name](Interpreter& in, const Value&, Args&, const ir::Span& site) {
      return in.unknown(name + "() depends on the machine the script runs on", site);
    });
  }
  // The model is read as one process that never joined a process group sees it: the logical,
  // unsharded model, which is what the planner shards. `world_size = dist.get_world_size() if
  // dist.is_initialized() else 1` (DeepSeek-V3, many inference scripts) gives full shapes.
  in.define_native("torch.distributed.is_available", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::boolean(true);
  });
  in.define_native("torch.distributed.is_initialized", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::boolean(false);
  });
  in.define_native("torch.distributed.get_world_size", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::integer(1);
  });
  in.define_native("torch.distributed.get_rank", [](Interpreter&, const Value&, Args&, const ir::Span&) {
    return Value::integer(0);
  });
  // The torch API shardlens models (scaled_dot_product_attention, ...) is that of torch 2.x; code
  // that compares versions (`version.parse(torch.__version__) >= version.parse("2.0")`) takes that path.
  in.define("torch.__version__", Value::str("2.4.0"));
  in.define_native("torch.Size", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    if (a.positional.empty()) return make_tuple({});
    Value why;
    auto items = in.iterate(a.positional[0], site, &why);
    return items ? make_tuple(std::move(*items)) : why;
  });
  // torch.device("cuda:1") / torch.device("cuda", 1) / torch.device(device): type and index, compared by value.
  // Tensors are on the CPU, as when the user's script builds the model (`x.device.type == "cpu"`).
  auto device = in.make_builtin_class("torch.device", {}, [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    auto* self = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    if (!self) return Value::none();
    const Value* spec = a.positional.size() > 1 ? &a.positional[1] : a.keyword("type");
    Value index = a.positional.size() > 2 ? a.positional[2] : a.keyword("index") ? *a.keyword("index") : Value::none();
    if (!spec) return in.raise("TypeError", "device() missing its type", site);
    if (auto* other = spec->as<InstanceObj>(); other && other->cls == self->cls) {
      self->set_attribute("type", *other->find_attribute("type"));
      self->set_attribute("index", *other->find_attribute("index"));
      return Value::none();
    }
    if (spec->is_int()) {
      self->set_attribute("type", Value::str("cuda"));
      self->set_attribute("index", *spec);
      return Value::none();
    }
    if (!spec->is_str()) return in.raise("TypeError", "device() takes a string, an int or a device", site);
    const std::string& text = spec->s;
    const size_t colon = text.find(':');
    self->set_attribute("type", Value::str(text.substr(0, colon)));
    if (colon != std::string::npos) {
      const std::string digits = text.substr(colon + 1);
      if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return in.raise("RuntimeError", "Invalid device string: '" + text + "'", site);
      index = Value::integer(std::stoll(digits));
    }
    self->set_attribute("index", index);
    return Value::none();
  });
  device->set("__str__", in.native("torch.device.__str__", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    auto* self = a.positional.empty() ? nullptr : a.positional[0].as<InstanceObj>();
    if (!self) return Value::str("");
    const Value* type = self->find_attribute("type");
    const Value* index = self->find_attribute("index");
    std::string out = type && type->is_str() ? type->s : "";
    if (index && index->is_int()) out += ":" + std::to_string(index->as_int());
    return Value::str(out);
  }));
  device->set("__repr__", in.native("torch.device.__repr__", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    return Value::str("device(type='" + in.to_str(a.positional.empty() ? Value::none() : a.positional[0]) + "')");
  }));
  device->set("__eq__", in.native("torch.device.__eq__", [](Interpreter& in, const Value&, Args& a, const ir::Span&) {
    if (a.positional.size() != 2) return Value::boolean(false);
    auto* x = a.positional[0].as<InstanceObj>();
    auto* y = a.positional[1].as<InstanceObj>();
    if (!x || !y || x->cls != y->cls) return Value::boolean(false);
    return Value::boolean(in.to_str(a.positional[0]) == in.to_str(a.positional[1]));
  }));
  in.define_native("torch.finfo", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("torch.finfo values are not modelled", site);
  });
}

}  // namespace shardlens::python::native
