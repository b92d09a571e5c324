# shardlens' model of triton.language (not the library itself): the names kernel signatures and bodies refer to.
# Kernel bodies never run here, so the device functions only need to exist.


class constexpr:
    def __init__(self, value=None):
        self.value = value


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "triton.language." + self.name


class tensor:
    pass


class pointer_type:
    def __init__(self, element_ty=None):
        self.element_ty = element_ty


float8e4nv = dtype("fp8e4nv")
float8e5 = dtype("fp8e5")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")
int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint32 = dtype("uint32")


def _device_only(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"triton.language.{name} runs only inside a GPU kernel")

    return fn


program_id = _device_only("program_id")
num_programs = _device_only("num_programs")
arange = _device_only("arange")
load = _device_only("load")
store = _device_only("store")
zeros = _device_only("zeros")
full = _device_only("full")
dot = _device_only("dot")
sum = _device_only("sum")
max = _device_only("max")
min = _device_only("min")
maximum = _device_only("maximum")
minimum = _device_only("minimum")
abs = _device_only("abs")
exp = _device_only("exp")
log = _device_only("log")
sqrt = _device_only("sqrt")
rsqrt = _device_only("rsqrt")
sigmoid = _device_only("sigmoid")
where = _device_only("where")
cdiv = _device_only("cdiv")
atomic_add = _device_only("atomic_add")
static_range = _device_only("static_range")
multiple_of = _device_only("multiple_of")
max_contiguous = _device_only("max_contiguous")
reshape = _device_only("reshape")
trans = _device_only("trans")
cumsum = _device_only("cumsum")


class _Math:
    pass


math = _Math()
for _name in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "pow", "tanh", "erf", "abs", "ceil", "floor"):
    setattr(math, _name, _device_only("math." + _name))
