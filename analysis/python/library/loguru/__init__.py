# shardlens' model of the `loguru` package (not the library itself): a logger whose messages go nowhere.


class Logger:
    def trace(self, *args, **kwargs):
        pass

    def debug(self, *args, **kwargs):
        pass

    def info(self, *args, **kwargs):
        pass

    def success(self, *args, **kwargs):
        pass

    def warning(self, *args, **kwargs):
        pass

    def error(self, *args, **kwargs):
        pass

    def critical(self, *args, **kwargs):
        pass

    def exception(self, *args, **kwargs):
        pass

    def add(self, *args, **kwargs):
        return 0

    def remove(self, handler_id=None):
        pass

    def bind(self, **kwargs):
        return self

    def opt(self, **kwargs):
        return self


logger = Logger()
