# shardlens' model of transformers.utils.logging (not the library itself): loggers whose messages go nowhere.


class _Logger:
    def __init__(self, name=None):
        self.name = name

    def debug(self, *args, **kwargs):
        pass

    def info(self, *args, **kwargs):
        pass

    def warning(self, *args, **kwargs):
        pass

    def error(self, *args, **kwargs):
        pass

    def info_once(self, *args, **kwargs):
        pass

    def warning_once(self, *args, **kwargs):
        pass

    def warning_advice(self, *args, **kwargs):
        pass

    warn = warning
    critical = error
    exception = error

    def setLevel(self, level):
        pass

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
