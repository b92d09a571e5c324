# shardlens' model of transformers.modeling_outputs (not the library itself): the output dataclasses, fields in the real
# order, every field defaulting to None.
from _shardlens_common.outputs import output_dataclass

from .utils.generic import ModelOutput

BaseModelOutput = output_dataclass("BaseModelOutput", ModelOutput, "last_hidden_state hidden_states attentions")
BaseModelOutputWithNoAttention = output_dataclass("BaseModelOutputWithNoAttention", ModelOutput, "last_hidden_state hidden_states")
BaseModelOutputWithPooling = output_dataclass("BaseModelOutputWithPooling", ModelOutput, "last_hidden_state pooler_output hidden_states attentions")
BaseModelOutputWithPoolingAndNoAttention = output_dataclass("BaseModelOutputWithPoolingAndNoAttention", ModelOutput, "last_hidden_state pooler_output hidden_states")
BaseModelOutputWithPast = output_dataclass("BaseModelOutputWithPast", ModelOutput, "last_hidden_state past_key_values hidden_states attentions")
BaseModelOutputWithCrossAttentions = output_dataclass("BaseModelOutputWithCrossAttentions", ModelOutput, "last_hidden_state hidden_states attentions cross_attentions")
BaseModelOutputWithPoolingAndCrossAttentions = output_dataclass("BaseModelOutputWithPoolingAndCrossAttentions", ModelOutput, "last_hidden_state pooler_output hidden_states past_key_values attentions cross_attentions")
BaseModelOutputWithPastAndCrossAttentions = output_dataclass("BaseModelOutputWithPastAndCrossAttentions", ModelOutput, "last_hidden_state past_key_values hidden_states attentions cross_attentions")
MoeModelOutputWithPast = output_dataclass("MoeModelOutputWithPast", ModelOutput, "last_hidden_state past_key_values hidden_states attentions router_logits")
Seq2SeqModelOutput = output_dataclass("Seq2SeqModelOutput", ModelOutput, "last_hidden_state past_key_values decoder_hidden_states decoder_attentions cross_attentions encoder_last_hidden_state encoder_hidden_states encoder_attentions")
CausalLMOutput = output_dataclass("CausalLMOutput", ModelOutput, "loss logits hidden_states attentions")
CausalLMOutputWithPast = output_dataclass("CausalLMOutputWithPast", ModelOutput, "loss logits past_key_values hidden_states attentions")
CausalLMOutputWithCrossAttentions = output_dataclass("CausalLMOutputWithCrossAttentions", ModelOutput, "loss logits past_key_values hidden_states attentions cross_attentions")
MoeCausalLMOutputWithPast = output_dataclass("MoeCausalLMOutputWithPast", ModelOutput, "loss aux_loss logits past_key_values hidden_states attentions router_logits")
MaskedLMOutput = output_dataclass("MaskedLMOutput", ModelOutput, "loss logits hidden_states attentions")
Seq2SeqLMOutput = output_dataclass("Seq2SeqLMOutput", ModelOutput, "loss logits past_key_values decoder_hidden_states decoder_attentions cross_attentions encoder_last_hidden_state encoder_hidden_states encoder_attentions")
NextSentencePredictorOutput = output_dataclass("NextSentencePredictorOutput", ModelOutput, "loss logits hidden_states attentions")
SequenceClassifierOutput = output_dataclass("SequenceClassifierOutput", ModelOutput, "loss logits hidden_states attentions")
SequenceClassifierOutputWithPast = output_dataclass("SequenceClassifierOutputWithPast", ModelOutput, "loss logits past_key_values hidden_states attentions")
Seq2SeqSequenceClassifierOutput = output_dataclass("Seq2SeqSequenceClassifierOutput", ModelOutput, "loss logits past_key_values decoder_hidden_states decoder_attentions cross_attentions encoder_last_hidden_state encoder_hidden_states encoder_attentions")
MultipleChoiceModelOutput = output_dataclass("MultipleChoiceModelOutput", ModelOutput, "loss logits hidden_states attentions")
TokenClassifierOutput = output_dataclass("TokenClassifierOutput", ModelOutput, "loss logits hidden_states attentions")
QuestionAnsweringModelOutput = output_dataclass("QuestionAnsweringModelOutput", ModelOutput, "loss start_logits end_logits hidden_states attentions")
Seq2SeqQuestionAnsweringModelOutput = output_dataclass("Seq2SeqQuestionAnsweringModelOutput", ModelOutput, "loss start_logits end_logits past_key_values decoder_hidden_states decoder_attentions cross_attentions encoder_last_hidden_state encoder_hidden_states encoder_attentions")
ImageClassifierOutput = output_dataclass("ImageClassifierOutput", ModelOutput, "loss logits hidden_states attentions")
ImageClassifierOutputWithNoAttention = output_dataclass("ImageClassifierOutputWithNoAttention", ModelOutput, "loss logits hidden_states")
