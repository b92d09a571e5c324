# DLRM/DCN-v2 style multi-task recommender: embedding tables built from
# dict comprehensions over a feature spec (string keys, conditional values),
# a *set* comprehension of shared vocabularies (made deterministic with
# sorted()), dict comprehensions with `if` filters and tuple keys joined
# into names, nested ModuleDict -> ModuleList -> ModuleDict mixtures,
# ModuleDict.update / pop / `in` / keys() / values() / items(), `dict.get`
# with defaults, `setdefault`, `collections.OrderedDict` / `defaultdict` /
# `Counter`, and `{**a, **b}` merges where later keys win.
import collections
import math

import torch
import torch.nn as nn

SPARSE = {
    "user_id": {"vocab": 2_000_000, "dim": 64, "pool": "sum"},
    "item_id": {"vocab": 5_000_000, "dim": 64, "pool": "sum"},
    "item_cat": {"vocab": 5000, "dim": 16},
    "user_city": {"vocab": 10_000, "dim": 16, "shared": "geo"},
    "item_city": {"vocab": 10_000, "dim": 16, "shared": "geo"},
    "hour": {"vocab": 24, "dim": 8, "pool": "mean"},
    "weekday": {"vocab": 7},
    "device": {"vocab": 12, "dim": 8, "disabled": True},
}
DENSE = ["price", "age", "ctr_7d", "ctr_30d", "dwell"]
TASKS = collections.OrderedDict([("click", 1), ("like", 1), ("watch_time", 1), ("category", 32)])
DEFAULTS = {"dim": 4, "pool": "mean"}


class CrossNetV2(nn.Module):
    def __init__(self, dim, layers=3, low_rank=None):
        super().__init__()
        if low_rank:
            self.U = nn.ParameterList(nn.Parameter(torch.empty(dim, low_rank)) for _ in range(layers))
            self.V = nn.ParameterList(nn.Parameter(torch.empty(low_rank, dim)) for _ in range(layers))
        else:
            self.W = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.bias = nn.ParameterList([nn.Parameter(torch.zeros(dim)) for _ in range(layers)])


def mlp(sizes, act=nn.ReLU):
    layers = collections.OrderedDict()
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers["fc%d" % i] = nn.Linear(a, b)
        if i < len(sizes) - 2:
            layers[f"act{i}"] = act()
    return nn.Sequential(layers)


class MultiTaskDLRM(nn.Module):
    def __init__(self, sparse=SPARSE, dense=DENSE, tasks=TASKS, experts=4):
        super().__init__()
        specs = {name: {**DEFAULTS, **spec} for name, spec in sparse.items() if not spec.get("disabled", False)}
        shared = sorted({s["shared"] for s in specs.values() if "shared" in s})
        owners = collections.defaultdict(list)
        for name, s in specs.items():
            owners[s.get("shared", name)].append(name)
        self.tables = nn.ModuleDict({
            key: nn.EmbeddingBag(specs[names[0]]["vocab"], specs[names[0]]["dim"], mode=specs[names[0]]["pool"])
            for key, names in owners.items()
        })
        self.shared_tables = shared
        dims = collections.Counter()
        for s in specs.values():
            dims[s["dim"]] += 1
        emb_dim = sum(d * n for d, n in dims.items())
        self.dense_norm = nn.ModuleDict({f: nn.BatchNorm1d(1) for f in dense if not f.startswith("ctr")})
        self.dense_norm.update({"ctr": nn.BatchNorm1d(sum(f.startswith("ctr") for f in dense))})
        in_dim = emb_dim + len(dense)
        self.cross = CrossNetV2(in_dim, layers=3, low_rank=max(1, in_dim // 4))
        self.experts = nn.ModuleList([mlp([in_dim, 512, 256]) for _ in range(experts)])
        self.gates = nn.ModuleDict({t: nn.Linear(in_dim, experts) for t in tasks})
        towers = {}
        for t, out in tasks.items():
            towers.setdefault(t, nn.ModuleList()).append(mlp([256, 128, out]))
            if out > 1:
                towers[t].append(nn.ModuleDict({"calib": nn.Linear(out, out), "temp": nn.Identity()}))
        self.towers = nn.ModuleDict(towers)
        if "watch_time" in self.towers:
            self.towers.pop("watch_time")
            self.towers["watch_time"] = nn.ModuleList([mlp([256, 64, 1], act=nn.SiLU)])
        combos = {(a, b): nn.Bilinear(8, 8, 1) for a in ("hour", "weekday") for b in ("hour", "weekday") if a < b}
        self.interactions = nn.ModuleDict({"_x_".join(k): v for k, v in combos.items()})
        self.task_names = list(self.gates.keys())
        self.log_vars = nn.Parameter(torch.zeros(len([m for m in self.towers.values()])))
        self.register_buffer("emb_scale", torch.full((len(self.tables),), 1.0 / math.sqrt(64)))


model = MultiTaskDLRM()
