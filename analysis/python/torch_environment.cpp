// torch's dtypes, and what a script asks about the machine, the process group and torch's version:
// answered as for one process that plans the logical, unsharded model.
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
  in.define_native("torch.device", [](Interpreter& in, const Value&, Args& a, const ir::Span& site) {
    return a.positional.empty() ? in.unknown("device", site) : a.positional[0];
  });
  in.define_native("torch.finfo", [](Interpreter& in, const Value&, Args&, const ir::Span& site) {
    return in.unknown("torch.finfo values are not modelled", site);
  });
}

}  // namespace shardlens::python::native
