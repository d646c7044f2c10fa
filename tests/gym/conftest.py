"""The gym-style corpus under ``corpus_data/`` is data (vendor-style scripts that import ``torch_npu``), not tests
of this suite: pytest must not collect it. The tests in this folder run it under the emulator instead."""

collect_ignore = ["corpus_data"]
