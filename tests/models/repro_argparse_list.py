# Reduced from rwkv4.py: `parser.parse_args([...])` with an explicit argument
# list; shardlens silently uses the add_argument defaults (512 instead of 1024),
# no unresolved entry.
import argparse

import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--n_embd", default=512, type=int)
args = parser.parse_args(["--n_embd", "1024"])


class RWKV(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.head = nn.Linear(args.n_embd, args.n_embd, bias=False)


model = RWKV(args)
