"""Op dirs and kernels whose results tell the two NPU architectures apart, shared by the npuarch tests of verify and bisect."""

BF16_CHAIN = """import numpy as np
import pypto


@pypto.frontend.jit
def chain_kernel(x: pypto.Tensor([8, 64], pypto.DT_BF16), y: pypto.Tensor([8, 64], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(8, 64)
    y.move(pypto.mul(pypto.add(pypto.mul(x, 3.0), 0.1), 0.3333))


def chain_wrapper(x):
    y = np.zeros_like(x)
    chain_kernel(x, y)
    return y
"""
"""a BF16 chain: the A2/A3 compiler keeps its intermediates in FP32, the 950 rounds each op (device/_promote)"""

FP8MM_SPEC = """---
schema_version: 1
op_name: fp8mm
inputs:
  - {name: a, shape: [16, 32], dtype: T, range: [-2.0, 2.0]}
  - {name: b, shape: [32, 16], dtype: T, range: [-2.0, 2.0]}
outputs:
  - {name: c, shape: [16, 16], dtype: fp32}
supported_dtypes: [fp8e4m3]
tolerance:
  fp8e4m3: {atol: 0.001, rtol: 0.001}
%s---

# fp8mm

An FP8 matmul with an FP32 result (the FP8 cube exists on the Ascend 950 only).
"""
"""an FP8 matmul op dir's SPEC.md; ``%s`` takes extra front-matter lines (``npuarch: DAV_3510\n``)"""
