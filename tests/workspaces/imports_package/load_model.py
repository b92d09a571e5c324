# expected-total: 433536
# A loader the way users write them: the model lives in a package beside the script.
# Exercises absolute and relative imports, __init__ re-exports, a namespace package (no
# __init__.py), sys.path.insert of a path built from __file__, an import cycle, a missing optional
# dependency behind try/except ImportError, and a config read through a classmethod.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))

from tinylm import TinyLM, TinyConfig

model = TinyLM(TinyConfig.small(n_layer=3))
