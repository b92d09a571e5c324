# shardlens' model of diffusers.utils.outputs (not the library itself): BaseOutput, the base of output dataclasses.
from _shardlens_common.outputs import FieldsByPosition


class BaseOutput(FieldsByPosition):
    """Fields by name, by key, or by position (None fields skipped)."""
