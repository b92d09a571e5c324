# shardlens' model of diffusers.utils.logging (not the library itself): loggers whose messages go nowhere.


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

    warn = warning

    def setLevel(self, level):
        pass


def get_logger(name=None):
    return _Logger(name)


def set_verbosity_error():
    pass
