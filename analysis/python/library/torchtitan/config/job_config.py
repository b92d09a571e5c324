# shardlens' stand-in for torchtitan.config.job_config (not the package itself): the few sections a model reads.
from dataclasses import dataclass, field


@dataclass
class Compile:
    enable: bool = False
    components: list = field(default_factory=lambda: ["model", "loss"])
    backend: str = "inductor"


@dataclass
class Model:
    name: str = "llama3"
    flavor: str = "debugmodel"
    hf_assets_path: str = "./tests/assets/tokenizer"


@dataclass
class Training:
    seq_len: int = 2048
    local_batch_size: int = 8
    mixed_precision_param: str = "bfloat16"
    mixed_precision_reduce: str = "float32"


@dataclass
class Parallelism:
    data_parallel_replicate_degree: int = 1
    data_parallel_shard_degree: int = -1
    tensor_parallel_degree: int = 1
    context_parallel_degree: int = 1
    pipeline_parallel_degree: int = 1
    expert_parallel_degree: int = 1


@dataclass
class JobConfig:
    model: Model = field(default_factory=Model)
    training: Training = field(default_factory=Training)
    parallelism: Parallelism = field(default_factory=Parallelism)
    compile: Compile = field(default_factory=Compile)
