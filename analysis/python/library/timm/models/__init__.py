# shardlens' model of timm.models (not the library itself).
from pkgutil import extend_path; __path__ = extend_path(__path__, __name__)
__path__ = __path__[1:] + __path__[:1]  # real source files first, this folder last (shardlens resolves the same way)
