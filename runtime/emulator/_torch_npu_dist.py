"""``torch.distributed`` with the ``"hccl"`` backend on the emulated NPUs: HCCL's collectives run as gloo's.

Why: a test script written for several NPUs (``dist.init_process_group("hccl")`` under ``torchrun`` or
``mp.spawn``, then ``all_reduce`` / ``all_gather`` / ``broadcast`` of NPU tensors) died at its first line with
torch's "Unknown backend type hccl" (s43's open item): torch_npu registers the HCCL backend on a device host and the
stand-in registered nothing. The emulated NPU tensors are CPU tensors, and torch's gloo backend runs the same
collectives on CPU tensors between the same processes with the same results for the sum/max/min/product reductions
(up to the order of float additions, which HCCL does not promise either). So the stand-in registers ``"hccl"`` as a
backend whose process group is gloo's: ``dist.get_backend()`` still says ``"hccl"``, and a collective gloo does not
implement stops with gloo's own error naming the collective. In-place collectives keep each tensor where it is
(the NPU marks are untouched).
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["register_hccl"]

log = logging.getLogger(__name__)


def _hccl_process_group(store: Any, rank: int, size: int, timeout: Any) -> Any:
    """The process group torch builds for the ``"hccl"`` backend: gloo's, on the same store."""
    import torch.distributed as dist

    return dist.ProcessGroupGloo(store, rank, size, timeout)


def register_hccl(torch: Any) -> None:
    """Register ``"hccl"`` with ``torch.distributed`` (gloo underneath) and ``is_hccl_available()`` (idempotent;
    nothing when torch has no distributed support or no gloo)."""
    try:
        import torch.distributed as dist
    except ImportError:
        return
    if not dist.is_available() or not dist.is_gloo_available():
        return
    if getattr(dist.Backend, "HCCL", None) is None:
        try:
            dist.Backend.register_backend("hccl", _hccl_process_group, devices=["cpu", "npu"])
        except (AttributeError, RuntimeError, ValueError) as exc:  # another torch: leave torch's own error
            log.debug("register_backend hccl: %s", exc)
            return
    if not hasattr(dist, "is_hccl_available"):
        setattr(dist, "is_hccl_available", lambda: True)  # noqa: B010 - torch_npu adds it on a device host
