# shardlens' model of diffusers.utils.logging (not the library itself): loggers whose messages go nowhere.
from _shardlens_common.logging import NullLogger as _Logger


def get_logger(name=None):
    return _Logger(name)


def set_verbosity_error():
    pass
