# shardlens' model of the `simple_parsing` package (not the library itself): only helpers.Serializable.
from .helpers import Serializable
