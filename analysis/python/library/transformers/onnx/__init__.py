# shardlens' model of transformers.onnx (not the library itself): the ONNX export configs model files subclass.
from .config import OnnxConfig, OnnxConfigWithPast, OnnxSeq2SeqConfigWithPast, PatchingSpec
