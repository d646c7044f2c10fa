"""`_location.user_location` remembers what each code object's frames are (emulator, user code, the interpreter's
``exec_stmt``) by the object's id: the memo holds the code object, so a code object made later - even at the same
address - is classified afresh."""

import os

from runtime.emulator import _location

PKG_FILE = os.path.join(_location.PKG_DIR, "_fake_inner.py")


def _make(filename: str):  # noqa: ANN202
    ns: dict = {"_location": _location}
    exec(compile("def where():\n    return _location.user_location()\n", filename, "exec"), ns)  # noqa: S102
    return ns["where"]


def _call(fn):  # noqa: ANN001, ANN202
    return fn()


def test_user_frames_and_emulator_frames_are_told_apart_for_every_new_code_object() -> None:
    for i in range(20):
        user = _make(f"/tmp/user_{i}.py")
        assert _call(user) == (f"/tmp/user_{i}.py", 2)  # the innermost frame outside the emulator
        inner = _make(PKG_FILE)  # an emulator frame: the location is its caller's
        assert _call(inner) == (__file__, _call.__code__.co_firstlineno + 1)
        del user, inner  # freed: another code object may take the address; the memo's entry keeps it
    assert len(_location._KINDS) <= _location._KINDS_LIMIT
    assert all(code is not None and id(code) == k for k, (code, _) in _location._KINDS.items())
