"""Four real architectures that use transposed convolutions, built with torch.nn from their
papers' layer lists. Random weights (each paper's initialisation where it states one), no
downloads. run_models.py runs them with torch's ConvTranspose and with deconv's.

Each entry of MODELS is a ModelSpec: build() returns the model in eval mode (call it after
torch.manual_seed), inputs(small, generator) returns the forward()'s arguments. `small` gives
tiny batch and spatial sizes (CI); the full sizes are the papers'.

* dcgan:      DCGAN generator (Radford et al. 2016, LSUN model): z 100 -> 4x4x1024 -> 8x8x512 ->
              16x16x256 -> 32x32x128 -> 64x64x3; ConvTranspose2d 4x4, BatchNorm, ReLU, Tanh.
* unet:       U-Net decoder (Ronneberger et al. 2015): 2x2 stride-2 up-convolutions halving the
              channels 1024 -> 512 -> 256 -> 128 -> 64, copy-and-crop skips, two valid 3x3 convs
              with ReLU per level, 1x1 conv to 2 classes. 28x28x1024 in, 388x388x2 out.
* hifigan:    HiFi-GAN V1 generator (Kong et al. 2020): mel 80 -> conv_pre 512, ConvTranspose1d
              upsample rates 8,8,2,2, kernels 16,16,4,4, channels 512 -> 256 -> 128 -> 64 -> 32,
              padding (k-u)/2, leaky ReLU, multi-receptive-field fusion of ResBlock1 (kernels 3,7,11,
              dilations 1,3,5), conv_post, tanh. Weight norm is left out (it is folded into the
              weights for inference).
* unet3d:     3D U-Net decoder (Cicek et al. 2016): 2x2x2 stride-2 up-convolutions 512, 256, 128
              with copy-and-crop skips of 256, 128, 64 channels, two valid 3x3x3 convs with
              BatchNorm and ReLU per level, 1x1x1 conv to 3 labels. 9x9x7x512 in, 44x44x28x3 out.
"""

import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["MODELS", "ModelSpec", "DCGANGenerator", "UNetDecoder", "HiFiGANGenerator", "UNet3DDecoder",
           "calibrate_batchnorm", "center_crop"]


# ---------------------------------------------------------------- helpers

def center_crop(x, size):
    """The centre `size` (spatial) of x [N, C, X..]: U-Net's "copy and crop"."""
    index = [slice(None), slice(None)]
    for have, want in zip(x.shape[2:], size):
        if have < want:
            raise ValueError(f"cannot crop {list(x.shape)} to spatial size {list(size)}")
        begin = (have - want) // 2
        index.append(slice(begin, begin + want))
    return x[tuple(index)]


def he_init(model):
    """U-Net's initialisation (Ronneberger et al. section 3): Gaussian weights with standard
    deviation sqrt(2/N), N the number of incoming nodes of one neuron; zero biases. For a
    transposed convolution each output takes C_in/groups * prod(K)/prod(stride) inputs."""
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            fan_in = m.in_channels // m.groups * math.prod(m.kernel_size)
        elif isinstance(m, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
            fan_in = m.in_channels // m.groups * math.prod(m.kernel_size) / math.prod(m.stride)
        else:
            continue
        nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_in))
        if m.bias is not None:
            nn.init.zeros_(m.bias)


@torch.no_grad()
def calibrate_batchnorm(model, inputs):
    """Sets every BatchNorm's running statistics to those of one train-mode forward on `inputs`
    (momentum None: the plain average), so that eval mode normalises as a trained model would
    instead of dividing by the initial unit variance. Returns the model in eval mode."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model.eval()
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    model(*inputs)
    return model.eval()


# ---------------------------------------------------------------- DCGAN

class DCGANGenerator(nn.Module):
    """Radford et al., Fig. 1: the 100-d z is projected and reshaped to 4x4x1024 (a 4x4 stride-1
    ConvTranspose2d on z as a 1x1 image, as in the reference implementations: the same linear map),
    then four fractionally-strided 4x4 stride-2 convolutions; BatchNorm and ReLU after all but the
    output layer, which has Tanh. Weights N(0, 0.02), BatchNorm gamma N(1, 0.02) (section 4)."""

    def __init__(self, nz=100, channels=(1024, 512, 256, 128), image_channels=3):
        super().__init__()
        layers = [nn.ConvTranspose2d(nz, channels[0], 4, 1, 0, bias=False), nn.BatchNorm2d(channels[0]),
                  nn.ReLU(inplace=True)]
        for cin, cout in zip(channels, channels[1:]):
            layers += [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout),
                       nn.ReLU(inplace=True)]
        layers += [nn.ConvTranspose2d(channels[-1], image_channels, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)
        for m in self.modules():
            if isinstance(m, nn.ConvTranspose2d):
                nn.init.normal_(m.weight, 0.0, 0.02)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.normal_(m.weight, 1.0, 0.02)
                nn.init.zeros_(m.bias)

    def forward(self, z):
        return self.main(z)


# ---------------------------------------------------------------- U-Net (2D)

def _double_conv(rank, cin, cout, batch_norm):
    conv = {2: nn.Conv2d, 3: nn.Conv3d}[rank]
    norm = {2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[rank]
    layers = []
    for a, b in ((cin, cout), (cout, cout)):
        layers.append(conv(a, b, 3))  # unpadded ("valid"), as in both papers
        if batch_norm:
            layers.append(norm(b))
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class _SkipDecoder(nn.Module):
    """The expansive path both U-Nets share: per level `ups[i]`, the cropped skip concatenated in
    front, `convs[i]`; then `head`."""

    def forward(self, x, *skips):
        for up, conv, skip in zip(self.ups, self.convs, skips):
            x = up(x)
            x = conv(torch.cat([center_crop(skip, x.shape[2:]), x], 1))
        return self.head(x)


class UNetDecoder(_SkipDecoder):
    """Ronneberger et al., Fig. 1, the expansive path: per level a 2x2 up-convolution halving the
    channels, concatenation with the cropped feature map of the contracting path, two unpadded
    3x3 convolutions with ReLU; a final 1x1 convolution to the classes. He initialisation.

    forward(x, *skips): x the bottleneck [N, 1024, H, W], skips the contracting path's feature
    maps from the deepest ([N, 512, ..]) to the shallowest ([N, 64, ..]), each at least as large
    as the level's up-convolved map (cropped to its centre)."""

    def __init__(self, channels=(1024, 512, 256, 128, 64), classes=2):
        super().__init__()
        self.ups = nn.ModuleList(nn.ConvTranspose2d(c, c // 2, 2, 2) for c in channels[:-1])
        self.convs = nn.ModuleList(_double_conv(2, c, c // 2, False) for c in channels[:-1])
        self.head = nn.Conv2d(channels[-1], classes, 1)
        he_init(self)


def unet_skip_sizes(bottleneck, levels):
    """The contracting path's feature map sizes for a bottleneck of size `bottleneck` (per
    spatial axis), deepest first: each level is pooled by 2 and loses 4 to two valid 3x3 convs,
    so a level of size e feeds the next with e/2 - 4, i.e. e = 2 (next + 4)."""
    sizes, size = [], list(bottleneck)
    for _ in range(levels):
        size = [2 * (s + 4) for s in size]
        sizes.append(size)
    return sizes


def unet_decoder_sizes(bottleneck, levels):
    """The expansive path's up-convolved sizes (what each skip is cropped to), deepest first."""
    sizes, size = [], list(bottleneck)
    for _ in range(levels):
        size = [2 * s for s in size]
        sizes.append(size)
        size = [s - 4 for s in size]
    return sizes


def _unet_inputs(channels, batch, bottleneck, exact_skips, generator):
    """Post-ReLU-like random features: the bottleneck and the skips. exact_skips: each skip just
    the size it is cropped to (small runs); else the contracting path's real sizes."""
    levels = len(channels) - 1
    sizes = unet_decoder_sizes(bottleneck, levels) if exact_skips else unet_skip_sizes(bottleneck, levels)

    def features(c, size):
        return torch.randn([batch, c] + list(size), generator=generator).relu_()

    return (features(channels[0], bottleneck),) + tuple(
        features(c // 2, size) for c, size in zip(channels[:-1], sizes))


# ---------------------------------------------------------------- HiFi-GAN V1

LRELU_SLOPE = 0.1


class ResBlock1(nn.Module):
    """HiFi-GAN's ResBlock1: for each dilation d, x += conv_k(lrelu(conv_{k,d}(lrelu(x))))."""

    def __init__(self, channels, kernel_size, dilations=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel_size, 1, dilation=d, padding=(kernel_size * d - d) // 2)
            for d in dilations)
        self.convs2 = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel_size, 1, dilation=1, padding=(kernel_size - 1) // 2)
            for _ in dilations)

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = c1(F.leaky_relu(x, LRELU_SLOPE))
            xt = c2(F.leaky_relu(xt, LRELU_SLOPE))
            x = xt + x
        return x


class HiFiGANGenerator(nn.Module):
    """Kong et al., V1 (config_v1.json): upsample_rates 8,8,2,2, upsample_kernel_sizes 16,16,4,4,
    upsample_initial_channel 512, resblock 1 with kernel sizes 3,7,11 and dilations 1,3,5.
    Residual convolutions N(0, 0.01) as the reference's init_weights. The up-sampling layers are
    He-initialised instead (fan-in C_in * K / stride, leaky ReLU gain): the reference's N(0, 0.01),
    meant for training from scratch, shrinks the signal ~300x over the four stages, which leaves the
    output to conv_post's bias and would hide the transposed convolutions' errors."""

    def __init__(self, mels=80, initial_channels=512, upsample_rates=(8, 8, 2, 2),
                 upsample_kernel_sizes=(16, 16, 4, 4), resblock_kernel_sizes=(3, 7, 11),
                 resblock_dilations=((1, 3, 5), (1, 3, 5), (1, 3, 5))):
        super().__init__()
        self.num_kernels = len(resblock_kernel_sizes)
        self.conv_pre = nn.Conv1d(mels, initial_channels, 7, 1, padding=3)
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        for i, (u, k) in enumerate(zip(upsample_rates, upsample_kernel_sizes)):
            cin, cout = initial_channels // 2 ** i, initial_channels // 2 ** (i + 1)
            self.ups.append(nn.ConvTranspose1d(cin, cout, k, u, padding=(k - u) // 2))
            for rk, rd in zip(resblock_kernel_sizes, resblock_dilations):
                self.resblocks.append(ResBlock1(cout, rk, rd))
        self.conv_post = nn.Conv1d(cout, 1, 7, 1, padding=3)
        for m in self.resblocks.modules():
            if isinstance(m, nn.Conv1d):
                nn.init.normal_(m.weight, 0.0, 0.01)
        for m in self.ups:
            fan_in = m.in_channels * m.kernel_size[0] / m.stride[0]
            nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / (1 + LRELU_SLOPE ** 2) / fan_in))

    def forward(self, mel):
        x = self.conv_pre(mel)
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, LRELU_SLOPE))
            xs = None
            for j in range(self.num_kernels):
                y = self.resblocks[i * self.num_kernels + j](x)
                xs = y if xs is None else xs + y
            x = xs / self.num_kernels
        x = self.conv_post(F.leaky_relu(x))
        return torch.tanh(x)


# ---------------------------------------------------------------- 3D U-Net

class UNet3DDecoder(_SkipDecoder):
    """Cicek et al., Fig. 1, the synthesis path: per level a 2x2x2 stride-2 up-convolution (512,
    256, 128 channels, kept), concatenation with the cropped analysis-path map (256, 128, 64
    channels), two unpadded 3x3x3 convolutions each followed by BatchNorm and ReLU, halving to
    256, 128, 64; a final 1x1x1 convolution to 3 labels. He initialisation.

    forward(x, *skips): x the bottleneck [N, 512, D, H, W], skips deepest first."""

    def __init__(self, channels=(512, 256, 128, 64), labels=3):
        super().__init__()
        ups = channels[:-1]  # 512, 256, 128: the up-convolution keeps the channels
        self.ups = nn.ModuleList(nn.ConvTranspose3d(c, c, 2, 2) for c in ups)
        self.convs = nn.ModuleList(_double_conv(3, c + c // 2, c // 2, True) for c in ups)
        self.head = nn.Conv3d(channels[-1], labels, 1)
        he_init(self)


def _unet3d_inputs(batch, bottleneck, exact_skips, generator):
    channels = (512, 256, 128, 64)
    levels = len(channels) - 1
    sizes = unet_decoder_sizes(bottleneck, levels) if exact_skips else unet_skip_sizes(bottleneck, levels)

    def features(c, size):
        return torch.randn([batch, c] + list(size), generator=generator).relu_()

    return (features(channels[0], bottleneck),) + tuple(
        features(c, size) for c, size in zip(channels[1:], sizes))


# ---------------------------------------------------------------- the registry

@dataclass(frozen=True)
class ModelSpec:
    name: str
    title: str
    rank: int  # the spatial rank of its transposed convolutions
    build: Callable[[], nn.Module]
    inputs: Callable[[bool, torch.Generator], tuple]
    shape_note: str = ""  # what the input shape column adds to the first input's shape


MODELS = {
    "dcgan": ModelSpec(
        "dcgan", "DCGAN generator (Radford et al.)", 2, lambda: DCGANGenerator().eval(),
        lambda small, g: (torch.randn(2 if small else 16, 100, 1, 1, generator=g),)),
    "unet": ModelSpec(
        "unet", "U-Net decoder (Ronneberger et al.)", 2, lambda: UNetDecoder().eval(),
        # full: the paper's 572x572 tile: bottleneck 28x28, skips 64, 136, 280, 568, output 388x388
        lambda small, g: _unet_inputs((1024, 512, 256, 128, 64), 1, [6, 6] if small else [28, 28], small, g),
        " + 4 skips"),
    "hifigan": ModelSpec(
        "hifigan", "HiFi-GAN V1 generator (Kong et al.)", 1, lambda: HiFiGANGenerator().eval(),
        # full: 128 mel frames (hop 256: 32768 samples, 1.5 s at 22.05 kHz)
        lambda small, g: (torch.randn(1, 80, 8 if small else 128, generator=g),)),
    "unet3d": ModelSpec(
        "unet3d", "3D U-Net decoder (Cicek et al.)", 3, lambda: UNet3DDecoder().eval(),
        # full: the paper's 132x132x116 tile: bottleneck 9x9x7, skips 26x26x22, 60x60x52,
        # 128x128x112, output 44x44x28
        lambda small, g: _unet3d_inputs(1, [5, 5, 4] if small else [9, 9, 7], small, g),
        " + 3 skips"),
}
