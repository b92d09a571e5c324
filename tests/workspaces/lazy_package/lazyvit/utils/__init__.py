from .import_utils import is_torch_available, is_torch_version, is_peft_available
