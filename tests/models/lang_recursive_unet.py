# junyanz/pytorch-CycleGAN-and-pix2pix `unet_256` generator: the U-Net is
# built from the innermost block outwards, each UnetSkipConnectionBlock
# receiving the previous one as `submodule`; the block's layer list is
# assembled by list concatenation (`down + [submodule] + up`) under
# if/elif/else on outermost/innermost; `type(norm_layer) == functools.partial`
# checks `.func`; plus a recursive function that builds a nested
# Sequential for a multiscale discriminator and returns it.
import functools

import torch
import torch.nn as nn


class UnetSkipConnectionBlock(nn.Module):
    def __init__(self, outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False, innermost=False,
                 norm_layer=nn.BatchNorm2d, use_dropout=False):
        super(UnetSkipConnectionBlock, self).__init__()
        self.outermost = outermost
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        if input_nc is None:
            input_nc = outer_nc
        downconv = nn.Conv2d(input_nc, inner_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
        downrelu = nn.LeakyReLU(0.2, True)
        downnorm = norm_layer(inner_nc)
        uprelu = nn.ReLU(True)
        upnorm = norm_layer(outer_nc)

        if outermost:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1)
            down = [downconv]
            up = [uprelu, upconv, nn.Tanh()]
            model = down + [submodule] + up
        elif innermost:
            upconv = nn.ConvTranspose2d(inner_nc, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
            down = [downrelu, downconv]
            up = [uprelu, upconv, upnorm]
            model = down + up
        else:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
            down = [downrelu, downconv, downnorm]
            up = [uprelu, upconv, upnorm]
            if use_dropout:
                model = down + [submodule] + up + [nn.Dropout(0.5)]
            else:
                model = down + [submodule] + up
        self.model = nn.Sequential(*model)


class UnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, num_downs, ngf=64, norm_layer=nn.BatchNorm2d, use_dropout=False):
        super(UnetGenerator, self).__init__()
        unet_block = UnetSkipConnectionBlock(ngf * 8, ngf * 8, input_nc=None, submodule=None,
                                             norm_layer=norm_layer, innermost=True)
        for i in range(num_downs - 5):
            unet_block = UnetSkipConnectionBlock(ngf * 8, ngf * 8, input_nc=None, submodule=unet_block,
                                                 norm_layer=norm_layer, use_dropout=use_dropout)
        unet_block = UnetSkipConnectionBlock(ngf * 4, ngf * 8, input_nc=None, submodule=unet_block,
                                             norm_layer=norm_layer)
        unet_block = UnetSkipConnectionBlock(ngf * 2, ngf * 4, input_nc=None, submodule=unet_block,
                                             norm_layer=norm_layer)
        unet_block = UnetSkipConnectionBlock(ngf, ngf * 2, input_nc=None, submodule=unet_block,
                                             norm_layer=norm_layer)
        self.model = UnetSkipConnectionBlock(output_nc, ngf, input_nc=input_nc, submodule=unet_block,
                                             outermost=True, norm_layer=norm_layer)


def nested_disc(ch, depth, max_ch=512):
    """Recursively nests: Sequential(conv, norm, act, <inner>)"""
    out = min(ch * 2, max_ch)
    layers = [nn.Conv2d(ch, out, 4, 2, 1), nn.InstanceNorm2d(out, affine=True), nn.LeakyReLU(0.2)]
    if depth > 1:
        layers.append(nested_disc(out, depth - 1, max_ch))
    else:
        layers.append(nn.Conv2d(out, 1, 4, 1, 1))
    return nn.Sequential(*layers)


class Pix2Pix(nn.Module):
    def __init__(self):
        super().__init__()
        norm = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
        self.netG = UnetGenerator(3, 3, 8, 64, norm_layer=norm, use_dropout=True)
        self.netG_bn = UnetGenerator(1, 2, 7, 32, norm_layer=nn.BatchNorm2d)
        self.netD = nn.Sequential(nn.Conv2d(6, 64, 4, 2, 1), nested_disc(64, 3))


model = Pix2Pix()
