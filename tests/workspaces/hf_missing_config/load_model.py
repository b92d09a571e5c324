# shardlens-test: known-gap the loader expects an OSError; shardlens reports it as unresolved and finds no model
# A user's loader for a checkpoint that is not in the local Hugging Face cache: the error names the file needed.
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("acme/not-downloaded", cache_dir="empty-cache")
# expected-error: config.json of 'acme/not-downloaded' is not in the local Hugging Face cache
