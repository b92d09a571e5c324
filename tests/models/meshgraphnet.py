# MeshGraphNets (cloth/flag_simple, scaled up) written the way the PyTorch
# ports of deepmind-research/meshgraphnets are written: a `mlp(sizes, ...)`
# helper building nn.Sequential from `zip(sizes[:-1], sizes[1:])` with an
# activation only between layers and an optional trailing LayerNorm, a local
# MessagePassing base class taking `aggr=` through super().__init__(**kwargs),
# GraphNetBlock with edge/node MLPs, several edge sets held in an nn.ModuleDict
# keyed by name, a Normalizer registering accumulator buffers (0-dim
# torch.tensor(0.) and `torch.zeros(size)`), EncodeProcessDecode with
# `[latent] * num_layers` list arithmetic, and the model wrapped by a
# simulator-style `Model` that owns the normalizers.
import collections
import functools
import itertools
from typing import Dict, List

import torch
import torch.nn as nn

EdgeSet = collections.namedtuple("EdgeSet", ["name", "features", "senders", "receivers"])
MultiGraph = collections.namedtuple("Graph", ["node_features", "edge_sets"])


def mlp(sizes, activation=nn.ReLU, layer_norm=True):
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(activation())
    if layer_norm:
        layers.append(nn.LayerNorm(sizes[-1]))
    return nn.Sequential(*layers)


class Normalizer(nn.Module):
    """Feature normalizer that accumulates statistics online."""

    def __init__(self, size, max_accumulations=10 ** 6, std_epsilon=1e-8, name="Normalizer"):
        super().__init__()
        self._name = name
        self._max_accumulations = max_accumulations
        self.register_buffer("_std_epsilon", torch.tensor(std_epsilon))
        self.register_buffer("_acc_count", torch.tensor(0.0))
        self.register_buffer("_num_accumulations", torch.tensor(0.0))
        self.register_buffer("_acc_sum", torch.zeros(size))
        self.register_buffer("_acc_sum_squared", torch.zeros(size))

    def forward(self, batched_data, accumulate=True):
        if accumulate and self._num_accumulations < self._max_accumulations:
            self._accumulate(batched_data)
        return (batched_data - self._mean()) / self._std_with_epsilon()

    def _accumulate(self, batched_data):
        count = torch.tensor(batched_data.shape[0], dtype=torch.float32)
        self._acc_sum += batched_data.sum(dim=0)
        self._acc_sum_squared += (batched_data ** 2).sum(dim=0)
        self._acc_count += count
        self._num_accumulations += 1.0

    def _mean(self):
        safe_count = torch.maximum(self._acc_count, torch.tensor(1.0))
        return self._acc_sum / safe_count

    def _std_with_epsilon(self):
        safe_count = torch.maximum(self._acc_count, torch.tensor(1.0))
        std = torch.sqrt(self._acc_sum_squared / safe_count - self._mean() ** 2)
        return torch.maximum(std, self._std_epsilon)


class MessagePassing(nn.Module):
    def __init__(self, aggr="add", flow="source_to_target", node_dim=-2):
        super().__init__()
        assert aggr in ["add", "sum", "mean", "max"]
        self.aggr = aggr
        self.flow = flow
        self.node_dim = node_dim

    def aggregate(self, messages, index, num_nodes):
        out = messages.new_zeros((num_nodes, messages.shape[-1]))
        return out.index_add_(0, index, messages)


class GraphNetBlock(MessagePassing):
    """Multi-Edge Interaction Network with residual connections."""

    def __init__(self, latent_size, num_layers, edge_set_names, **kwargs):
        super().__init__(**kwargs)
        make = functools.partial(mlp, layer_norm=True)
        self.edge_models = nn.ModuleDict({
            name: make([3 * latent_size] + [latent_size] * num_layers + [latent_size])
            for name in edge_set_names
        })
        node_in = latent_size + len(edge_set_names) * latent_size
        self.node_model = make([node_in] + [latent_size] * num_layers + [latent_size])

    def forward(self, graph):
        new_edge_sets = []
        for edge_set in graph.edge_sets:
            senders = graph.node_features[edge_set.senders]
            receivers = graph.node_features[edge_set.receivers]
            features = self.edge_models[edge_set.name](torch.cat([senders, receivers, edge_set.features], -1))
            new_edge_sets.append(edge_set._replace(features=features))
        num_nodes = graph.node_features.shape[0]
        aggregated = [self.aggregate(es.features, es.receivers, num_nodes) for es in new_edge_sets]
        new_node_features = self.node_model(torch.cat([graph.node_features] + aggregated, -1))
        new_edge_sets = [es._replace(features=es.features + old.features)
                         for es, old in zip(new_edge_sets, graph.edge_sets)]
        return MultiGraph(new_node_features + graph.node_features, new_edge_sets)


class Encoder(nn.Module):
    def __init__(self, node_input_size, edge_input_sizes, latent_size, num_layers):
        super().__init__()
        self.node_model = mlp([node_input_size] + [latent_size] * num_layers + [latent_size])
        self.edge_models = nn.ModuleDict()
        for name, size in edge_input_sizes.items():
            self.edge_models[name] = mlp([size] + [latent_size] * num_layers + [latent_size])


class EncodeProcessDecode(nn.Module):
    """Encode-Process-Decode GraphNet model."""

    def __init__(self, node_input_size, edge_input_sizes, output_size, latent_size,
                 num_layers, message_passing_steps, aggr="sum"):
        super().__init__()
        self._latent_size = latent_size
        self._output_size = output_size
        self._num_layers = num_layers
        self._message_passing_steps = message_passing_steps
        self.encoder = Encoder(node_input_size, edge_input_sizes, latent_size, num_layers)
        self.processor = nn.ModuleList(
            GraphNetBlock(latent_size, num_layers, list(edge_input_sizes), aggr=aggr)
            for _ in range(message_passing_steps)
        )
        self.decoder = mlp([latent_size] + [latent_size] * num_layers + [output_size], layer_norm=False)


class Model(nn.Module):
    """Model for static cloth simulation."""

    def __init__(self, params, message_passing_steps=15, latent_size=128, num_layers=2):
        super().__init__()
        self._params = params
        self._output_normalizer = Normalizer(size=params["output_size"], name="output_normalizer")
        self._node_normalizer = Normalizer(size=params["node_size"], name="node_normalizer")
        self._edge_normalizers = nn.ModuleDict({
            name: Normalizer(size=size, name=f"{name}_edge_normalizer")
            for name, size in params["edge_sizes"].items()
        })
        self.learned_model = EncodeProcessDecode(
            node_input_size=params["node_size"],
            edge_input_sizes=params["edge_sizes"],
            output_size=params["output_size"],
            latent_size=latent_size,
            num_layers=num_layers,
            message_passing_steps=message_passing_steps,
        )


NODE_TYPE_SIZE = 9  # common.NodeType.SIZE
PARAMETERS = {
    "cloth": dict(noise=0.003, gamma=0.1, field="world_pos", history=True,
                  size=3, batch=1, model="cloth", evaluator="cloth_eval"),
    "cfd": dict(noise=0.02, gamma=1.0, field="velocity", history=False,
                size=2, batch=2, model="cfd", evaluator="cfd_eval"),
}


def model_params(name):
    p = PARAMETERS[name]
    node_size = p["size"] + NODE_TYPE_SIZE + (p["size"] if p["history"] else 0)
    edge_sizes = collections.OrderedDict([
        ("mesh_edges", 2 + 1 + p["size"] + 1),  # relative mesh pos, norm, relative world pos, norm
        ("world_edges", p["size"] + 1),
    ])
    return {"node_size": node_size, "edge_sizes": edge_sizes, "output_size": p["size"]}


model = Model(model_params("cloth"), message_passing_steps=24, latent_size=512, num_layers=2)
