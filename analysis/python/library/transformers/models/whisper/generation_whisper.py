# shardlens' model of transformers.models.whisper.generation_whisper (not the library itself): no structure, no generation.
from ...generation import GenerationMixin


class WhisperGenerationMixin(GenerationMixin):
    pass
