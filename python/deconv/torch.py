"""torch.nn modules that run on deconv: ConvTranspose1d/2d/3d, drop-in replacements.

They take torch.nn's constructor and parameters (they are subclasses of torch.nn's), and
forward() runs deconv's kernels whenever no gradient is needed: under torch.no_grad() or
torch.inference_mode(), or when neither the input nor the parameters require grad. Each module
keeps one Plan per input shape and dtype.

The weight is packed into the kernels' layout on every call, unless the module is told that its
weights are constant: ``deconv_constant_weights = True`` packs once per weight tensor and version
(in-place updates and load_state_dict bump the version and repack; writes through
``weight.data`` do not, so call ``deconv_repack()`` after those).

forward() falls back to torch's own kernel where deconv cannot serve the call (autograd, a
device or dtype this build has no kernel for) and records why in ``deconv_last_reason``; set
``deconv_fallback = False`` on a module to raise instead.

``swap_conv_transpose(model)`` replaces every torch.nn.ConvTranspose of a model by these,
sharing the parameters.
"""

import weakref

import torch
import torch.nn

import deconv

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "swap_conv_transpose"]

# torch dtype -> deconv's name, for the dtypes this build has kernels for (fixed at build time).
_BUILT = {}
for _name in deconv.built_dtypes():
    _torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
                    "f64": torch.float64, "i8": torch.int8, "u8": torch.uint8, "i32": torch.int32}[_name]
    _BUILT[_torch_dtype] = _name
_RANKS = set(deconv.built_ranks())

# Each module's plans and packed weights, outside the module: copy.deepcopy, pickle and
# torch.save then see only torch's own state (a Plan cannot be pickled), and a copy starts empty.
_STATES = weakref.WeakKeyDictionary()


class _DeconvForward:
    """The forward() shared by the three modules; `_rank` is their spatial rank."""

    _rank = 0
    deconv_fallback = True
    deconv_constant_weights = False

    def deconv_repack(self):
        """Forgets the packed weights (after writes that bypass the version counter)."""
        self._deconv_state()["packed"] = {}

    def _deconv_state(self):
        state = _STATES.get(self)
        if state is None:
            state = {"plans": {}, "packed": {}}
            _STATES[self] = state
        return state

    def _why_not_deconv(self, input):
        if torch.is_grad_enabled() and (input.requires_grad or any(
                p is not None and p.requires_grad for p in (self.weight, self.bias))):
            return "autograd needs a graph (run under torch.no_grad() or torch.inference_mode())"
        if input.device.type != "cpu":
            return f"the input is on {input.device}; deconv's torch modules run CPU tensors"
        if input.dtype != self.weight.dtype:
            return f"the input is {input.dtype} and the weight {self.weight.dtype}"
        if input.dtype not in _BUILT:
            return f"this build has no {input.dtype} kernels"
        if self._rank not in _RANKS:
            return f"this build has no {self._rank}D kernels"
        if input.dim() not in (self._rank + 1, self._rank + 2):
            return f"the input has {input.dim()} axes, not {self._rank + 2} (or {self._rank + 1} unbatched)"
        return ""

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {type(self).__name__}")
        reason = self._why_not_deconv(input)
        self.__dict__["deconv_last_reason"] = reason  # (nn.Module.__setattr__ costs 2 us a call)
        if reason:
            if not self.deconv_fallback:
                raise deconv.UnsupportedError(f"{type(self).__name__} cannot run on deconv: {reason}")
            return super().forward(input, output_size)
        unbatched = input.dim() == self._rank + 1
        x = input[None] if unbatched else input
        output_padding = self._output_padding(x, output_size, self.stride, self.padding, self.kernel_size,
                                              self._rank, self.dilation)
        state = self._deconv_state()
        key = (tuple(x.shape), x.dtype, tuple(output_padding))
        plan = state["plans"].get(key)
        if plan is None:
            plan = deconv.Plan.conv_transpose(list(x.shape), list(self.weight.shape), x.dtype, self.stride,
                                              self.padding, output_padding, self.groups, self.dilation)
            state["plans"][key] = plan
        weight = self.weight.detach()
        if self.deconv_constant_weights:
            try:
                version = weight._version
            except RuntimeError:  # an inference tensor: no version counter (constant by contract)
                version = None
            packed_key = (key, weight.data_ptr(), version)
            packed = state["packed"].get(packed_key)
            if packed is None:
                state["packed"] = {k: v for k, v in state["packed"].items() if k[0] != key}
                packed = plan.pack_filter(weight)
                state["packed"][packed_key] = packed
            out = plan.run(x.detach(), packed)
        else:
            out = plan.run(x.detach(), weight)
        if self.bias is not None:
            out.add_(self.bias.detach().reshape([1, -1] + [1] * self._rank))
        return out[0] if unbatched else out


class ConvTranspose1d(_DeconvForward, torch.nn.ConvTranspose1d):
    _rank = 1


class ConvTranspose2d(_DeconvForward, torch.nn.ConvTranspose2d):
    _rank = 2


class ConvTranspose3d(_DeconvForward, torch.nn.ConvTranspose3d):
    _rank = 3


_SWAPS = {
    torch.nn.ConvTranspose1d: ConvTranspose1d,
    torch.nn.ConvTranspose2d: ConvTranspose2d,
    torch.nn.ConvTranspose3d: ConvTranspose3d,
}


def swap_conv_transpose(model, constant_weights=False):
    """Replaces every torch.nn.ConvTranspose{1,2,3}d in `model` (in place, recursively) by
    deconv's module of the same configuration, sharing its parameters; `constant_weights` sets
    their deconv_constant_weights. Returns the model and the number of modules swapped."""
    count = 0
    if type(model) in _SWAPS:
        return _swapped(model, constant_weights), 1
    for name, child in list(model.named_children()):
        if type(child) in _SWAPS:
            setattr(model, name, _swapped(child, constant_weights))
            count += 1
        else:
            count += swap_conv_transpose(child, constant_weights)[1]
    return model, count


def _swapped(module, constant_weights):
    new = _SWAPS[type(module)].__new__(_SWAPS[type(module)])
    new.__dict__.update(module.__dict__)  # the same parameters, buffers, hooks and settings
    new.deconv_constant_weights = constant_weights
    return new
