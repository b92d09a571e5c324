# shardlens' model of transformers.modeling_outputs (not the library itself): the output dataclasses, fields in the real order.
from dataclasses import dataclass
from typing import Any, Optional

from .utils.generic import ModelOutput


@dataclass
class BaseModelOutput(ModelOutput):
    last_hidden_state: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class BaseModelOutputWithNoAttention(ModelOutput):
    last_hidden_state: Optional[Any] = None
    hidden_states: Optional[Any] = None


@dataclass
class BaseModelOutputWithPooling(ModelOutput):
    last_hidden_state: Optional[Any] = None
    pooler_output: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class BaseModelOutputWithPoolingAndNoAttention(ModelOutput):
    last_hidden_state: Optional[Any] = None
    pooler_output: Optional[Any] = None
    hidden_states: Optional[Any] = None


@dataclass
class BaseModelOutputWithPast(ModelOutput):
    last_hidden_state: Optional[Any] = None
    past_key_values: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class BaseModelOutputWithCrossAttentions(ModelOutput):
    last_hidden_state: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None


@dataclass
class BaseModelOutputWithPoolingAndCrossAttentions(ModelOutput):
    last_hidden_state: Optional[Any] = None
    pooler_output: Optional[Any] = None
    hidden_states: Optional[Any] = None
    past_key_values: Optional[Any] = None
    attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None


@dataclass
class BaseModelOutputWithPastAndCrossAttentions(ModelOutput):
    last_hidden_state: Optional[Any] = None
    past_key_values: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None


@dataclass
class MoeModelOutputWithPast(ModelOutput):
    last_hidden_state: Optional[Any] = None
    past_key_values: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None
    router_logits: Optional[Any] = None


@dataclass
class Seq2SeqModelOutput(ModelOutput):
    last_hidden_state: Optional[Any] = None
    past_key_values: Optional[Any] = None
    decoder_hidden_states: Optional[Any] = None
    decoder_attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None
    encoder_last_hidden_state: Optional[Any] = None
    encoder_hidden_states: Optional[Any] = None
    encoder_attentions: Optional[Any] = None


@dataclass
class CausalLMOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class CausalLMOutputWithPast(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    past_key_values: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class CausalLMOutputWithCrossAttentions(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    past_key_values: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None


@dataclass
class MoeCausalLMOutputWithPast(ModelOutput):
    loss: Optional[Any] = None
    aux_loss: Optional[Any] = None
    logits: Optional[Any] = None
    past_key_values: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None
    router_logits: Optional[Any] = None


@dataclass
class MaskedLMOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class Seq2SeqLMOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    past_key_values: Optional[Any] = None
    decoder_hidden_states: Optional[Any] = None
    decoder_attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None
    encoder_last_hidden_state: Optional[Any] = None
    encoder_hidden_states: Optional[Any] = None
    encoder_attentions: Optional[Any] = None


@dataclass
class NextSentencePredictorOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class SequenceClassifierOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class SequenceClassifierOutputWithPast(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    past_key_values: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class Seq2SeqSequenceClassifierOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    past_key_values: Optional[Any] = None
    decoder_hidden_states: Optional[Any] = None
    decoder_attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None
    encoder_last_hidden_state: Optional[Any] = None
    encoder_hidden_states: Optional[Any] = None
    encoder_attentions: Optional[Any] = None


@dataclass
class MultipleChoiceModelOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class TokenClassifierOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class QuestionAnsweringModelOutput(ModelOutput):
    loss: Optional[Any] = None
    start_logits: Optional[Any] = None
    end_logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class Seq2SeqQuestionAnsweringModelOutput(ModelOutput):
    loss: Optional[Any] = None
    start_logits: Optional[Any] = None
    end_logits: Optional[Any] = None
    past_key_values: Optional[Any] = None
    decoder_hidden_states: Optional[Any] = None
    decoder_attentions: Optional[Any] = None
    cross_attentions: Optional[Any] = None
    encoder_last_hidden_state: Optional[Any] = None
    encoder_hidden_states: Optional[Any] = None
    encoder_attentions: Optional[Any] = None


@dataclass
class ImageClassifierOutput(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class ImageClassifierOutputWithNoAttention(ModelOutput):
    loss: Optional[Any] = None
    logits: Optional[Any] = None
    hidden_states: Optional[Any] = None
