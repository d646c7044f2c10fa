from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from runtime import dtypes


@pytest.mark.parametrize(("alias", "canonical"), [("float32", "fp32"), ("bfloat16", "bf16"), ("DT_FP16", "fp16"),
                                                   ("torch.bfloat16", "bf16"), ("int", "int32")])
def test_aliases(alias: str, canonical: str) -> None:
    assert dtypes.canonical_name(alias) == canonical


def test_round_trip_every_canonical_name() -> None:
    for name, dt in dtypes.CANONICAL.items():
        assert dtypes.name_of(dt) == name
        assert dtypes.to_numpy(name) == dt


def test_bf16_is_ml_dtypes() -> None:
    assert dtypes.to_numpy("bf16") == np.dtype(ml_dtypes.bfloat16)
    assert dtypes.itemsize("bf16") == 2


def test_unknown_name_lists_choices() -> None:
    with pytest.raises(dtypes.DTypeError, match="unknown dtype 'fp12'.*fp32"):
        dtypes.canonical_name("fp12")


def test_kind_predicates() -> None:
    assert dtypes.is_float("bf16") and not dtypes.is_float("int32")
    assert dtypes.is_integer("uint8") and not dtypes.is_integer("bool")
