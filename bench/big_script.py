#!/usr/bin/env python3
"""Writes a large model script for the peak-memory target of issue 32 (an 8 MB file under 300 MiB):
many small nn.Module classes, each followed by a config dict, and a model that uses three of them.

    python3 bench/big_script.py /tmp/big.py [BYTES]      # default 8,000,000 bytes (under the 8 MiB cap)
    /usr/bin/time -v build/shardlens inspect /tmp/big.py  # "Maximum resident set size"
"""
import sys


def main():
    path = sys.argv[1]
    target = int(sys.argv[2]) if len(sys.argv) > 2 else 8_000_000
    head = "import torch\nimport torch.nn as nn\n\n"
    out, size, i = [head], len(head), 0
    while True:
        d = 64 + (i % 16) * 8
        block = (f"class Block{i}(nn.Module):\n"
                 f"    def __init__(self, d={d}):\n"
                 f"        super().__init__()\n"
                 f"        self.fc1 = nn.Linear(d, 4 * d)\n"
                 f"        self.fc2 = nn.Linear(4 * d, d)\n"
                 f"        self.norm = nn.LayerNorm(d)\n\n"
                 f"    def forward(self, x):\n"
                 f"        return x + self.fc2(torch.relu(self.fc1(self.norm(x))))\n\n"
                 f"CONFIG_{i} = dict(hidden={d}, heads={4 + i % 4}, layers={i % 12 + 1}, name='block{i}')\n\n")
        if size + len(block) > target - 400:
            break
        out.append(block)
        size += len(block)
        i += 1
    out.append("class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               f"        self.blocks = nn.ModuleList([Block0(), Block1(), Block{i - 1}()])\n\n"
               "    def forward(self, x):\n        for b in self.blocks:\n            x = b(x)\n        return x\n\n"
               "model = Model()\n")
    text = "".join(out)
    with open(path, "w") as f:
        f.write(text)
    print(f"{path}: {len(text.encode())} bytes, {i} classes")


if __name__ == "__main__":
    main()
