from .config import TinyConfig
from .model import TinyLM

__all__ = ["TinyConfig", "TinyLM"]
