# shardlens' stand-in for torchtitan.config (not the package itself): the job config a model's args may read.
import torch

from .job_config import Compile, JobConfig

TORCH_DTYPE_MAP = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}
