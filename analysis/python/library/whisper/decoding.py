# shardlens' stand-in for whisper.decoding (openai-whisper; not the package itself): decoding adds no model
# structure and is not modelled.
from dataclasses import dataclass


@dataclass
class DecodingOptions:
    task: str = "transcribe"
    language: str = None
    temperature: float = 0.0
    sample_len: int = None
    best_of: int = None
    beam_size: int = None
    patience: float = None
    length_penalty: float = None
    prompt: object = None
    prefix: object = None
    suppress_tokens: object = "-1"
    suppress_blank: bool = True
    without_timestamps: bool = False
    max_initial_timestamp: float = 1.0
    fp16: bool = True


def decode(model, mel, options=None, **kwargs):
    raise NotImplementedError("shardlens does not run Whisper decoding")


def detect_language(model, mel, tokenizer=None):
    raise NotImplementedError("shardlens does not run Whisper decoding")
