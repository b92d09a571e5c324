# shardlens' model of transformers.models.auto (not the library itself): AutoConfig / AutoModel* dispatch by model_type.
from .configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES, AutoConfig
from .modeling_auto import (
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForImageClassification,
    AutoModelForMaskedLM,
    AutoModelForQuestionAnswering,
    AutoModelForSeq2SeqLM,
    AutoModelForSequenceClassification,
    AutoModelForSpeechSeq2Seq,
    AutoModelForTokenClassification,
)

__all__ = ["CONFIG_MAPPING", "CONFIG_MAPPING_NAMES", "AutoConfig", "AutoModel", "AutoModelForCausalLM", "AutoModelForImageClassification",
           "AutoModelForMaskedLM", "AutoModelForQuestionAnswering", "AutoModelForSeq2SeqLM",
           "AutoModelForSequenceClassification", "AutoModelForSpeechSeq2Seq", "AutoModelForTokenClassification"]
