"""Loaded by ``site`` in Python processes started by a script that runs under ``python -m runtime.emulator``.

The runner puts this folder first on the children's ``PYTHONPATH`` and its configuration in
``PTO_FORGE_EMULATOR_CHILD``, so ``subprocess.run([sys.executable, __file__, ...])`` in a gym test runs its
child under the emulator too (``import pypto`` is the emulator, ``torch_npu`` the stand-in, same options).
``sys.path`` is then rebuilt from the ``PYTHONPATH`` the script meant to give the child (the runner's folders
replaced by the user's value: an empty entry is the working directory again), and a ``sitecustomize`` that
this one shadows (e.g. the distribution's) is still executed afterwards.
"""

import json
import os
import sys


def _chain_shadowed() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if os.path.abspath(entry or os.curdir) == here:
            continue
        candidate = os.path.join(entry or os.curdir, "sitecustomize.py")
        if os.path.isfile(candidate):
            with open(candidate, encoding="utf-8") as fh:
                code = compile(fh.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate})
            return


def _setup() -> None:
    raw = os.environ.get("PTO_FORGE_EMULATOR_CHILD")
    if not raw:
        return
    from runtime.emulator._child_start import start_child

    start_child(json.loads(raw))


_setup()
_chain_shadowed()
