# A loader importing from a package that loads lazily (its sys.modules entry is a ModuleType subclass
# whose __getattr__ imports submodules with importlib.import_module), whose configs are recorded by a
# decorator reading inspect.signature, and whose choices depend on importlib.util.find_spec,
# importlib.metadata.version and an operator table; forward() reads the config back.
import lazyvit
from lazyvit import TinyViT
from lazyvit.config import FrozenDict

model = TinyViT(use_adapter=True)
assert isinstance(model.config, FrozenDict) and model.config.depth == 2 and model.config["use_adapter"] is True
assert lazyvit.model.TinyViT is TinyViT
# expected-total: 110448
