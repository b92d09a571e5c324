from .norms import ScaledNorm  # noqa: F401
