"""Tensors of the caller's framework: dtype names, output allocation, and exportable views.

deconv reads every tensor in place (DLPack, else the buffer protocol, in the extension). What
this module adds is the framework side: an output allocated with the input's framework, dtype
and device, so that torch in gives torch out and numpy in gives numpy out.
"""

import sys

# deconv's dtype names and the names numpy and torch give the same types.
_DTYPE_NAMES = {
    "f32": "f32", "float32": "f32", "float": "f32",
    "f16": "f16", "float16": "f16", "half": "f16",
    "bf16": "bf16", "bfloat16": "bf16",
    "f64": "f64", "float64": "f64", "double": "f64",
    "i8": "i8", "int8": "i8",
    "u8": "u8", "uint8": "u8",
    "i32": "i32", "int32": "i32",
}

FLOAT_DTYPES = ("f32", "f16", "bf16", "f64")


def dtype_name(dtype):
    """deconv's name ("f32", ...) of a dtype given as that name, a numpy or a torch dtype."""
    text = dtype if isinstance(dtype, str) else str(dtype)
    if text.startswith("torch."):
        text = text[len("torch."):]
    name = _DTYPE_NAMES.get(text)
    if name is None and not isinstance(dtype, str):
        try:
            import numpy
            name = _DTYPE_NAMES.get(numpy.dtype(dtype).name)
        except TypeError:
            name = None
    if name is None:
        from ._deconv import InvalidArgumentError
        raise InvalidArgumentError(
            f"dtype {dtype!r} is not one deconv runs; it takes f32, f16, bf16, f64, i8, u8 and i32")
    return name


def _torch_of(x):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return torch
    return None


def _is_jax(x):
    return type(x).__module__.split(".")[0] in ("jax", "jaxlib")


def exportable(x):
    """`x`, readable in place: a torch tensor that requires grad is detached (the same memory;
    deconv computes no gradients). A torch tensor with its lazy negation bit set (torch exports
    its memory, not its values) is resolved into a new tensor: the one copy deconv makes."""
    if _torch_of(x) is not None:
        if x.requires_grad:
            x = x.detach()
        if x.is_neg():
            x = x.resolve_neg()
    return x


def check_output(out):
    """Refuses an output deconv cannot write as the caller sees it (before anything runs)."""
    if out is not None and _torch_of(out) is not None and out.is_neg():
        from ._deconv import InvalidArgumentError
        raise InvalidArgumentError("out is a torch tensor with its negation bit set (a lazy negated view): "
                                   "deconv would write its memory, not its values; pass a plain tensor")


def add_batch_axis(x):
    """x[None]: a leading axis of one, the same memory; buffer-protocol objects through numpy."""
    try:
        return x[None]
    except TypeError:
        import numpy
        return numpy.asarray(x)[None]


def shape_of(x, what):
    try:
        return [int(n) for n in x.shape]
    except (AttributeError, TypeError):
        from ._deconv import InvalidArgumentError
        raise InvalidArgumentError(
            f"{what} is a {type(x).__name__}, not a tensor: deconv reads numpy arrays, torch tensors "
            "and anything with __dlpack__ or the buffer protocol") from None


def empty_like(ref, shape):
    """An uninitialised tensor of `shape` in `ref`'s framework, dtype and device. Inputs that are
    neither torch nor numpy get a numpy array (converted back by finish())."""
    torch = _torch_of(ref)
    if torch is not None:
        return torch.empty(shape, dtype=ref.dtype, device=ref.device)
    import numpy
    return numpy.empty(shape, dtype=numpy.asarray(ref).dtype if not _is_jax(ref) else ref.dtype)


def finish(ref, out):
    """The output as the caller's framework holds it: JAX arrays are immutable, so a JAX input's
    result (computed into numpy) becomes a JAX array; everything else is returned as it is."""
    if _is_jax(ref):
        import jax.numpy
        return jax.numpy.asarray(out)
    return out


def check_bias(bias, input, channels):
    """Refuses a bias that add_bias could not add to an output of `channels` channels computed
    from `input`: a tensor deconv reads, on the input's device, of the input's dtype, shape
    [channels], and a float dtype (checked before the kernel runs, so that out stays untouched)."""
    from ._deconv import InvalidArgumentError, UnsupportedError, _view_info
    info = _view_info(bias, what="bias")  # a tensor deconv reads, or InvalidArgumentError
    dtype = _view_info(input, what="input")["dtype"]
    if dtype not in FLOAT_DTYPES:
        raise UnsupportedError(
            f"bias with dtype {dtype}: the integer dtypes saturate on store, so a bias added after "
            "the kernel would round differently; pass bias=None")
    if info["dtype"] != dtype:
        raise InvalidArgumentError(f"bias has dtype {info['dtype']} but the input has {dtype}")
    if info["shape"] != [channels]:
        raise InvalidArgumentError(f"bias has shape {info['shape']}, but the output has {channels} "
                                   f"channels: it needs [{channels}]")
    in_torch, bias_torch = _torch_of(input) is not None, _torch_of(bias) is not None
    if in_torch and bias_torch and bias.device != input.device:
        raise InvalidArgumentError(f"bias is on {bias.device} but the input on {input.device}")


def add_bias(out, bias, channel_axis):
    """out += bias along `channel_axis`, in out's framework, in place (check_bias passed)."""
    shape = [1] * len(out.shape)
    shape[channel_axis] = -1
    torch = _torch_of(out)
    if torch is not None:
        b = bias if isinstance(bias, torch.Tensor) else torch.as_tensor(bias)
        out.add_(b.to(dtype=out.dtype, device=out.device).reshape(shape))
    else:
        import numpy
        out += numpy.asarray(bias).astype(out.dtype, copy=False).reshape(shape)
