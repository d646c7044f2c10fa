"""Record normalization: JSON round trip (bf16 included) and the program-order fallback for unlinked records."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from runtime.bisect._auto import Golden, analyze, approximate_links
from runtime.bisect._records import Rec, decode_records, encode_record


def test_round_trip_keeps_bf16_bytes_and_fields() -> None:
    v = (np.arange(6, dtype=np.float32).reshape(2, 3) / 7).astype(ml_dtypes.bfloat16)
    raw = {"op": "add", "file": "/w/k.py", "line": 7, "iteration": {"loop_1": 2}, "value": v,
           "dtype": "bfloat16", "valid_shape": [2, 3], "inputs": [{"kind": "record", "seq": 0}],
           "attrs": {"dim": 1, "bad": object()}}
    (rec,) = decode_records([encode_record(raw, 5)])
    assert rec.seq == 5 and rec.dtype == "bf16" and rec.line == 7 and rec.iteration == {"loop_1": 2}
    assert rec.value.dtype == v.dtype and rec.value.tobytes() == v.tobytes()
    assert rec.inputs == [{"kind": "record", "seq": 0}]
    assert rec.attrs == {"dim": 1}


def test_missing_links_stay_none() -> None:
    (rec,) = decode_records([encode_record({"op": "exp", "iteration": {}}, 0)])
    assert rec.inputs is None


def _rec(seq: int, op: str, value: np.ndarray, **kw: object) -> Rec:
    return Rec(seq=seq, node=None, op=op, file="k.py", line=10 + seq, iteration={"loop_1": 0},
               value=value, valid_shape=list(value.shape), shape=list(value.shape), **kw)  # type: ignore[arg-type]


def test_links_are_not_invented_when_present() -> None:
    recs = [_rec(0, "exp", np.ones((2, 2), np.float32), inputs=[]),
            _rec(1, "mul", np.ones((2, 2), np.float32), inputs=[{"kind": "record", "seq": 0}])]
    approximate_links(recs)
    assert recs[0].inputs == [] and recs[1].inputs == [{"kind": "record", "seq": 0}]


def test_program_order_fallback_localizes_a_straight_line_bug() -> None:
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    golden = Golden({"x": x, "e": np.exp(x), "y": np.exp(x) * 2}, {"x": "input", "e": "intermediate",
                                                                  "y": "output"}, 1e-5, 1e-5)
    whole = np.exp(x) * 3  # what the kernel wrote into y: the whole target, as the emulator records it
    recs = [
        _rec(0, "view", x, offsets=[0, 0]),
        _rec(1, "exp", np.exp(x)),
        _rec(2, "mul", np.exp(x) * 3),
        _rec(3, "assemble", whole, offsets=[0, 0], target="y"),
    ]
    res = analyze(recs, golden, [{"name": "x", "shape": [4, 8]}, {"name": "y", "shape": [4, 8]}],
                  {"y": whole})
    assert recs[2].inputs == [{"kind": "record", "seq": 1}]
    assert res.status[1] == "match" and res.status[3] == "mismatch"
    assert res.culprit is not None and res.culprit.seq == 2
    assert any("program order" in e for e in res.evidence)


def test_sandboxed_recording_round_trip_and_size_budget() -> None:
    from bisect_corpus import CORPUS

    from runtime.bisect._run import run_recorded
    from runtime.opdir import load_op_dir, run_golden

    op = load_op_dir(CORPUS / "rms_norm")
    case = op.cases()[0]
    inputs = run_golden(op, case).inputs
    stage = CORPUS / "rms_norm" / "rms_norm_impl.py"
    full = run_recorded(stage, "rms_norm_wrapper", inputs)
    assert full.status == "ok" and full.recording and not full.truncated
    assert full.layers.get("audit_hook") and full.layers.get("process_group")
    assert all(r.value is not None for r in full.records)
    assert {r.op for r in full.records} >= {"view", "cast", "mul", "sum", "rsqrt", "assemble"}
    small = run_recorded(stage, "rms_norm_wrapper", inputs, max_value_bytes=20_000)
    assert small.truncated and len(small.records) == len(full.records)
    assert any(r.value is None for r in small.records) and small.records[0].value is not None
    np.testing.assert_array_equal(small.outputs[0], full.outputs[0])


def test_static_missing_cast_follows_the_failing_line_back() -> None:
    from runtime.bisect._rules import static_missing_cast

    src = "\n".join([
        "def k(x, y):",
        "    xt = pypto.view(x, [T, D], [0, 0])",
        "    xf = pypto.cast(xt, pypto.DT_FP32)",
        "    s = pypto.sum(xt, -1, keepdim=True)",
        "    mean = s * (1.0 / D)",
        "    d = xf - mean",
        "    e = xt * 2.0",
    ])
    assert static_missing_cast(src, 6) == 4
    assert static_missing_cast(src, 3) is None  # nothing upstream uses an un-cast value
    assert static_missing_cast(src.replace("pypto.sum(xt", "pypto.sum(xf"), 6) is None


def test_unnamed_op_output_is_none_not_empty_string() -> None:
    (rec,) = decode_records([encode_record({"op": "exp", "iteration": {}, "name": ""}, 0)])
    assert rec.name is None
    (old,) = decode_records([{"seq": 0, "op": "exp", "name": ""}])  # a record encoded by an older shim
    assert old.name is None
