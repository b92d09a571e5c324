# shardlens' model of the `torchvision` package (not the library itself): the helpers its model files import; the
# model files themselves come from the search path.
from pkgutil import extend_path; __path__ = extend_path(__path__, __name__)
__path__ = __path__[1:] + __path__[:1]  # real source files first, this folder last (shardlens resolves the same way)

__version__ = "0.20.0"
