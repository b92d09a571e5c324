# HRNet-W18-small-ish segmentation network whose wiring is computed with
# itertools and builtins: stage specs transposed with `zip(*specs)`,
# channel pairs via `zip(ch[:-1], ch[1:])`, cumulative block offsets with
# `itertools.accumulate(..., initial=0)`, fuse layers over
# `itertools.product(range(n), repeat=2)`, `itertools.repeat`,
# `itertools.chain.from_iterable`, `itertools.starmap`, `zip_longest` with a
# fillvalue, `itertools.groupby` over sorted keys, `sorted(..., key=,
# reverse=True)`, `reversed(...)`, `enumerate(..., start=1)`, `min`/`max`
# with key=, `sum`/`any`/`all`/`map`/`filter`, star-unpacking assignment.
import itertools
import operator

import torch
import torch.nn as nn

#            (num_branches, num_blocks, base_width, num_modules)
STAGE_SPECS = [(1, 2, 64, 1), (2, 2, 18, 1), (3, 2, 18, 3), (4, 2, 18, 2)]


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)


class Basic(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = conv3x3(c, c), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = conv3x3(c, c), nn.BatchNorm2d(c)


class HRModule(nn.Module):
    def __init__(self, channels, num_blocks):
        super().__init__()
        n = len(channels)
        self.branches = nn.ModuleList(
            nn.Sequential(*itertools.starmap(Basic, itertools.repeat((c,), num_blocks))) for c in channels)
        fuse = [[None] * n for _ in range(n)]
        for i, j in itertools.product(range(n), repeat=2):
            if j > i:
                fuse[i][j] = nn.Sequential(nn.Conv2d(channels[j], channels[i], 1, bias=False),
                                           nn.BatchNorm2d(channels[i]), nn.Upsample(scale_factor=2 ** (j - i)))
            elif j < i:
                steps = []
                for k in range(i - j):
                    last = k == i - j - 1
                    cout = channels[i] if last else channels[j]
                    steps += [conv3x3(channels[j], cout, 2), nn.BatchNorm2d(cout)]
                    if not last:
                        steps.append(nn.ReLU(False))
                fuse[i][j] = nn.Sequential(*steps)
            else:
                fuse[i][j] = nn.Identity()
        self.fuse_layers = nn.ModuleList(nn.ModuleList(row) for row in fuse) if n > 1 else None


class HRNet(nn.Module):
    def __init__(self, specs=STAGE_SPECS, num_classes=19):
        super().__init__()
        nb, blocks, widths, nmods = zip(*specs)
        assert nb == tuple(range(1, len(specs) + 1)), nb
        self.stem = nn.Sequential(conv3x3(3, 64, 2), nn.BatchNorm2d(64), conv3x3(64, 64, 2), nn.BatchNorm2d(64))
        stage_channels = [[w * 2 ** b for b in range(n)] for n, w in zip(nb, widths)]
        offsets = list(itertools.accumulate(nmods, initial=0))
        self.register_buffer("module_offsets", torch.tensor(offsets))
        self.transitions = nn.ModuleList()
        prev = [64]
        for stage_idx, (chs, nm) in enumerate(zip(stage_channels, nmods), start=1):
            trans = []
            for old, new in itertools.zip_longest(prev, chs, fillvalue=None):
                if old is None:
                    trans.append(nn.Sequential(conv3x3(prev[-1], new, 2), nn.BatchNorm2d(new), nn.ReLU()))
                elif old != new:
                    trans.append(nn.Sequential(conv3x3(old, new), nn.BatchNorm2d(new), nn.ReLU()))
                else:
                    trans.append(nn.Identity())
            if stage_idx > 1:
                self.transitions.append(nn.ModuleList(trans))
            mods = [HRModule(chs, blocks[stage_idx - 1]) for _ in range(nm)]
            self.add_module(f"stage{stage_idx}", nn.Sequential(*mods))
            prev = chs

        # decoder: pairs of adjacent widths, from coarse to fine
        final = prev
        pairs = list(zip(final[:-1], final[1:]))
        self.up = nn.ModuleList(nn.ConvTranspose2d(hi, lo, 2, 2) for lo, hi in reversed(pairs))
        *rest, widest = sorted(final)
        fused = sum(final)
        self.last_layer = nn.Sequential(nn.Conv2d(fused, fused, 1), nn.BatchNorm2d(fused), nn.ReLU(),
                                        nn.Conv2d(fused, num_classes, 1))
        self.aux = nn.Conv2d(widest, num_classes, 1) if all(c > 0 for c in rest) else None

        # per-task heads grouped by output stride
        tasks = {"depth": (4, 1), "normals": (4, 3), "edges": (8, 1), "semseg": (4, num_classes)}
        by_stride = itertools.groupby(sorted(tasks.items(), key=lambda kv: (kv[1][0], kv[0])),
                                      key=lambda kv: kv[1][0])
        self.task_heads = nn.ModuleDict()
        for stride, group in by_stride:
            group = list(group)
            cin = final[0] if stride == 4 else final[1]
            self.task_heads[f"s{stride}"] = nn.ModuleList(
                nn.Conv2d(cin, out, 1) for _, (_, out) in group)
        biggest = max(tasks, key=lambda k: tasks[k][1])
        self.biggest_head = nn.Linear(fused, tasks[biggest][1])
        flat = list(itertools.chain.from_iterable(stage_channels))
        self.stage_gates = nn.Parameter(torch.zeros(len(list(filter(lambda c: c != 64, flat)))))
        self.width_scale = nn.Parameter(torch.ones(max(map(operator.itemgetter(2), specs))))


model = HRNet()
