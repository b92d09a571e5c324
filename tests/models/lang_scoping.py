# ConvMixer-1536/20 (Trockman & Kolter) plus a small scoping-sensitive
# classifier head: default argument values fixed at definition time while
# the module global is rebound afterwards (function bodies see the new
# value), parameters named like builtins (`type`, `input`, `max`, `id`),
# a local that shadows a global only inside one function, class-body names
# visible to the first iterable of a class-body comprehension but not to
# methods, `nonlocal` updates, a global deleted and re-created, and names
# resolved at call time (a helper defined after the class that uses it).
import torch
import torch.nn as nn

WIDTH = 1536
DEPTH = 20


def default_kernel(k=9 if WIDTH > 1024 else 7, width=WIDTH):
    # `width` was bound when the def ran (1536); WIDTH is looked up now
    return k, width, WIDTH


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn


class Head(nn.Module):
    SIZES = (1536, 768, 384)
    PAIRS = [(a, b) for a, b in zip(SIZES[:-1], SIZES[1:])]

    def __init__(self, type="mlp", input=None, max=1000, id=0):
        super().__init__()
        if type == "mlp":
            self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in self.PAIRS)
        self.out = nn.Linear(self.SIZES[-1] if input is None else input, max)
        self.tag = nn.Parameter(torch.zeros(id + 1))


def ConvMixer(dim, depth, kernel_size=9, patch_size=7, n_classes=1000):
    return nn.Sequential(
        nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size),
        nn.GELU(),
        nn.BatchNorm2d(dim),
        *[nn.Sequential(
            Residual(nn.Sequential(
                nn.Conv2d(dim, dim, kernel_size, groups=dim, padding="same"),
                nn.GELU(),
                nn.BatchNorm2d(dim)
            )),
            nn.Conv2d(dim, dim, kernel_size=1),
            nn.GELU(),
            nn.BatchNorm2d(dim)
        ) for i in range(depth)],
        nn.AdaptiveAvgPool2d((1, 1)),
        nn.Flatten(),
        nn.Linear(dim, n_classes)
    )


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        k, bound_width, late_width = default_kernel()
        self.mixer = ConvMixer(bound_width, DEPTH, kernel_size=k, patch_size=7)
        self.late = nn.Linear(late_width, 8)
        self.heads = make_heads()
        calls = 0

        def bump():
            nonlocal calls
            calls += 1
            return calls

        bump(), bump(), bump()
        self.calls = nn.Parameter(torch.zeros(calls))
        DEPTH_LOCAL = DEPTH  # noqa: N806
        self.depth_scale = nn.Parameter(torch.ones(DEPTH_LOCAL))
        self.gamma = nn.Parameter(torch.ones(GAMMA_DIM))


def make_heads():
    max = 3   # shadows the builtin only in this function
    return nn.ModuleList([Head(id=i, max=max + 10 * i) for i in range(max)] +
                         [Head(type="linear", input=WIDTH)])


WIDTH = 768
GAMMA_DIM = 4
del GAMMA_DIM
GAMMA_DIM = 6
model = Classifier()
