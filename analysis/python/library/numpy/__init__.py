# shardlens' model of numpy, not numpy: the scalar helpers and constants model code uses while it
# builds a model (sinusoid tables, schedules, `x[:, np.newaxis]`). Arrays are not modelled.
import math

newaxis = None
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
float16 = "float16"
float32 = "float32"
float64 = "float64"
int32 = "int32"
int64 = "int64"
bool_ = "bool"


log, log2, exp, sqrt, ceil, floor = math.log, math.log2, math.exp, math.sqrt, math.ceil, math.floor


def prod(values):
    out = 1
    for v in values:
        out = out * v
    return out


def linspace(start, stop, num=50):
    if num == 1:
        return [float(start)]
    step = (stop - start) / (num - 1)
    return [start + i * step for i in range(num)]


class ndarray:
    pass


class dtype:
    def __init__(self, name="float32"):
        self.name = name
