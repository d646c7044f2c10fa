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


def test_sandbox_captures_kernel_calls_and_the_parent_replays_them_streamed() -> None:
    """The candidate runs confined and sends back its kernel calls as data; the parent replays the programs
    with recording on and compares every op value as it is made: every record has a summary, only values within
    the keep budget stay on the records, and the replay's output equals what the sandbox returned."""
    from bisect_corpus import CORPUS

    from runtime.bisect._analyzer import Analyzer
    from runtime.bisect._replay import replay
    from runtime.bisect._run import run_captured
    from runtime.bisect.api import _golden
    from runtime.opdir import load_op_dir, run_golden

    op = load_op_dir(CORPUS / "rms_norm")
    case = op.cases()[0]
    grun = run_golden(op, case, deep=True)
    stage = CORPUS / "rms_norm" / "rms_norm_impl.py"
    run = run_captured(stage, "rms_norm_wrapper", list(grun.inputs))
    assert run.status == "ok" and len(run.calls) == 1
    assert run.layers.get("audit_hook") and run.layers.get("process_group")
    assert {a.input for a in run.calls[0].args} >= {0, 1}  # inputs come back as references, not bytes
    full = replay(run.calls, list(grun.inputs), Analyzer(_golden(op, grun, case)))
    assert not full.problem and full.error is None and full.records
    assert all(r.summ is not None for r in full.records)
    assert {r.op for r in full.records} >= {"view", "cast", "mul", "sum", "rsqrt", "assemble"}
    small = replay(run.calls, list(grun.inputs), Analyzer(_golden(op, grun, case)), keep_bytes=20_000)
    assert len(small.records) == len(full.records) and small.kept_bytes <= 20_000
    assert any(r.value is None for r in small.records) and all(r.summ is not None for r in small.records)
    y = next(a for n, a in full.final.items() if n == "y")
    np.testing.assert_array_equal(y, run.outputs[0])


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
