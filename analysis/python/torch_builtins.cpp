// torch as far as module construction needs it, installed by library area (native_support.h).
#include "python/native_support.h"

namespace shardlens::python {

void install_torch(Interpreter& in) {
  auto module = in.module_base();
  in.define("torch.nn.modules.module.Module", Value::object(module));
  for (auto* install : {native::install_torch_environment, native::install_tensor_functions,
                        native::install_tensor_methods, native::install_nn_parameters, native::install_nn_functional,
                        native::install_module_methods, native::install_nn_containers, native::install_nn_layers})
    install(in);
  in.define("torch.nn.Module", Value::object(module));
}

}  // namespace shardlens::python
