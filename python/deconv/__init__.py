"""deconv: grouped transposed convolution from ahead-of-time compiled Halide kernels.

Tensors go in and out without copies: numpy arrays, torch tensors and anything with
``__dlpack__`` (else the buffer protocol) are read in place, strided views included, and the
result is written into ``out=`` or into a new tensor of the input's framework, dtype and device.

Two families of functions:

* PyTorch's: ``conv_transpose1d/2d/3d(input, weight, bias=None, stride=1, padding=0,
  output_padding=0, groups=1, dilation=1, out=None)``, weight ``[C_in, C_out/groups, K..]``;
  ``deconv.torch`` has the ``torch.nn`` modules.
* The specs': ``group_convolution_backprop_data``, ``convolution_backprop_data`` and
  ``group_convolution`` (OpenVINO), ``convolution_backward_data`` (oneDNN Graph), with the specs'
  attribute names and optional output shape input.

``Plan`` validates and resolves a layer once and runs it many times. Errors are
``deconv.Error`` subclasses that are also ValueError (InvalidArgumentError),
NotImplementedError (UnsupportedError), MemoryError (TooLargeError) or RuntimeError
(KernelError); each message names the offending value. Kernels run without the GIL, and every
function may be called from several threads at once.
"""

import operator

from . import _deconv
from ._deconv import (  # noqa: F401  (the public API)
    Attributes,
    Error,
    InvalidArgumentError,
    KernelError,
    PackedFilter,
    ShapeInfo,
    TooLargeError,
    TuneResult,
    UnsupportedError,
    built_cpu_variants,
    built_ranks,
    clear_schedules,
    cpu_threads,
    cpu_variant,
    cuda_available,
    cuda_unavailable_reason,
    load_schedules,
    schedule_knob_values,
    schedule_knobs,
    set_cpu_threads,
)
from ._tensors import add_bias as _add_bias
from ._tensors import add_batch_axis as _add_batch_axis
from ._tensors import check_bias as _check_bias
from ._tensors import check_output as _check_output
from ._tensors import dtype_name
from ._tensors import empty_like as _empty_like
from ._tensors import exportable as _exportable
from ._tensors import finish as _finish
from ._tensors import shape_of as _shape_of

__version__ = _deconv.version()

_GROUP_BACKPROP = "GroupConvolutionBackpropData"


def built_dtypes(device="cpu"):
    """The dtypes this build has kernels for on `device` ("cpu" or "cuda"), as deconv's names."""
    return _deconv.built_dtypes(device)


def has_kernel(op, rank, dtype, data_format="ncx", device="cpu"):
    """Whether this build has the kernel `op` runs on for that rank, dtype, layout and device."""
    return _deconv.has_kernel(op, rank, dtype_name(dtype), data_format, device)


def _exec(device="cpu", allow_cpu_fallback=False, schedule="", use_schedule_database=True, algorithm="direct"):
    return _deconv._Exec(device=device, allow_cpu_fallback=allow_cpu_fallback, schedule=schedule,
                         use_schedule_database=use_schedule_database, algorithm=algorithm)


def _integers(value, name, what):
    """`value`'s items as ints: integers only (operator.index), never floats or digit strings."""
    if isinstance(value, (str, bytes)):
        raise InvalidArgumentError(f"{name} is {value!r}, not {what}")
    try:
        return [operator.index(v) for v in value]
    except TypeError:
        raise InvalidArgumentError(f"{name} is {value!r}, not {what}") from None


def _list(value, name):
    """A spec attribute: None (the spec's default) or one integer per spatial axis."""
    if value is None:
        return []
    if isinstance(value, int):
        raise InvalidArgumentError(f"{name} is {value}, but the spec functions take one value per "
                                   f"spatial axis, e.g. {name}=[{value}, {value}]")
    return _integers(value, name, "a list of integers")


def _attributes(strides=None, pads_begin=None, pads_end=None, dilations=None, output_padding=None,
                auto_pad="explicit", data_format=None, groups=None, weights_format=None, dst_shape=None):
    return Attributes(strides=_list(strides, "strides"), pads_begin=_list(pads_begin, "pads_begin"),
                      pads_end=_list(pads_end, "pads_end"), dilations=_list(dilations, "dilations"),
                      output_padding=_list(output_padding, "output_padding"), auto_pad=auto_pad,
                      data_format=data_format, groups=groups, weights_format=weights_format,
                      dst_shape=None if dst_shape is None else _list(dst_shape, "dst_shape"))


def infer_shape(op, input_shape, filter_shape, *, output_shape=None, **attributes):
    """Shape inference per the op's spec: a ShapeInfo with the output shape and resolved pads.
    `attributes` are those of the spec functions (strides, pads_begin, ..., data_format)."""
    return _deconv.infer_shape(op, list(input_shape), list(filter_shape), _attributes(**attributes),
                               None if output_shape is None else _list(output_shape, "output_shape"))


# ---------------------------------------------------------------- running

def _run(op, data, filter, out, attrs, output_shape, exec_options, filter_shape=None, filter_groups=0):
    data, filter = _exportable(data), _exportable(filter)
    _check_output(out)
    result = out
    if out is None:  # (with out, the run's own shape inference checks it)
        if filter_shape is None:
            filter_shape = _shape_of(filter, "filter")
        info = _deconv.infer_shape(op, _shape_of(data, "input"), filter_shape, attrs, output_shape)
        result = _empty_like(data, info.output_shape)
    _deconv._run(op, data, filter, result, attrs, output_shape, exec_options, filter_groups)
    return result if out is not None else _finish(data, result)


def _spec_op(op, data, filter, output_shape, out, exec_kwargs, **attributes):
    attrs = _attributes(**attributes)
    shape = None if output_shape is None else _list(output_shape, "output_shape")
    return _run(op, data, filter, out, attrs, shape, _exec(**exec_kwargs))


def group_convolution_backprop_data(data, filter, output_shape=None, *, strides=None, pads_begin=None,
                                    pads_end=None, dilations=None, output_padding=None, auto_pad="explicit",
                                    data_format=None, out=None, **exec_kwargs):
    """OpenVINO GroupConvolutionBackpropData-1: data [N, G*C_IN, X..] (or [N, X.., C] with
    data_format="nxc"), filter [G, C_IN, C_OUT, K..] -> [N, G*C_OUT, Y..]. `output_shape` is the
    op's optional spatial output shape input. exec_kwargs: device, allow_cpu_fallback, schedule,
    use_schedule_database, algorithm (as Plan's)."""
    return _spec_op(_GROUP_BACKPROP, data, filter, output_shape, out, exec_kwargs, strides=strides,
                    pads_begin=pads_begin, pads_end=pads_end, dilations=dilations,
                    output_padding=output_padding, auto_pad=auto_pad, data_format=data_format)


def convolution_backprop_data(data, filter, output_shape=None, *, strides=None, pads_begin=None, pads_end=None,
                              dilations=None, output_padding=None, auto_pad="explicit", data_format=None,
                              out=None, **exec_kwargs):
    """OpenVINO ConvolutionBackpropData-1: data [N, C_IN, X..], filter [C_IN, C_OUT, K..]."""
    return _spec_op("ConvolutionBackpropData", data, filter, output_shape, out, exec_kwargs, strides=strides,
                    pads_begin=pads_begin, pads_end=pads_end, dilations=dilations,
                    output_padding=output_padding, auto_pad=auto_pad, data_format=data_format)


def group_convolution(data, filter, *, strides=None, pads_begin=None, pads_end=None, dilations=None,
                      auto_pad="explicit", data_format=None, out=None, **exec_kwargs):
    """OpenVINO GroupConvolution-1 (forward): data [N, G*C_IN, X..], filter [G, C_OUT, C_IN, K..]."""
    return _spec_op("GroupConvolution", data, filter, None, out, exec_kwargs, strides=strides,
                    pads_begin=pads_begin, pads_end=pads_end, dilations=dilations, auto_pad=auto_pad,
                    data_format=data_format)


def convolution_backward_data(diff_dst, weights, dst_shape=None, *, strides=None, pads_begin=None, pads_end=None,
                              dilations=None, output_padding=None, auto_pad="explicit", groups=1,
                              weights_format="xio", data_format="nxc", out=None, **exec_kwargs):
    """oneDNN Graph ConvolutionBackwardData: diff_dst [N, X.., OC] (data_format="nxc", the
    default) or [N, OC, X..] ("ncx"), weights XIO [K.., IC/groups, OC] (the default) or OIX
    [OC, IC/groups, K..] -> diff_src. `dst_shape` is the op's optional full diff_src shape."""
    return _spec_op("ConvolutionBackwardData", diff_dst, weights, dst_shape, out, exec_kwargs, strides=strides,
                    pads_begin=pads_begin, pads_end=pads_end, dilations=dilations,
                    output_padding=output_padding, auto_pad=auto_pad, data_format=data_format, groups=groups,
                    weights_format=weights_format)


# ---------------------------------------------------------------- PyTorch's arguments

def _per_axis(value, rank, name):
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{name} is {value!r}, not an integer or {rank} integers")
    if isinstance(value, int):
        return [value] * rank
    values = _integers(value, name, f"an integer or {rank} integers")
    if len(values) == 1:
        return values * rank
    if len(values) != rank:
        raise InvalidArgumentError(f"{name} is {value!r}: it needs 1 or {rank} values for a {rank}D layer")
    return values


def _torch_attributes(rank, stride, padding, output_padding, dilation):
    s = _per_axis(stride, rank, "stride")
    p = _per_axis(padding, rank, "padding")
    op = _per_axis(output_padding, rank, "output_padding")
    d = _per_axis(dilation, rank, "dilation")
    for i in range(rank):
        # PyTorch's rule (torch.nn.ConvTranspose): beyond it, the extra rows would take no input.
        if op[i] >= max(s[i], d[i]) or op[i] < 0:
            raise InvalidArgumentError(
                f"output_padding[{i}] is {op[i]}, but it must be at least 0 and smaller than stride[{i}] "
                f"({s[i]}) or dilation[{i}] ({d[i]})")
    return Attributes(strides=s, pads_begin=p, pads_end=p, dilations=d, output_padding=op)


def _torch_filter_shape(weight_shape, groups, rank):
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise InvalidArgumentError(f"groups is {groups!r}, but it must be an integer of at least 1")
    if len(weight_shape) != rank + 2:
        raise InvalidArgumentError(
            f"weight has shape {weight_shape}, but a {rank}D transposed convolution takes "
            f"[C_in, C_out/groups, {', '.join('K' + str(i + 1) for i in range(rank))}]")
    if weight_shape[0] % groups != 0:
        raise InvalidArgumentError(
            f"weight has {weight_shape[0]} input channels (axis 0 of {weight_shape}), not divisible by "
            f"groups={groups}")
    return [groups, weight_shape[0] // groups] + list(weight_shape[1:])


def _conv_transpose(rank, input, weight, bias, stride, padding, output_padding, groups, dilation, out,
                    exec_kwargs):
    input, weight = _exportable(input), _exportable(weight)
    in_shape = _shape_of(input, "input")
    unbatched = len(in_shape) == rank + 1
    given_out = out
    if unbatched:  # PyTorch's unbatched form [C, X..]: a batch of one, the same memory
        input = _add_batch_axis(input)
        if out is not None:
            out = _add_batch_axis(out)
    attrs = _torch_attributes(rank, stride, padding, output_padding, dilation)
    filter_shape = _torch_filter_shape(_shape_of(weight, "weight"), groups, rank)
    if bias is not None:  # checked before the kernel writes anything
        bias = _exportable(bias)
        _check_bias(bias, input, filter_shape[0] * filter_shape[2])
    result = _run(_GROUP_BACKPROP, input, weight, out, attrs, None, _exec(**exec_kwargs), filter_shape, groups)
    if bias is not None:
        _add_bias(result, bias, 1)
    if given_out is not None:
        return given_out
    return result[0] if unbatched else result


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                     out=None, **exec_kwargs):
    """torch.nn.functional.conv_transpose1d: input [N, C_in, L] (or [C_in, L]), weight
    [C_in, C_out/groups, K]. `out`, when given, receives the result (and is returned)."""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation, out,
                           exec_kwargs)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                     out=None, **exec_kwargs):
    """torch.nn.functional.conv_transpose2d: input [N, C_in, H, W], weight [C_in, C_out/groups, KH, KW]."""
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation, out,
                           exec_kwargs)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                     out=None, **exec_kwargs):
    """torch.nn.functional.conv_transpose3d: input [N, C_in, D, H, W], weight [C_in, C_out/groups, KD, KH, KW]."""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation, out,
                           exec_kwargs)


# ---------------------------------------------------------------- plans

class Plan:
    """A layer validated and resolved once, then run many times (the C++ deconv::Plan).

    ``Plan(op, dtype, input_shape, filter_shape, output_shape=None, *, strides=..., ...,
    device="cpu", allow_cpu_fallback=False, schedule="", use_schedule_database=True,
    algorithm="direct")`` takes the spec functions' attributes; ``Plan.conv_transpose`` takes
    PyTorch's arguments and weight layout. ``run(input, filter, out=None)`` accepts the filter
    itself or the PackedFilter of ``pack_filter(filter)`` (constant weights, packed once).
    """

    def __init__(self, op, dtype, input_shape, filter_shape, output_shape=None, *, strides=None, pads_begin=None,
                 pads_end=None, dilations=None, output_padding=None, auto_pad="explicit", data_format=None,
                 groups=None, weights_format=None, **exec_kwargs):
        attrs = _attributes(strides=strides, pads_begin=pads_begin, pads_end=pads_end, dilations=dilations,
                            output_padding=output_padding, auto_pad=auto_pad, data_format=data_format,
                            groups=groups, weights_format=weights_format)
        shape = None if output_shape is None else _list(output_shape, "output_shape")
        self._init(op, dtype, input_shape, filter_shape, attrs, shape, exec_kwargs, 0, None)

    def _init(self, op, dtype, input_shape, filter_shape, attrs, output_shape, exec_kwargs, filter_groups,
              weight_shape):
        self._plan = _deconv._Plan(op, dtype_name(dtype), [int(n) for n in input_shape],
                                   [int(n) for n in filter_shape], attrs, output_shape, _exec(**exec_kwargs))
        self._filter_groups = filter_groups
        self._weight_shape = weight_shape

    @classmethod
    def conv_transpose(cls, input_shape, weight_shape, dtype="f32", stride=1, padding=0, output_padding=0, groups=1,
                       dilation=1, **exec_kwargs):
        """A plan for PyTorch's conv_transpose{1,2,3}d on batched input [N, C_in, X..] and weight
        [C_in, C_out/groups, K..]; its run() and pack_filter() take the weight in that layout."""
        rank = len(input_shape) - 2
        if rank not in (1, 2, 3):
            raise InvalidArgumentError(f"input_shape {list(input_shape)} is not [N, C_in, X..] with 1 to 3 "
                                       "spatial axes")
        attrs = _torch_attributes(rank, stride, padding, output_padding, dilation)
        weight_shape = [int(n) for n in weight_shape]
        filter_shape = _torch_filter_shape(weight_shape, groups, rank)
        plan = cls.__new__(cls)
        plan._init(_GROUP_BACKPROP, dtype, input_shape, filter_shape, attrs, None, exec_kwargs, groups, weight_shape)
        return plan

    @property
    def shape(self):
        """The ShapeInfo: output shape and the resolved pads."""
        return self._plan.shape

    @property
    def output_shape(self):
        return list(self._plan.output_shape)

    @property
    def input_shape(self):
        return list(self._plan.input_shape)

    @property
    def filter_shape(self):
        """The filter shape run() takes: the spec's, or PyTorch's weight shape for conv_transpose plans."""
        return list(self._weight_shape or self._plan.filter_shape)

    @property
    def dtype(self):
        return self._plan.dtype

    @property
    def op(self):
        return self._plan.op

    @property
    def device(self):
        """Where the kernels run ("cpu" after a CUDA request fell back)."""
        return self._plan.device

    @property
    def fallback_reason(self):
        return self._plan.fallback_reason

    @property
    def macs(self):
        return self._plan.macs

    def describe(self):
        """One line: the layer, device, CPU variant, kernels and steps, and the policy's source."""
        return self._plan.describe()

    def __repr__(self):
        return f"deconv.Plan({self.describe()})"

    def pack_filter(self, filter):
        """The filter packed once into the layout this plan's kernels read (a PackedFilter)."""
        return self._plan._pack_filter(_exportable(filter), self._filter_groups)

    def run(self, input, filter, out=None):
        """Runs the layer; returns `out`, or a new tensor of the input's framework."""
        input = _exportable(input)
        _check_output(out)
        result = _empty_like(input, self._plan.output_shape) if out is None else out
        if isinstance(filter, PackedFilter):
            self._plan._run_packed(input, filter, result)
        else:
            self._plan._run(input, _exportable(filter), result, self._filter_groups)
        return result if out is not None else _finish(input, result)


# ---------------------------------------------------------------- tuning

def tune_layer(op, dtype, input_shape, filter_shape, output_shape=None, *, max_seconds=20.0, repeats=0,
               algorithm="direct", **attributes):
    """Searches the layer's dispatch policy on this machine (deconv::tune_layer): a TuneResult."""
    return _deconv.tune_layer(op, dtype_name(dtype), list(input_shape), list(filter_shape),
                              _attributes(**attributes),
                              None if output_shape is None else _list(output_shape, "output_shape"),
                              max_seconds, repeats, algorithm)


def save_schedule(path, op, dtype, input_shape, filter_shape, result, output_shape=None, *, name="", **attributes):
    """Records a tune_layer result in the schedule database at `path` (created if missing)."""
    _deconv.save_schedule(path, op, dtype_name(dtype), list(input_shape), list(filter_shape),
                          _attributes(**attributes),
                          None if output_shape is None else _list(output_shape, "output_shape"), result, name)
