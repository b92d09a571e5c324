# shardlens' model of transformers.models.auto.modeling_auto (not the library itself): the AutoModel* classes.
from .auto_factory import _BaseAutoModelClass


class AutoModel(_BaseAutoModelClass):
    _suffix = "Model"
    _overrides = {"gemma3": "Gemma3Model"}


class AutoModelForCausalLM(_BaseAutoModelClass):
    _suffix = "ForCausalLM"
    _overrides = {
        "gpt2": "GPT2LMHeadModel",
        "openai-gpt": "OpenAIGPTLMHeadModel",
        "bert": "BertLMHeadModel",
        "gemma3": "Gemma3ForConditionalGeneration",
    }


class AutoModelForMaskedLM(_BaseAutoModelClass):
    _suffix = "ForMaskedLM"


class AutoModelForSeq2SeqLM(_BaseAutoModelClass):
    _suffix = "ForConditionalGeneration"
    _overrides = {"marian": "MarianMTModel"}


class AutoModelForSpeechSeq2Seq(_BaseAutoModelClass):
    _suffix = "ForConditionalGeneration"


class AutoModelForSequenceClassification(_BaseAutoModelClass):
    _suffix = "ForSequenceClassification"


class AutoModelForTokenClassification(_BaseAutoModelClass):
    _suffix = "ForTokenClassification"


class AutoModelForQuestionAnswering(_BaseAutoModelClass):
    _suffix = "ForQuestionAnswering"


class AutoModelForImageClassification(_BaseAutoModelClass):
    _suffix = "ForImageClassification"
