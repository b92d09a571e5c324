# Library models of CUDA-only packages (xformers) are absent where the importing code has a fallback (the import
# sits in `try: ... except ImportError:`), so the analysis sees the model a machine without them builds, and
# present where the code cannot run without them.
try:
    from _shardlens import importer_has_fallback
except ImportError:  # CPython, checking the library models: such packages are not installed there

    def importer_has_fallback():
        return True


def absent_where_optional(package):
    if importer_has_fallback():
        raise ModuleNotFoundError(f"{package}'s CUDA kernels are not installed here: the code's fallback is analysed", name=package)
