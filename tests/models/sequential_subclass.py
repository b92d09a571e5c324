# MobileNetV3-Large (torchvision style) on top of a small user framework:
# classes deriving nn.Sequential that build a `layers` list and call
# super().__init__(*layers) (Conv2dNormActivation, the classifier), a
# user base class deriving nn.Module whose __init__ calls overridable
# build_* hooks that subclasses implement, submodules created under `if`,
# `self.x = None` placeholders, register_parameter("bias", None), a custom
# layer with its own Parameters, and a config list of dataclass instances.
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, List, Optional, Sequence

import torch
from torch import nn, Tensor
import torch.nn.functional as F


def _make_divisible(v: float, divisor: int, min_value: Optional[int] = None) -> int:
    """
    This function is taken from the original tf repo.
    It ensures that all layers have a channel number that is divisible by 8
    """
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    # Make sure that round down does not go down by more than 10%.
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvNormActivation(torch.nn.Sequential):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        stride: int = 1,
        padding: Optional[int] = None,
        groups: int = 1,
        norm_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.BatchNorm2d,
        activation_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.ReLU,
        dilation: int = 1,
        inplace: Optional[bool] = True,
        bias: Optional[bool] = None,
        conv_layer: Callable[..., torch.nn.Module] = torch.nn.Conv2d,
    ) -> None:

        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None

        layers = [
            conv_layer(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding,
                dilation=dilation,
                groups=groups,
                bias=bias,
            )
        ]

        if norm_layer is not None:
            layers.append(norm_layer(out_channels))

        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels


class Conv2dNormActivation(ConvNormActivation):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        stride: int = 1,
        padding: Optional[int] = None,
        groups: int = 1,
        norm_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.BatchNorm2d,
        activation_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.ReLU,
        dilation: int = 1,
        inplace: Optional[bool] = True,
        bias: Optional[bool] = None,
    ) -> None:

        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            groups,
            norm_layer,
            activation_layer,
            dilation,
            inplace,
            bias,
            torch.nn.Conv2d,
        )


class SqueezeExcitation(torch.nn.Module):
    def __init__(
        self,
        input_channels: int,
        squeeze_channels: int,
        activation: Callable[..., torch.nn.Module] = torch.nn.ReLU,
        scale_activation: Callable[..., torch.nn.Module] = torch.nn.Sigmoid,
    ) -> None:
        super().__init__()
        self.avgpool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc1 = torch.nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = torch.nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, input: Tensor) -> Tensor:
        scale = self.fc2(self.activation(self.fc1(self.avgpool(input))))
        return self.scale_activation(scale) * input


@dataclass
class InvertedResidualConfig:
    input_channels: int
    kernel: int
    expanded_channels: int
    out_channels: int
    use_se: bool
    use_hs: bool
    stride: int
    dilation: int
    width_mult: float = 1.0

    def __post_init__(self):
        self.input_channels = self.adjust_channels(self.input_channels, self.width_mult)
        self.expanded_channels = self.adjust_channels(self.expanded_channels, self.width_mult)
        self.out_channels = self.adjust_channels(self.out_channels, self.width_mult)

    @staticmethod
    def adjust_channels(channels: int, width_mult: float):
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    # Implemented as described at section 5 of MobileNetV3 paper
    def __init__(
        self,
        cnf: InvertedResidualConfig,
        norm_layer: Callable[..., nn.Module],
        se_layer: Callable[..., nn.Module] = partial(SqueezeExcitation, scale_activation=nn.Hardsigmoid),
    ):
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")

        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels

        layers: List[nn.Module] = []
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU

        # expand
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(
                Conv2dNormActivation(
                    cnf.input_channels,
                    cnf.expanded_channels,
                    kernel_size=1,
                    norm_layer=norm_layer,
                    activation_layer=activation_layer,
                )
            )

        # depthwise
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(
            Conv2dNormActivation(
                cnf.expanded_channels,
                cnf.expanded_channels,
                kernel_size=cnf.kernel,
                stride=stride,
                dilation=cnf.dilation,
                groups=cnf.expanded_channels,
                norm_layer=norm_layer,
                activation_layer=activation_layer,
            )
        )
        if cnf.use_se:
            squeeze_channels = _make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(se_layer(cnf.expanded_channels, squeeze_channels))

        # project
        layers.append(
            Conv2dNormActivation(
                cnf.expanded_channels, cnf.out_channels, kernel_size=1, norm_layer=norm_layer, activation_layer=None
            )
        )

        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input: Tensor) -> Tensor:
        result = self.block(input)
        if self.use_res_connect:
            result += input
        return result


# ----------------------------------------------------------------------------
# a small user framework on top


class ScaledLinear(nn.Module):
    """Linear layer with a learnable per-output scale; bias optional."""

    def __init__(self, in_features, out_features, bias=True, init_scale=1.0):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.scale = nn.Parameter(torch.full((out_features,), init_scale))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, x):
        return F.linear(x, self.weight * self.scale[:, None], self.bias)


class ClassifierHead(nn.Sequential):
    def __init__(self, in_features, hidden, num_classes, dropout=0.2, act_layer=nn.Hardswish, cosine=False):
        layers = [nn.Linear(in_features, hidden), act_layer(inplace=True), nn.Dropout(p=dropout, inplace=True)]
        if cosine:
            layers.append(ScaledLinear(hidden, num_classes, bias=False, init_scale=16.0))
        else:
            layers.append(nn.Linear(hidden, num_classes))
        super().__init__(*layers)
        self.num_classes = num_classes


class Backbone(nn.Module):
    """Base class: subclasses provide build_stem / build_stages / build_head."""

    def __init__(self, num_classes=1000, in_chans=3, norm_layer=None, with_neck=False, **kwargs):
        super().__init__()
        self.num_classes = num_classes
        self.norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        self.neck = None
        self.head = None
        self.stem = self.build_stem(in_chans)
        self.features = self.build_stages()
        if with_neck:
            self.neck = self.build_neck()
        if num_classes > 0:
            self.head = self.build_head(num_classes)

    def build_stem(self, in_chans):
        raise NotImplementedError

    def build_stages(self):
        raise NotImplementedError

    def build_neck(self):
        return nn.Identity()

    def build_head(self, num_classes):
        raise NotImplementedError


class MobileNetV3(Backbone):
    def __init__(self, inverted_residual_setting, last_channel, cosine_head=False, **kwargs):
        self.inverted_residual_setting = inverted_residual_setting
        self.last_channel = last_channel
        self.cosine_head = cosine_head
        super().__init__(**kwargs)
        self.avgpool = nn.AdaptiveAvgPool2d(1)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def build_stem(self, in_chans):
        firstconv_output_channels = self.inverted_residual_setting[0].input_channels
        return Conv2dNormActivation(
            in_chans,
            firstconv_output_channels,
            kernel_size=3,
            stride=2,
            norm_layer=self.norm_layer,
            activation_layer=nn.Hardswish,
        )

    def build_stages(self):
        layers: List[nn.Module] = []
        for cnf in self.inverted_residual_setting:
            layers.append(InvertedResidual(cnf, self.norm_layer))
        lastconv_input_channels = self.inverted_residual_setting[-1].out_channels
        lastconv_output_channels = 6 * lastconv_input_channels
        layers.append(
            Conv2dNormActivation(
                lastconv_input_channels,
                lastconv_output_channels,
                kernel_size=1,
                norm_layer=self.norm_layer,
                activation_layer=nn.Hardswish,
            )
        )
        self.lastconv_output_channels = lastconv_output_channels
        return nn.Sequential(*layers)

    def build_neck(self):
        return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))

    def build_head(self, num_classes):
        return ClassifierHead(self.lastconv_output_channels, self.last_channel, num_classes,
                              cosine=self.cosine_head)


def _mobilenet_v3_conf(arch: str, width_mult: float = 1.0, reduced_tail: bool = False, dilated: bool = False):
    reduce_divider = 2 if reduced_tail else 1
    dilation = 2 if dilated else 1

    bneck_conf = partial(InvertedResidualConfig, width_mult=width_mult)
    adjust_channels = partial(InvertedResidualConfig.adjust_channels, width_mult=width_mult)

    if arch == "mobilenet_v3_large":
        inverted_residual_setting = [
            bneck_conf(16, 3, 16, 16, False, False, 1, 1),
            bneck_conf(16, 3, 64, 24, False, False, 2, 1),  # C1
            bneck_conf(24, 3, 72, 24, False, False, 1, 1),
            bneck_conf(24, 5, 72, 40, True, False, 2, 1),  # C2
            bneck_conf(40, 5, 120, 40, True, False, 1, 1),
            bneck_conf(40, 5, 120, 40, True, False, 1, 1),
            bneck_conf(40, 3, 240, 80, False, True, 2, 1),  # C3
            bneck_conf(80, 3, 200, 80, False, True, 1, 1),
            bneck_conf(80, 3, 184, 80, False, True, 1, 1),
            bneck_conf(80, 3, 184, 80, False, True, 1, 1),
            bneck_conf(80, 3, 480, 112, True, True, 1, 1),
            bneck_conf(112, 3, 672, 112, True, True, 1, 1),
            bneck_conf(112, 5, 672, 160 // reduce_divider, True, True, 2, dilation),  # C4
            bneck_conf(160 // reduce_divider, 5, 960 // reduce_divider, 160 // reduce_divider, True, True, 1, dilation),
            bneck_conf(160 // reduce_divider, 5, 960 // reduce_divider, 160 // reduce_divider, True, True, 1, dilation),
        ]
        last_channel = adjust_channels(1280 // reduce_divider)  # C5
    elif arch == "mobilenet_v3_small":
        inverted_residual_setting = [
            bneck_conf(16, 3, 16, 16, True, False, 2, 1),  # C1
            bneck_conf(16, 3, 72, 24, False, False, 2, 1),  # C2
            bneck_conf(24, 3, 88, 24, False, False, 1, 1),
            bneck_conf(24, 5, 96, 40, True, True, 2, 1),  # C3
            bneck_conf(40, 5, 240, 40, True, True, 1, 1),
            bneck_conf(40, 5, 240, 40, True, True, 1, 1),
            bneck_conf(40, 5, 120, 48, True, True, 1, 1),
            bneck_conf(48, 5, 144, 48, True, True, 1, 1),
            bneck_conf(48, 5, 288, 96 // reduce_divider, True, True, 2, dilation),  # C4
            bneck_conf(96 // reduce_divider, 5, 576 // reduce_divider, 96 // reduce_divider, True, True, 1, dilation),
            bneck_conf(96 // reduce_divider, 5, 576 // reduce_divider, 96 // reduce_divider, True, True, 1, dilation),
        ]
        last_channel = adjust_channels(1024 // reduce_divider)  # C5
    else:
        raise ValueError(f"Unsupported model type {arch}")

    return inverted_residual_setting, last_channel


def mobilenet_v3_large(**kwargs: Any) -> MobileNetV3:
    inverted_residual_setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_large", **kwargs)
    return MobileNetV3(inverted_residual_setting, last_channel, num_classes=1000, with_neck=True,
                       cosine_head=True)


model = mobilenet_v3_large(width_mult=1.25)
