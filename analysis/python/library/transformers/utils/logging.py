# shardlens' model of transformers.utils.logging (not the library itself): loggers whose messages go nowhere.
from _shardlens_common.logging import NullLogger


class _Logger(NullLogger):
    info_once = warning_once = warning_advice = critical = exception = NullLogger._discard

    def isEnabledFor(self, level):
        return False


def get_logger(name=None):
    return _Logger(name)


def set_verbosity(verbosity):
    pass


def set_verbosity_error():
    pass


def set_verbosity_warning():
    pass


def set_verbosity_info():
    pass


def get_verbosity():
    return 30


DEBUG = 10
INFO = 20
WARNING = 30
ERROR = 40
