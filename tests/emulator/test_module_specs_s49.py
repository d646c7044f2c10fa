"""``runtime.emulator.install()`` gives the emulated modules import specs (s49).

Before, every module it put in ``sys.modules`` had ``__spec__ = None``: ``importlib.util.find_spec("pypto")`` - a
script's "is PyPTO installed?" check, also inside the verifier's sandbox - raised ``ValueError: pypto.__spec__ is
None``. The stand-in distributions of ``runtime/emulator/_module_specs.py`` are checked by
tests/gym/test_scripts_s49.py under the runner, where the finders that report them are installed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import types

from runtime.emulator import install
from runtime.emulator._module_specs import StandInDistribution, distributions_for, give_specs


def test_install_gives_every_module_a_spec() -> None:
    root = install()
    import sys

    spec = importlib.util.find_spec("pypto")
    assert spec is not None and spec is root.__spec__ and spec.name == "pypto"
    assert spec.submodule_search_locations == []  # a package, as the wheel's
    for name in ("pypto.frontend", "pypto.enum"):
        found = importlib.util.find_spec(name)
        assert found is not None and found.name == name and found is sys.modules[name].__spec__, name
        assert "emulator" not in repr(sys.modules[name])  # tests/emulator/test_wheel_api.py
    # one module under two names (the wheel's `pypto.op.math` is the emulator's `pypto.math`): one spec
    assert importlib.util.find_spec("pypto.op.math") is sys.modules["pypto.op.math"].__spec__ is not None


def test_give_specs_keeps_existing_specs_and_skips_non_modules() -> None:
    a, b = types.ModuleType("a"), types.ModuleType("a.b")
    kept = importlib.util.spec_from_loader("a.b", loader=None)
    b.__spec__ = kept
    give_specs({"a": a, "a.b": b, "a.cls": int})
    assert a.__spec__ is not None and a.__spec__.submodule_search_locations == []  # has a submodule: a package
    assert b.__spec__ is kept


def test_distributions_match_normalised_names_only() -> None:
    provided = {"torch_npu": ("torch_npu", lambda: "2.13.0.post0")}
    ctx = importlib.metadata.DistributionFinder.Context
    assert [d.version for d in distributions_for(ctx(name="Torch-NPU"), provided)] == ["2.13.0.post0"]
    assert list(distributions_for(ctx(name="torch"), provided)) == []
    assert [d.metadata["Name"] for d in distributions_for(ctx(), provided)] == ["torch_npu"]
    dist = StandInDistribution("pypto", "0.2.0", "x")
    assert dist.read_text("entry_points.txt") is None and dist.version == "0.2.0"
