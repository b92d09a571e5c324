# shardlens' model of text_generation_server.utils.layers (not the package itself): where older TGI versions kept the same layers.
from ..layers import *  # noqa: F401,F403
