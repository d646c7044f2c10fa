"""Which torch calls of a task's ``forward`` a PyPTO kernel can express, and how.

The import records every torch function ``Model.forward`` calls (a ``TorchFunctionMode`` in the probe child)
and looks each up here. A call with a route is fine (the route is what a designer would use: a PyPTO op or a
short composition of PyPTO ops that the emulator implements, see ``runtime.emulator.OPS``); a call listed in
:data:`NO_EQUIVALENT` makes the task not importable, with that reason; a call in neither table is reported as
unknown (the import still fails: it cannot tell whether PyPTO can express it). Shape and dtype plumbing
(``view``, ``size``, ``float``, ``contiguous`` ...) needs no kernel op.
"""

from __future__ import annotations

__all__ = ["NO_EQUIVALENT", "PLUMBING", "ROUTES", "WINDOW_ROUTES", "classify"]

PLUMBING = frozenset({
    "size", "dim", "shape", "T", "mT", "dtype", "device", "is_contiguous", "contiguous", "numel", "__len__",
    "float", "to", "bfloat16", "half", "type", "detach", "clone", "item", "__getitem__", "__setitem__",
    "__bool__", "__index__", "__int__", "__float__", "__iter__", "__format__", "unbind", "ndim", "requires_grad",
    "data", "_version", "is_floating_point", "element_size", "cpu", "tolist", "long", "int", "double",
    "is_nested",
})
"""Calls that move, re-type or inspect tensors without computing (free in a kernel, or a cast/view)."""

_TAP = ("a pypto.view of the input at the tap's offset (a stride: pypto.reshape of the view into [n, stride] + "
        "pypto.view of column 0; dilation: the offset times it; padding: pypto.concat with {pad} on both sides)")
WINDOW_ROUTES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("conv1d", "conv2d", "conv3d"),
     "a sum over the kernel's taps: per tap " + _TAP.format(pad="zeros") + ", pypto.permute / pypto.reshape to "
     "[positions, C_in / groups] and pypto.matmul with the weight's tap [C_in / groups, C_out / groups], per group "
     "(depthwise: a pypto.mul by the tap's per-channel weight), accumulated with pypto.add (+ the bias) - pypto.conv "
     "itself is experimental and not emulated"),
    (("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
     "a sum over the kernel's taps: per tap pypto.matmul of the input [positions, C_in / groups] with the weight's "
     "tap [C_in / groups, C_out / groups], spread to every stride-th output position (pypto.concat with zeros + "
     "pypto.reshape) and added at the tap's offset (pypto.pad / pypto.concat with zeros; padding crops with "
     "pypto.view, output_padding pads), + the bias"),
    (tuple(f"max_pool{n}d{tail}" for n in (1, 2, 3) for tail in ("", "_with_indices")),
     "a running pypto.maximum over the window's taps: per tap " + _TAP.format(pad="-inf") + " (the indices, when "
     "returned, carried with pypto.where; ceil_mode: the last window padded with -inf)"),
    (("avg_pool1d", "avg_pool2d", "avg_pool3d"),
     "a pypto.add over the window's taps: per tap " + _TAP.format(pad="zeros") + ", divided by the kernel's size "
     "(count_include_pad=False or ceil_mode: by the taps inside the input, a constant tensor of the shapes)"),
    (tuple(f"adaptive_{kind}_pool{n}d" for kind in ("avg", "max") for n in (1, 2, 3)),
     "per output position a pypto.view of its window (start floor(i * L / out), end ceil((i + 1) * L / out)) and "
     "pypto.sum / n or pypto.amax over it, pypto.concat of the results (output size 1: a mean / max over the axes)"),
    (("unfold", "im2col"),
     "pypto.concat of the windows' taps: per tap " + _TAP.format(pad="zeros") + " (Tensor.unfold: step through "
     "pypto.reshape + pypto.view)"),
)
"""Round 12 (session 46): calls over sliding windows - convolutions, transposed convolutions, pooling and ``unfold``
with any stride, padding, dilation or groups - as a sum / maximum over the window's taps, each tap a view of the
input at an offset. Windows that tile the input (stride = kernel, no padding) have a shorter route too, a reshape
into the windows (the importer's ``TILED_*``, round 4 and 11)."""

_COMPOSED: tuple[tuple[str, str], ...] = (
    # products
    ("dot", "pypto.mul + pypto.sum (a 0-d result)"), ("vdot", "pypto.mul + pypto.sum (a 0-d result)"),
    ("inner", "pypto.matmul(b_trans=True) over the last axes (vectors: pypto.mul + pypto.sum)"),
    ("mv", "pypto.matmul with the vector as a [K, 1] column (pypto.reshape)"),
    ("addmv", "pypto.matmul with the vector as a [K, 1] column + pypto.mul (alpha, beta) + pypto.add"),
    ("addr", "pypto.mul with a broadcast (the outer product) + pypto.mul (alpha, beta) + pypto.add"),
    ("addbmm", "pypto.matmul (3-D) + pypto.sum over the batch + pypto.mul (alpha, beta) + pypto.add"),
    ("tensordot", "pypto.permute / pypto.reshape of the contracted axes + pypto.matmul"),
    ("chain_matmul", "successive pypto.matmul"), ("linalg_multi_dot", "successive pypto.matmul"),
    ("trace", "pypto.gather of the diagonal + pypto.sum"),
    ("kron", "pypto.mul with a broadcast over interleaved axes (pypto.reshape) + pypto.reshape"),
    # activations and elementwise compositions
    ("glu", "pypto.view of the two halves of the axis + pypto.sigmoid of the second + pypto.mul"),
    ("prelu", "pypto.prelu (x where x > 0, else weight * x; the weight per channel, axis 1)"),
    ("rrelu", "pypto.lrelu with the slope (lower + upper) / 2 (eval mode; in training mode the slopes are random)"),
    ("softshrink", "pypto.where(pypto.abs(x) > lambd, x - pypto.sign(x) * lambd, 0)"),
    ("hardshrink", "pypto.where(pypto.abs(x) > lambd, x, 0)"), ("tanhshrink", "x - pypto.tanh(x)"),
    ("threshold", "pypto.where(x > threshold, x, value)"),
    ("logit", "pypto.log(x / (1 - x)) (eps: pypto.clip first)"),
    ("lerp", "start + weight * (end - start): pypto.sub, pypto.mul, pypto.add"),
    ("addcmul", "pypto.mul (value * t1 * t2) + pypto.add"), ("addcdiv", "pypto.div, pypto.mul (value) + pypto.add"),
    ("xlogy", "pypto.where(x == 0, 0, x * pypto.log(y))"), ("hypot", "pypto.hypot"), ("atan2", "pypto.atan2"),
    ("tan", "pypto.tan"), ("sinh", "pypto.sinh"), ("cosh", "pypto.cosh"), ("asin", "pypto.asin"),
    ("acos", "pypto.acos"), ("atan", "pypto.atan"), ("asinh", "pypto.asinh"), ("acosh", "pypto.acosh"),
    ("atanh", "pypto.atanh"), ("erfc", "pypto.erfc"), ("exp2", "pypto.exp2"), ("log2", "pypto.log2"),
    ("log10", "pypto.log10"), ("trunc", "pypto.trunc"), ("frac", "x - pypto.trunc(x)"),
    ("copysign", "pypto.copysign"), ("signbit", "pypto.signbit"), ("isfinite", "pypto.isfinite"),
    ("isinf", "pypto.eq(pypto.abs(x), inf)"), ("nan_to_num", "pypto.where over pypto.isnan / pypto.isfinite"),
    # reductions that pick or count
    ("any", "pypto.amax of pypto.ne(x, 0) (a bool result)"), ("all", "pypto.amin of pypto.ne(x, 0) (a bool result)"),
    ("count_nonzero", "pypto.sum of pypto.ne(x, 0) (an int64 result)"),
    ("aminmax", "pypto.amin and pypto.amax"), ("var_mean", "pypto.var and pypto.sum / n"),
    ("std_mean", "pypto.sqrt(pypto.var) and pypto.sum / n"),
    ("median", "pypto.sort + pypto.view of element (n - 1) // 2 (the index: that position of pypto.argsort)"),
    ("nanmedian", "pypto.sort + pypto.view of element (n - 1) // 2 (no NaN in the inputs)"),
    ("kthvalue", "pypto.sort + pypto.view of element k - 1 (the index: that position of pypto.argsort), or "
                 "pypto.topk(k, largest=False) and its last"),
    ("quantile", "pypto.sort + pypto.view of the two neighbouring order statistics + their linear interpolation "
                 "(pypto.sub, pypto.mul, pypto.add)"),
    ("diff", "pypto.sub of two pypto.view slices of the axis, one element apart (n - 1 results)"),
    # norms, losses and rearrangements
    ("local_response_norm", "pypto.mul (x * x) + a pypto.add over the window of neighbouring channels (pypto.concat "
                            "with zeros + pypto.view per tap) + pypto.mul / pypto.add (k, alpha / size) + pypto.pow "
                            "(beta) + pypto.div"),
    ("gaussian_nll_loss", "pypto.maximum(var, eps), pypto.log, pypto.sub, pypto.mul, pypto.div, pypto.sum / n"),
    ("poisson_nll_loss", "log_input: pypto.exp(x) - target * x; else x - target * pypto.log(x + eps); pypto.sum / n"),
    ("cosine_embedding_loss", "mul, sum, sqrt, div (the cosine) + pypto.where on the target + pypto.maximum(., 0) "
                              "+ pypto.sum / n"),
    ("multilabel_soft_margin_loss", "logsigmoid composition (pypto.log1p, pypto.exp), mul, sum / n"),
    ("multi_margin_loss", "pypto.gather of the target's score + sub, pypto.maximum(., 0), sum / n"),
    ("pixel_shuffle", "pypto.reshape + pypto.permute + pypto.reshape"),
    ("pixel_unshuffle", "pypto.reshape + pypto.permute + pypto.reshape"),
    ("channel_shuffle", "pypto.reshape + pypto.transpose + pypto.reshape"),
    ("native_channel_shuffle", "pypto.reshape + pypto.transpose + pypto.reshape"),
    ("take_along_dim", "pypto.gather"),
    # the names torch's own functions carry (``F.logsigmoid.__name__`` is "log_sigmoid", ``F.threshold``'s
    # "_threshold"): the probe records a call by that name, so the public spelling alone never matched
    ("log_sigmoid", "-(pypto.maximum(-x, 0) + pypto.log1p(pypto.exp(-pypto.abs(x))))"),
    ("_threshold", "pypto.where(x > threshold, x, value) (F.threshold)"),
    # one step of a recurrent cell (a whole sequence, nn.LSTM / nn.GRU, stays in NO_EQUIVALENT)
    ("lstm_cell", "one step: pypto.matmul(b_trans=True) of x with W_ih and of h with W_hh + pypto.add (the biases), "
                  "pypto.view of the four gates, pypto.sigmoid / pypto.tanh, pypto.mul, pypto.add"),
    ("gru_cell", "one step: pypto.matmul(b_trans=True) of x with W_ih and of h with W_hh + pypto.add (the biases), "
                 "pypto.view of the three gates, pypto.sigmoid / pypto.tanh, pypto.mul, pypto.sub, pypto.add"),
    ("rnn_tanh_cell", "one step: pypto.matmul(b_trans=True) of x and of h + pypto.add (the biases) + pypto.tanh"),
    ("rnn_relu_cell", "one step: pypto.matmul(b_trans=True) of x and of h + pypto.add (the biases) + pypto.relu"),
)
"""Round 13 (session 49): torch calls that are short compositions of ops the emulator implements, which the
import refused as unknown ("knows no PyPTO route": ``torch.dot``, ``F.glu``, ``nn.PReLU``, ``torch.median``,
``nn.LocalResponseNorm``, ``nn.LSTMCell`` ...). One step of a recurrent cell is a matmul and gates; only a whole
sequence (``lstm``, ``gru``, ``rnn_*``) has no route."""

ROUTES: dict[str, str] = {
    # matmul family
    "matmul": "pypto.matmul", "__matmul__": "pypto.matmul", "mm": "pypto.matmul", "bmm": "pypto.matmul (3-D)",
    "linear": "pypto.matmul(b_trans=True) + add", "addmm": "pypto.matmul + add", "baddbmm": "pypto.matmul + add",
    # elementwise arithmetic
    "add": "pypto.add", "__add__": "pypto.add", "__radd__": "pypto.add", "__iadd__": "pypto.add",
    "sub": "pypto.sub", "__sub__": "pypto.sub", "__rsub__": "pypto.sub", "__isub__": "pypto.sub",
    "mul": "pypto.mul", "__mul__": "pypto.mul", "__rmul__": "pypto.mul", "__imul__": "pypto.mul",
    "div": "pypto.div", "__truediv__": "pypto.div", "__rtruediv__": "pypto.div", "__itruediv__": "pypto.div",
    "__floordiv__": "pypto.floor_div", "__mod__": "pypto.remainder", "remainder": "pypto.remainder",
    "pow": "pypto.pow", "__pow__": "pypto.pow", "__rpow__": "pypto.pow", "square": "pypto.mul",
    "neg": "pypto.neg", "__neg__": "pypto.neg", "abs": "pypto.abs", "reciprocal": "pypto.reciprocal",
    "maximum": "pypto.maximum", "minimum": "pypto.minimum", "clamp": "pypto.clip", "clip": "pypto.clip",
    "clamp_min": "pypto.maximum", "clamp_max": "pypto.minimum", "min": "pypto.amin / pypto.minimum",
    "max": "pypto.amax / pypto.maximum",
    # unary math and activations
    "exp": "pypto.exp", "log": "pypto.log", "log1p": "pypto.log1p", "sqrt": "pypto.sqrt", "rsqrt": "pypto.rsqrt",
    "tanh": "pypto.tanh", "sigmoid": "pypto.sigmoid", "erf": "pypto.erf", "sin": "pypto.sin", "cos": "pypto.cos",
    "relu": "pypto.relu", "hardtanh": "pypto.clip", "gelu": "erf/tanh composition (pypto.erf, pypto.tanh)",
    "silu": "x * pypto.sigmoid(x)", "mish": "x * tanh(log1p(exp(x)))", "softplus": "pypto.log1p(pypto.exp(x))",
    "leaky_relu": "pypto.lrelu", "elu": "pypto.where + pypto.expm1", "selu": "pypto.where + pypto.expm1",
    "sign": "pypto.sign", "floor": "pypto.floor", "ceil": "pypto.ceil", "round": "pypto.round",
    # comparison and selection
    "where": "pypto.where", "masked_fill": "pypto.where", "eq": "pypto.eq", "__eq__": "pypto.eq",
    "ne": "pypto.ne", "__ne__": "pypto.ne", "lt": "pypto.lt", "__lt__": "pypto.lt", "le": "pypto.le",
    "__le__": "pypto.le", "gt": "pypto.gt", "__gt__": "pypto.gt", "ge": "pypto.ge", "__ge__": "pypto.ge",
    "__invert__": "pypto.logical_not", "logical_not": "pypto.logical_not", "bool": "pypto.ne(x, 0)",
    # reductions, scans, sorting
    "sum": "pypto.sum", "mean": "pypto.sum / n", "amax": "pypto.amax", "amin": "pypto.amin", "prod": "pypto.prod",
    "var": "pypto.var", "std": "pypto.sqrt(pypto.var)", "argmax": "pypto.argmax", "argmin": "pypto.argmin",
    "cumsum": "pypto.cumsum", "cumprod": "pypto.cumprod", "topk": "pypto.topk", "sort": "pypto.sort",
    "argsort": "pypto.argsort", "logsumexp": "amax, exp, sum, log",
    "cummax": "a running maximum: log2(n) steps of pypto.maximum with a shifted copy (pypto.concat of a -inf pad and "
              "a view), the indices carried with pypto.where",
    "cummin": "a running minimum: log2(n) steps of pypto.minimum with a shifted copy (pypto.concat of a +inf pad and "
              "a view), the indices carried with pypto.where",
    "logcumsumexp": "pypto.cumsum of exp(x - a running max) + log, or log2(n) steps of a log-add with a shifted copy",
    # composites
    "softmax": "pypto.softmax", "log_softmax": "amax, sub, exp, sum, log", "rms_norm": "pypto.rms_norm",
    "layer_norm": "sum/var composition", "group_norm": "reshape + sum/var composition",
    "batch_norm": "sum/var composition over the batch", "instance_norm": "sum/var composition",
    "normalize": "sum, sqrt, div", "mse_loss": "sub, mul, sum / n", "l1_loss": "sub, abs, sum / n",
    "cross_entropy": "log_softmax composition + gather + sum / n", "nll_loss": "gather + sum / n",
    "kl_div": "log, sub, mul, sum", "smooth_l1_loss": "sub, abs, where, sum", "huber_loss": "sub, abs, where, sum",
    "cosine_similarity": "mul, sum, sqrt, div", "scaled_dot_product_attention": "matmul, softmax, matmul",
    "multi_head_attention_forward": "nn.MultiheadAttention: pypto.matmul(b_trans=True) + add for the q/k/v and "
                                    "output projections, matmul, softmax (+ the mask), matmul",
    # data movement
    "view": "pypto.reshape", "reshape": "pypto.reshape", "flatten": "pypto.reshape", "unsqueeze": "pypto.unsqueeze",
    "squeeze": "pypto.reshape", "transpose": "pypto.transpose", "permute": "pypto.permute", "t": "pypto.transpose",
    "expand": "pypto.expand_clone", "expand_as": "pypto.expand_clone", "repeat": "pypto.expand_clone",
    "repeat_interleave": "pypto.expand_clone + pypto.reshape", "cat": "pypto.concat", "concat": "pypto.concat",
    "stack": "pypto.concat + reshape", "split": "pypto.view", "chunk": "pypto.view", "narrow": "pypto.view",
    "select": "pypto.view", "swapaxes": "pypto.transpose",
    "pad": "pypto.pad (right/bottom, constant; left/top: pypto.concat with pypto.full); mode reflect / replicate / "
           "circular: pypto.concat of pypto.view slices of the border (reflect: reversed with pypto.index_select)",
    "tril": "pypto.tril", "triu": "pypto.triu", "gather": "pypto.gather", "index_select": "pypto.index_select",
    "scatter": "pypto.scatter", "scatter_": "pypto.scatter_", "scatter_add": "pypto.scatter(reduce='add')",
    "index_add": "pypto.index_add", "index_put_": "pypto.index_put_", "one_hot": "pypto.one_hot",
    "index_copy": "pypto.index_put_ of whole slices along the axis (distinct indices)",
    "empty_like": "an output buffer every element of which forward writes (pypto.zeros)",
    "empty": "an output buffer every element of which forward writes (pypto.zeros)",
    "new_empty": "an output buffer every element of which forward writes (pypto.zeros)",
    "zeros_like": "pypto.zeros", "ones_like": "pypto.ones", "full_like": "pypto.full", "zeros": "pypto.zeros",
    "ones": "pypto.ones", "full": "pypto.full", "arange": "pypto.arange", "new_zeros": "pypto.zeros",
    "dropout": "identity (p = 0 or eval mode)",
    # compositions of the ops above (KernelBench level1 activations, norms and losses)
    "hardsigmoid": "pypto.clip(x / 6 + 0.5, 0, 1)", "hardswish": "x * pypto.clip(x / 6 + 0.5, 0, 1)",
    "relu6": "pypto.clip(x, 0, 6)", "softsign": "x / (1 + pypto.abs(x))", "celu": "pypto.where + pypto.expm1",
    "logsigmoid": "-(pypto.maximum(-x, 0) + pypto.log1p(pypto.exp(-pypto.abs(x))))", "softmin": "pypto.softmax(-x)",
    "norm": "p=2 / 'fro': pypto.sqrt(pypto.sum(x * x)); p=1: pypto.sum(pypto.abs(x)); p=inf: "
            "pypto.amax(pypto.abs(x))",
    "linalg_vector_norm": "pypto.sqrt(pypto.sum(x * x)) (ord=2); pypto.sum(pypto.abs(x)) (ord=1); "
                          "pypto.amax(pypto.abs(x)) (ord=inf; -inf: pypto.amin)",
    "frobenius_norm": "pypto.sqrt(pypto.sum(x * x))", "expm1": "pypto.expm1",
    "logical_and": "pypto.logical_and", "bitwise_and": "pypto.bitwise_and", "bitwise_or": "pypto.bitwise_or",
    "isnan": "pypto.isnan", "fmod": "pypto.fmod", "outer": "pypto.mul with a broadcast (a[:, None] * b[None, :])",
    "diag": "vector: pypto.mul with a broadcast (diag(a) @ B = a[:, None] * B); matrix: pypto.gather of the diagonal",
    "flip": "pypto.index_select with a reversed pypto.arange index",
    "roll": "pypto.concat of two pypto.view slices per rolled axis (the last shift elements first; Swin's cyclic "
            "window shift)",
    "pairwise_distance": "sub, mul, sum, sqrt",
    "embedding": "pypto.index_select of the table's rows at the ids (nn.Embedding's weight is a parameter, so an "
                 "input of the kernel; padding_idx only stops its gradient)",
    "einsum": "a contraction: pypto.matmul after pypto.permute / pypto.reshape (or mul + sum over the summed letters)",
    "bincount": "pypto.scatter(reduce='add') of ones into pypto.zeros(minlength) (ids below minlength)",
    "triplet_margin_loss": "pairwise distances (sub, mul, sum, sqrt), sub, pypto.maximum(., 0), sum / n",
    "margin_ranking_loss": "sub, mul, pypto.maximum(., 0), sum / n",
    "hinge_embedding_loss": "pypto.where, pypto.maximum(., 0), sum / n",
    "soft_margin_loss": "pypto.log1p(pypto.exp(-y * x)), sum / n",
    "binary_cross_entropy": "log, mul, sub, sum / n",
    "binary_cross_entropy_with_logits": "sigmoid composition: log1p, exp, mul, sum / n",
    **{op: route for ops, route in WINDOW_ROUTES for op in ops},
    **dict(_COMPOSED),
}
"""torch function name -> the PyPTO route a kernel can take (documentation for the designer)."""

NO_EQUIVALENT: dict[str, str] = {
    "interpolate": "resampling: no PyPTO op", "grid_sample": "resampling: no PyPTO op",
    "fft_fft": "FFT: no PyPTO op", "fft_rfft": "FFT: no PyPTO op",
    "lstm": "recurrent cell with its own weights layout: no PyPTO op", "gru": "recurrent cell: no PyPTO op",
    "rnn_tanh": "recurrent cell (nn.RNN): no PyPTO op", "rnn_relu": "recurrent cell (nn.RNN): no PyPTO op",
    "multinomial": "random sampling: a golden must be deterministic", "rand": "random values inside forward",
    "randn": "random values inside forward", "rand_like": "random values inside forward",
    "randn_like": "random values inside forward", "bernoulli": "random values inside forward",
    "col2im": "sliding windows (F.fold): no PyPTO op",
    "linalg_solve": "linear solve: no PyPTO op", "cholesky": "factorisation: no PyPTO op",
    "det": "determinant: no PyPTO op", "inverse": "matrix inverse: no PyPTO op",
    "embedding_renorm_": "nn.Embedding(max_norm=...) rescales the table's rows in place on every forward: state "
                         "kept between calls, no fixed golden",
    "unique": "data-dependent output size: no PyPTO op", "nonzero": "data-dependent output size: no PyPTO op",
    "masked_select": "data-dependent output size: no PyPTO op",
}
"""torch function name -> why no PyPTO kernel (verified on the emulator) can stand in for it."""


def classify(op: str) -> tuple[str, str]:
    """(``plumbing`` | ``route`` | ``none`` | ``unknown``, route or reason)."""
    if op in PLUMBING or (op.startswith("_") and op not in ROUTES):
        return "plumbing", ""
    if op in ROUTES:
        return "route", ROUTES[op]
    if op.endswith("_") and op[:-1] in ROUTES:  # in-place form (add_, mul_: also batch_norm's buffer updates)
        return "route", ROUTES[op[:-1]] + " (in place)"
    if op in NO_EQUIVALENT:
        return "none", NO_EQUIVALENT[op]
    return "unknown", ""
