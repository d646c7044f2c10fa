"""Security and integrity rules (all S0): kernel files are untrusted code written by a model.

The verifier runs kernels in a sandbox, but a kernel that imports ``subprocess``, reads the golden, swallows the
kernel's exception, or picks a different code path when an environment variable says "under test" is either
an escape attempt or a way to fool the verdict. None of these has a legitimate use in a kernel file, so they
are rejected before anything runs. All checks are on the AST.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import string
import sys
import types
import warnings
from collections.abc import Iterator

import numpy as np

from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import ParsedFile, dotted
from runtime.lint._util import at, kernel_pf

ALLOWED_IMPORTS = ("pypto", "numpy", "math", "torch", "dataclasses", "typing", "functools", "ml_dtypes")
"""The brief's allow-list plus ``ml_dtypes`` (dtype objects only: wrappers name bf16/fp8 numpy dtypes with it)."""
_BANNED_BUILTINS = {"globals", "locals", "vars", "open", "eval", "exec", "compile", "__import__", "breakpoint",
                    "input", "memoryview", "hash", "id"}
_BUILTIN_WHY = {"id": " (an object's address: with address-space randomisation a number that differs from process "
                      "to process - red team s30 made `id(np.zeros)` pick a wrong kernel in one process of 16)",
                "hash": " (its value depends on the interpreter's hash seed, a fact of the host: red team s17 made "
                        "`hash(\"...\") == <value under PYTHONHASHSEED=0>` pick the kernel)"}
_BANNED_MODULES = ("subprocess", "socket", "ctypes", "importlib", "inspect", "multiprocessing", "threading",
                   "pickle", "marshal", "shutil", "signal", "urllib", "http", "builtins")
_BANNED_EXACT = {"sys._getframe", "sys.modules", "sys.settrace", "sys.setprofile", "os.system", "os.popen",
                 "os.fork", "os.forkpty", "os.kill", "os.remove", "os.unlink", "os.rmdir", "os.putenv",
                 "os.chdir", "io.open", "pathlib.Path"}
_BANNED_PREFIX = ("os.exec", "os.spawn", "os.posix_spawn")
_SAFE_DUNDERS = {"__name__", "__doc__", "__init__", "__main__"}
"""Not ``__all__``: a library module's ``__all__`` is a list that outlives every call (red team s25: ``seen =
functools.__all__; seen.append(0)`` counted calls); a file's own ``__all__ = [...]`` is a name, not an attribute."""
_ENV = ("os.environ", "os.getenv", "os.environb", "posix.environ")


_SMUGGLED = {"os", "sys", "subprocess", "builtins", "importlib", "ctypes", "socket", "shutil", "pickle",
             "inspect", "io", "pathlib", "posix", "nt", "_posixsubprocess", "gc", "ctypeslib", "f2py", "distutils",
             "marshal", "multiprocessing", "threading", "_thread", "signal", "runpy", "pkgutil", "zipimport",
             "tempfile", "mmap", "resource", "pty", "fcntl", "modules", "environ", "environb", "getenv", "putenv",
             "_getframe", "_current_frames", "settrace", "setprofile", "addaudithook", "__builtins__"}
"""Attribute names that reach a banned module or facility from *any* object (``dataclasses.sys``,
``typing.sys.modules``, ``m = dataclasses; m.sys``, ``np.ctypeslib``): no kernel needs an attribute so named."""
_FRAME_ATTRS = {"tb_frame", "f_back", "f_locals", "f_globals", "f_builtins", "gi_frame", "cr_frame", "ag_frame"}
"""Attributes of interpreter frames (reached from any traceback, generator or ``traceback.walk_stack``): a frame's
locals are the emulator's trace-time namespace - the trace cache relies on a kernel reading its parameters only by
name (a ``range(n)`` bound is left out of its key, `runtime.emulator._roll.range_sites`)."""
_CODE_ATTRS = frozenset({"eval", "exec", "compile", "__import__", "breakpoint", "globals", "locals", "vars",
                         "attrgetter", "methodcaller", "update_wrapper", "wraps"})
"""Banned builtins as attribute names: red team s30b copied the builtins' namespace onto an object of the file
(``functools.update_wrapper``) and called ``<object>.eval``; no kernel reads an attribute so named."""
_DUNDER_PATH = re.compile(r"(^|\.)__\w+__(\.|$)")
"""A dotted path through a dunder (``"__self__.eval"``): red team s30d handed it to ``operator.attrgetter``, which
torch re-exports (``torch.autograd.profiler_util.attrgetter``)."""
_BANNED_ATTRS = {"ctypes", "tofile", "dump", "dumps"}
"""ndarray/tensor attributes that write files or expose raw memory (``a.ctypes.data``, ``a.tofile(...)``)."""
_FILE_IO = {"numpy.load", "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.fromfile", "numpy.memmap",
            "numpy.loadtxt", "numpy.savetxt", "numpy.genfromtxt", "numpy.fromregex", "numpy.DataSource",
            "numpy.lib", "numpy.testing", "torch.load", "torch.save", "torch.hub", "torch.from_file", "torch.utils",
            "torch.package", "torch.ops", "torch.compile", "torch.jit", "torch.classes", "torch._C",
            "typing.get_type_hints", "typing.ForwardRef", "typing.evaluate_forward_ref", "dataclasses.make_dataclass",
            "torch.fx", "torch.export", "functools.singledispatch", "functools.singledispatchmethod",
            "functools.update_wrapper", "functools.wraps", "functools.WRAPPER_ASSIGNMENTS", "functools.WRAPPER_UPDATES"}
"""Allowed modules' entry points to files, pickles, code generation (``typing.ForwardRef(...)._evaluate`` and
``typing.get_type_hints`` eval strings - so does ``singledispatch``'s ``register`` on string annotations -,
``dataclasses.make_dataclass`` and ``torch.fx`` exec generated code) or
native extensions."""
_PRIVATE_IMPORTS_OK = {("torch._dynamo", "allow_in_graph"), ("torch._subclasses.fake_tensor", "FakeTensor")}
"""Private torch modules vendor code imports one public name from (the gym: the dynamo graph decorator, the fake
tensor class its meta functions test for); every other private module or name is refused."""
_MODULE_VALUES = {"numpy.random", "numpy.linalg", "numpy.fft", "numpy.ma", "numpy.char", "numpy.core", "numpy.lib",
                  "numpy.testing", "numpy.polynomial", "torch.random", "torch.cuda", "torch.npu", "torch.backends",
                  "torch.nn", "torch.linalg", "torch.fft", "torch.special", "torch.distributions", "torch.testing",
                  "torch.version", "torch.utils", "torch.library", "torch.ops", "torch.cpu", "torch.mps",
                  "torch.xpu", "torch.accelerator", "torch.distributed", "torch.nn.functional"}
"""Submodules of the allowed modules: handed around as values they hide every later use from lint."""


_CODEGEN_NAMES = frozenset({"__annotations__", "__dataclass_fields__"})
_CODEGEN_WHY = ("dataclasses pastes field names into source text it exec()s, so a field name set by hand runs as code "
                "(red team s20)")


def _class_codegen(pf: ParsedFile) -> Iterator[Hit]:
    """Ways to give a class field names that are not identifiers, or a class lint cannot read: the names above as
    strings (``type("C", (), {"__annotations__": {...}})``), ``type`` called with a namespace, a metaclass (its
    ``__new__``/``__prepare__`` rewrite the class body). Red team s20: a dataclass field "name" that was code ran
    in the candidate's process; the sandbox refuses such classes too (``runtime.sandbox._guard``)."""
    for node in pf.nodes(ast.Constant):
        if isinstance(node.value, str) and node.value in _CODEGEN_NAMES:
            yield at(node, f"the string `{node.value!r}` is not allowed in a kernel file: {_CODEGEN_WHY}")
    for call in pf.nodes(ast.Call):
        if isinstance(call.func, ast.Name) and call.func.id == "type" and len(call.args) + len(call.keywords) > 1:
            yield at(call, "`type(name, bases, namespace)` makes a class lint cannot read (its namespace is data, "
                     f"e.g. field names for dataclasses); write a `class` statement - {_CODEGEN_WHY}")
    for cls in pf.nodes(ast.ClassDef):
        for kw in cls.keywords:
            if kw.arg == "metaclass":
                yield at(kw, f"a metaclass on `{cls.name}` rewrites the class body where lint cannot see it; a kernel "
                         "file needs plain classes")


_PYPTO_FOREIGN = frozenset({"re", "enum", "sys", "struct", "torch", "config.enum", "config.sys", "op.re",
                            "op.struct"})
"""Modules of the standard library (and torch) that the wheel's namespace re-exports because its own modules import
them (``pypto.re``, ``pypto.config.enum``): in the API surface by name, but not PyPTO. Red team s22b: through them a
kernel file reached what lint refuses under the module's own name - ``pypto.config.enum.bltns.eval`` (enum's alias of
``builtins``), ``pypto.re.functools.lru_cache``. `tests/lint/test_redteam_s22b.py` keeps the list equal to the
emulator's namespace."""


def _reexported_modules() -> dict[str, frozenset[str]]:
    """Per allowed plain module (``typing``, ``dataclasses`` ...), the attribute names that hold a module it imported
    (``typing.functools``, ``dataclasses.builtins``, ``typing.stdlib_re``): read from the modules themselves."""
    out: dict[str, frozenset[str]] = {}
    for root in ("typing", "dataclasses", "functools", "math", "ml_dtypes"):
        try:
            mod = importlib.import_module(root)
        except ImportError:  # pragma: no cover - ml_dtypes is a dependency
            continue
        out[root] = frozenset(n for n, v in vars(mod).items() if isinstance(v, types.ModuleType))
    return out


_REEXPORTED = _reexported_modules()


def _foreign_module(parts: list[str]) -> str | None:
    """The module a chain reaches through another module's namespace (``typing.functools``,
    ``pypto.config.enum``, ``np.random.mtrand.operator``): every later name of the chain hides from the rules keyed
    on that module's own name (PF11's memoizing decorators, PF02's banned builtins)."""
    root = parts[0]
    if root == "pypto":
        for k in (2, 3):
            if len(parts) >= k and ".".join(parts[1:k]) in _PYPTO_FOREIGN:
                return ".".join(parts[:k])
    elif len(parts) > 1 and parts[1] in _REEXPORTED.get(root, ()):
        return f"{root}.{parts[1]}"
    elif root in ("numpy", "torch", "ml_dtypes") and any(p in _STDLIB for p in parts[1:]):
        return _walk_foreign(tuple(parts))
    return None


_STDLIB = frozenset(sys.stdlib_module_names) | {"bltns"}


@functools.lru_cache(maxsize=512)
def _walk_foreign(parts: tuple[str, ...]) -> str | None:
    """Walk ``numpy.random.mtrand.operator...`` on the real modules: the first attribute that is a module outside
    the root's package (red team s30c: ``np.random.mtrand.operator.attrgetter("__self__.eval")`` and
    ``np.random.bit_generator.re.enum.bltns`` reached ``eval``; numpy's and torch's own modules import ``operator``,
    ``re``, ``warnings``). Only chains naming a standard-library module are walked (torch is imported for them
    alone); a name that does not resolve, or a chain that reaches a non-module first, is not this rule's."""
    root = parts[0]
    try:
        obj: object = importlib.import_module(root)
    except ImportError:
        return None
    for i, name in enumerate(parts[1:], 1):
        if name.startswith("__"):
            return None
        try:
            obj = getattr(obj, name)
        except Exception:  # noqa: BLE001 - a library's lazy attribute that fails to load: not a module
            return None
        if not isinstance(obj, types.ModuleType):
            return None
        if obj.__name__ != root and not obj.__name__.startswith(root + "."):
            return ".".join(parts[:i + 1])
    return None


def _banned_name(full: str) -> str | None:
    parts = full.split(".")
    root = parts[0]
    if root in _BANNED_MODULES:
        return root
    foreign = _foreign_module(parts)
    if foreign:
        return foreign
    smuggled = next((p for p in parts[1:] if p in _SMUGGLED), None)
    if smuggled:  # e.g. ``np.os.system``, ``m.sys``: a banned module reached through any object
        return smuggled
    raw = next((p for p in parts[1:] if p in _BANNED_ATTRS), None)
    if raw:
        return raw
    for io_name in _FILE_IO:
        if full == io_name or full.startswith(io_name + "."):
            return io_name
    if full in _BANNED_EXACT or full.startswith(_BANNED_PREFIX):
        return full
    for exact in _BANNED_EXACT:
        if full.startswith(exact + "."):
            return exact
    return None


VENDOR_STDLIB = ("os", "sys", "logging", "struct", "contextlib", "tempfile", "warnings", "enum", "collections",
                 "itertools", "copy", "operator", "abc")
"""Standard-library modules that imported vendor code (the PyPTO gym) imports at module level for its own
housekeeping (a build folder, ``sys.argv`` run-mode switches, a logger, float bit tricks with ``struct``). In code
whose SPEC.md declares ``imported:`` such a module-level import is INFO, not FAIL: the candidate sandbox is the
security boundary (docs/verification.md), and every *use* of these modules is still checked by PF02 (process,
file-deletion, reflection and module-mutation calls) and PF04 (environment-dependent compute paths)."""


VENDOR_DEVICE = ("torch_npu",)
"""The device host's torch backend, which imported vendor code imports at module level for its side effect
(``import torch_npu  # noqa: F401``: registering the npu device; 3 of the 15 real gym kernels). Allowed like
`VENDOR_STDLIB`; the sandbox serves the CPU stand-in, as a device host serves the real module, and every *use* of
the module in a kernel file is PF04 (a fact of the host: ``torch_npu is None``, its version, its operators)."""


def declared_imported(ctx: LintContext) -> bool:
    """SPEC.md declares the op's code imported from elsewhere (``imported: {source: ...}``, written by the gym
    import; model-written code has no such SPEC.md: SPEC.md is the op's contract, not the agents' to edit)."""
    imported = ctx.op.spec.get("imported") if ctx.op is not None else None
    return isinstance(imported, dict) and bool(imported.get("source"))


def _pf01_vendor(ctx: LintContext, pf: ParsedFile, node: ast.stmt, name: str) -> str | None:
    """The INFO status when ``name`` is a vendor housekeeping import allowed here (module level, imported code)."""
    if name.split(".")[0] in VENDOR_STDLIB + VENDOR_DEVICE and isinstance(pf.parents.get(node), ast.Module) and \
            declared_imported(ctx):
        return "INFO"
    return None


@check("PF01")
def pf01_import_allow_list(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    vendor = (" - allowed at module level in imported code (SPEC.md `imported:`): its uses are still checked by "
              "PF02/PF04")
    for node in pf.nodes(ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] not in ALLOWED_IMPORTS:
                status = _pf01_vendor(ctx, pf, node, alias.name)
                yield at(node, f"import of `{alias.name}` in a kernel file (allowed: {', '.join(ALLOWED_IMPORTS)})"
                         + (vendor if status else ""), status=status)
    for node in pf.nodes(ast.ImportFrom):
        mod = node.module or ""
        if any(a.name == "*" for a in node.names):
            # every rule keyed on dotted names (PF02's banned names, PF11's memoizing decorators and library state,
            # PF04's host facts) reads `lru_cache` or `get_num_threads` bare after it (red team s25: a bare
            # `@lru_cache` counter, a bare `get_num_threads()` tell)
            yield at(node, f"`from {mod or '.'} import *` in a kernel file: import the names you use (or the "
                     "module), so that what the file calls can be read")
        if node.level:
            yield at(node, "relative import in a kernel file")
        elif mod == "__future__":
            yield at(node, "`from __future__ import ...` in a kernel file (string annotations hide "
                     "`pypto.Tensor` parameters from the frontend)")
        elif mod.split(".")[0] not in ALLOWED_IMPORTS:
            status = _pf01_vendor(ctx, pf, node, mod)
            yield at(node, f"import from `{mod}` in a kernel file (allowed: {', '.join(ALLOWED_IMPORTS)})"
                     + (vendor if status else ""), status=status)


def _module_roots(pf: ParsedFile) -> set[str]:
    roots = set()
    for node in pf.nodes(ast.Import):
        for alias in node.names:
            roots.add(alias.asname or alias.name.split(".")[0])
    for node in pf.nodes(ast.ImportFrom):
        for alias in node.names:
            roots.add(alias.asname or alias.name)
    return roots | {"builtins", "__builtins__"}


_REFLECTION = ("getattr", "setattr", "delattr", "hasattr")
_INDIRECT = {"functools.partial", "functools.partialmethod", "functools.reduce", "functools.singledispatch",
             "functools.wraps", "functools.update_wrapper", "functools.cache", "functools.lru_cache",
             "functools.cached_property"}
"""Allowed-module functions that call what they are given: a banned builtin handed to one of them is still
called (``functools.partial(setattr, np)``); any banned name used as a value is already refused below."""


def _is_parameter(pf: ParsedFile, node: ast.Name) -> bool:
    """``node`` names a parameter of a function or lambda around it (the only shadowing lint accepts: binding
    a banned builtin's name in any other way is itself refused, so ``eval = eval`` cannot hide one)."""
    cur = pf.parents.get(node)
    while cur is not None:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = cur.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p is not None)]
            if any(p.arg == node.id for p in params):
                return True
        cur = pf.parents.get(cur)
    return False


def _rebinds(pf: ParsedFile, names: set[str] | frozenset[str]) -> Iterator[tuple[ast.AST, str]]:
    """Bindings of ``names`` other than parameters: assignments, defs, classes, imports, loop/with targets."""
    for node in pf.nodes(ast.Name):
        if isinstance(node.ctx, (ast.Store, ast.Del)) and node.id in names:
            yield node, node.id
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        for d in pf.by_type.get(kind, []):
            if d.name in names:  # type: ignore[attr-defined]
                yield d, d.name  # type: ignore[attr-defined]
    for kind in (ast.Import, ast.ImportFrom):
        for imp in pf.by_type.get(kind, []):
            for alias in imp.names:  # type: ignore[attr-defined]
                bound = alias.asname or alias.name.split(".")[0]
                if bound in names:
                    yield imp, bound


_NAME_DUNDERS = frozenset({"__name__", "__doc__", "__qualname__", "__module__"})
_TO_TEXT = frozenset({"str", "repr", "ascii", "format", "dir", "id", "hash", "type"})
"""Builtins that turn an object into text or an identity a wrapper can branch on"""


def _api_roots(pf: ParsedFile) -> set[str]:
    """Local names bound to the pypto module or one of its objects: its import aliases, and module-level or local
    ``T = pypto.Tensor`` / ``m = pypto`` (not ``t = pypto.add(...)``: a call's result is a value, not the API)."""
    names = {n for n, full in pf.aliases.items() if full == "pypto" or full.startswith("pypto.")}
    if "pypto" in _module_roots(pf):
        names.add("pypto")
    for _ in range(3):  # chains of aliases
        for node in pf.nodes(ast.Assign):
            value = node.value
            if isinstance(value, ast.Name | ast.Attribute) and dotted(value).split(".")[0] in names:
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _pypto_introspection(pf: ParsedFile) -> Iterator[Hit]:
    """Text or identity of a pypto API object (``str(pypto.Tensor)``, ``f"{pypto}"``, ``pypto.min.__name__``,
    ``type(pypto.loop)``): the emulator gives its objects the wheel's names (`runtime.emulator._wheel_identity`),
    but no emulator is the wheel object for object - and no kernel needs to read the API's names, only to call it.
    Values the API returns (``pypto.add(...)``, a tensor's ``dtype``) and its constants (``pypto.DT_FP32``,
    ``pypto.CastMode.CAST_RINT``: upper-case names, whose text is the wheel's) are not API objects here."""
    if "pypto" not in pf.source:
        return
    roots = _api_roots(pf)
    if not roots:
        return

    def api_object(node: ast.AST) -> str | None:
        if not isinstance(node, ast.Name | ast.Attribute):
            return None
        full = dotted(node)
        if not full or full.split(".")[0] not in roots:
            return None
        if isinstance(node, ast.Attribute) and node.attr.isupper() and not node.attr.startswith("__"):
            return None  # a constant or an enum member (DT_FP32, CAST_RINT)
        return full

    for node in pf.nodes(ast.Attribute):
        if node.attr in _NAME_DUNDERS and api_object(node.value):
            yield at(node, f"`{dotted(node)}` reads a name of the pypto API (introspection; it differs between "
                     "toolchains) - not allowed in a kernel file")
    for call in pf.nodes(ast.Call):
        f = call.func
        text = isinstance(f, ast.Name) and f.id in _TO_TEXT or isinstance(f, ast.Attribute) and f.attr == "format"
        if not text:
            continue
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if (full := api_object(arg)) is not None:
                yield at(call, f"`{pf.name(f) or 'format'}({full})` turns a pypto API object into text or an "
                         "identity (introspection) - not allowed in a kernel file")
    for fv in pf.nodes(ast.FormattedValue):
        if (full := api_object(fv.value)) is not None:
            yield at(fv, f"`{{{full}}}` in an f-string turns a pypto API object into text (introspection) - not "
                     "allowed in a kernel file")
    for op in pf.nodes(ast.BinOp):
        if isinstance(op.op, ast.Mod) and isinstance(op.left, ast.Constant) and \
                isinstance(op.left.value, str):
            right = op.right
            for item in right.elts if isinstance(right, ast.Tuple) else [right]:
                if (full := api_object(item)) is not None:
                    yield at(op, f"`'...' % {full}` turns a pypto API object into text (introspection) - not "
                             "allowed in a kernel file")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_classes(pf: ParsedFile) -> set[str]:
    return {c.name for c in pf.nodes(ast.ClassDef)}


def _self_or_own_class(pf: ParsedFile, node: ast.Attribute, classes: set[str]) -> bool:
    """``self._x`` / ``cls._x`` in a method of a class of the file, or ``Cls._x`` for such a class."""
    value = node.value
    if not isinstance(value, ast.Name):
        return False
    if value.id in classes and value.id not in pf.aliases:
        return True
    if value.id not in ("self", "cls"):
        return False
    fn = pf.enclosing_fn.get(node)
    while fn is not None:
        if isinstance(pf.parents.get(fn), ast.ClassDef):
            args = fn.args.posonlyargs + fn.args.args
            return bool(args) and args[0].arg == value.id
        fn = pf.enclosing_fn.get(fn)
    return False


def _private_access(pf: ParsedFile) -> Iterator[Hit]:
    """``obj._name`` outside the file's own classes, and imports of private names or modules: a library's private
    helpers are not its API and several reach eval/exec (red team s17: ``dataclasses._create_fn`` exec()s its body,
    ``typing.ForwardRef(...)._evaluate`` evals a string, ``typing._eval_type``)."""
    classes = _own_classes(pf)
    for node in pf.nodes(ast.Attribute):
        if _is_private(node.attr) and not _self_or_own_class(pf, node, classes):
            yield at(node, f"private attribute `.{node.attr}` (`{ast.unparse(node)[:60]}`): a kernel file uses "
                     "only the public API of its modules (private helpers of dataclasses/typing run exec/eval)")
    for imp in pf.nodes(ast.ImportFrom):
        mod = imp.module or ""
        for alias in imp.names:
            if (mod, alias.name) in _PRIVATE_IMPORTS_OK or mod.split(".")[0] not in ALLOWED_IMPORTS:
                continue  # a module outside the allow-list is PF01's
            if _is_private(alias.name) or any(_is_private(p) for p in mod.split(".")):
                yield at(imp, f"import of a private name (`from {mod} import {alias.name}`): a kernel file uses "
                         "only the public API of its modules")
    for imp in pf.nodes(ast.Import):
        for alias in imp.names:
            if alias.name.split(".")[0] in ALLOWED_IMPORTS and any(_is_private(p) for p in alias.name.split(".")):
                yield at(imp, f"import of a private module (`import {alias.name}`): a kernel file uses only the "
                         "public API of its modules")


def _modules_as_values(pf: ParsedFile) -> Iterator[Hit]:
    """A module (other than pypto/math) stored, passed or returned as a value (``m = np``, ``make(np)``,
    ``r = np.random``): every later ``m.datetime64(...)`` would escape the checks keyed on ``numpy.*`` names."""
    modules = set()
    for imp in pf.nodes(ast.Import):
        modules |= {a.asname or a.name.split(".")[0] for a in imp.names
                    if a.name.split(".")[0] not in ("pypto", "math")}
    nodes: list[ast.Name | ast.Attribute] = [*pf.nodes(ast.Name), *pf.nodes(ast.Attribute)]
    for node in nodes:
        if not isinstance(node.ctx, ast.Load):
            continue
        parent = pf.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            continue  # `np.x`: a member is read
        full = pf.name(node)
        if (isinstance(node, ast.Name) and node.id in modules) or full in _MODULE_VALUES:
            yield at(node, f"module `{full}` used as a value (stored, passed or returned): name its functions "
                     "directly (`np.zeros(...)`), so that lint can see every use")


def _format_fields(template: str) -> list[str]:
    """The replacement fields of a ``str.format`` template, those nested in a format spec (``{0:{1.real}}``)
    included (a spec that does not parse counts as a field itself); raises ValueError when the template does not
    parse."""
    fields: list[str] = []
    for _, field, spec, _ in string.Formatter().parse(template):
        if field is not None:
            fields.append(field)
        if spec:
            try:
                fields += _format_fields(spec)
            except ValueError:
                fields.append(spec)
    return fields


def _format_walks(template: str) -> str | None:
    """The first replacement field of a ``str.format`` template that reads an attribute or an item of its argument
    (``{0.__globals__[sys]}``, ``{x.__code__.co_filename}``), or None; an unparsable template is one too."""
    try:
        fields = _format_fields(template)
    except ValueError:
        return template[:40]
    return next((f for f in fields if "." in f or "[" in f), None)


def _format_templates(pf: ParsedFile) -> Iterator[Hit]:
    """``"{0.__globals__[sys].modules}".format(fn)``: a replacement field walks attributes and items at run time,
    inside a string no AST rule sees (red team s25: it read a function's globals to find the verifier's modules,
    and ``{0.__code__.co_filename}`` of a pypto function told the emulator's path from the wheel's). A template that
    is not a literal could hold such a field; ``format_map`` and ``string.Formatter`` likewise. Plain fields
    (``"{}"``, ``"{name}"``, ``"{0:>8}"``) stay allowed; an f-string's expressions are code every rule reads."""
    if "format" not in pf.source and "Formatter" not in pf.source:
        return
    for call in pf.nodes(ast.Call):
        f = call.func
        if not isinstance(f, ast.Attribute) or f.attr not in ("format", "format_map", "vformat"):
            continue
        recv = f.value
        if f.attr != "format" or pf.name(recv) == "str":
            yield at(call, f"`.{f.attr}(...)` with a template read at run time is not allowed in a kernel file: "
                     "a field like `{0.attr[key]}` walks its argument unseen; use an f-string")
        elif isinstance(recv, ast.Constant) and isinstance(recv.value, str):
            walk = _format_walks(recv.value)
            if walk is not None:
                yield at(call, f"a format field `{{{walk}}}` that reads an attribute or an item of its argument "
                         "(introspection inside a string) is not allowed in a kernel file; use an f-string")
        elif not isinstance(recv, ast.JoinedStr):
            yield at(call, "`.format(...)` on a template that is not a string literal is not allowed in a kernel "
                     "file (its fields could walk attributes unseen); use an f-string")


@check("PF02")
def pf02_banned_calls(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    yield from _pypto_introspection(pf)
    yield from _format_templates(pf)
    calls_by_func = {id(c.func): c for c in pf.nodes(ast.Call)}
    for bound, name in _rebinds(pf, _BANNED_BUILTINS | set(_REFLECTION) | {"__name__"}):
        yield at(bound, f"binding the name `{name}` (a banned builtin) is not allowed in a kernel file"
                 if name != "__name__" else "binding `__name__` is not allowed in a kernel file (it turns the "
                 "`if __name__ == \"__main__\":` block, which the rules read as a self-test, into production code)")
    for node in pf.nodes(ast.Constant):
        if isinstance(node.value, str) and "." in node.value and _DUNDER_PATH.search(node.value):
            yield at(node, f"the string {node.value[:40]!r} names a dunder attribute path (read by "
                     "`attrgetter`-like helpers where no rule sees it) and is not allowed in a kernel file")
    for node in pf.nodes(ast.Name):  # a banned builtin used in any way: called, passed, aliased, stored
        if not isinstance(node.ctx, ast.Load) or (node.id in _BANNED_BUILTINS | set(_REFLECTION)
                                                  and _is_parameter(pf, node)):
            continue
        called = id(node) in calls_by_func
        if node.id in _BANNED_BUILTINS:
            yield at(node, f"`{node.id}(...)` is not allowed in a kernel file{_BUILTIN_WHY.get(node.id, '')}"
                     if called else
                     f"`{node.id}` used as a value (aliased or passed on) is not allowed in a kernel file")
        elif node.id in _REFLECTION and not called:
            yield at(node, f"`{node.id}` used as a value (aliased or passed on) is not allowed; use plain attribute "
                     f"access")
    for call in pf.nodes(ast.Call):
        f = call.func
        if pf.name(f) in _INDIRECT:
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                name = pf.name(arg)
                if name in _REFLECTION or name in _BANNED_BUILTINS or (name and _banned_name(name)):
                    yield at(call, f"`{pf.name(f)}({name}, ...)` calls a banned function indirectly")
        if isinstance(f, ast.Name) and f.id in _REFLECTION:
            args = call.args
            attr = args[1] if len(args) > 1 else None
            if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)) or attr.value.startswith("_") \
                    or attr.value in _FRAME_ATTRS or attr.value in _CODE_ATTRS or attr.value in _SMUGGLED:
                yield at(call, f"`{f.id}` with a computed, private or dunder attribute name is not allowed")
            elif args and dotted(args[0]).split(".")[0] in _module_roots(pf):
                yield at(call, f"`{f.id}` on module `{dotted(args[0])}`; use plain attribute access")
    yield from _private_access(pf)
    yield from _modules_as_values(pf)
    for imp in pf.nodes(ast.ImportFrom):  # refused where imported, used or not (`from typing import ForwardRef`)
        for alias in imp.names:
            full = f"{imp.module}.{alias.name}" if imp.module and not imp.level else ""
            if full and full.split(".")[0] in ALLOWED_IMPORTS and _banned_name(full):
                yield at(imp, f"`from {imp.module} import {alias.name}` is not allowed in a kernel file")
    for node in pf.nodes(ast.Attribute):
        if node.attr in _CODE_ATTRS:  # on any object: `<namespace copy>.eval` (red team s30b)
            yield at(node, f"an attribute named `{node.attr}` (a banned builtin reached through an object) is not "
                     "allowed in a kernel file")
        if node.attr in _FRAME_ATTRS:  # on any object, inside a chain too (``e.tb_frame.f_back.f_code``)
            yield at(node, f"frame attribute `.{node.attr}` (introspection) is not allowed in a kernel file")
        if isinstance(pf.parents.get(node), ast.Attribute):
            continue
        full = pf.name(node)
        bad = _banned_name(full) if full else None
        if bad:
            yield at(node, f"`{full}` is not allowed in a kernel file")
        attr = node.attr
        if attr.startswith("__") and attr.endswith("__") and attr not in _SAFE_DUNDERS:
            yield at(node, f"dunder attribute `.{attr}` (introspection) is not allowed in a kernel file")
    for node in pf.nodes(ast.Name):
        if node.id in ("__builtins__", "__loader__", "__spec__", "__file__", "__cached__"):  # where it runs from (A9e)
            yield at(node, f"`{node.id}` is not allowed in a kernel file")
        elif node.id in _CODEGEN_NAMES:
            yield at(node, f"`{node.id}` is not allowed in a kernel file: {_CODEGEN_WHY}")
        elif isinstance(node.ctx, ast.Load) and pf.aliases.get(node.id, "") and _banned_name(pf.aliases[node.id]):
            yield at(node, f"`{node.id}` (= `{pf.aliases[node.id]}`) is not allowed in a kernel file")
    yield from _class_codegen(pf)
    for node in pf.nodes(ast.Match):
        yield at(node, "a `match` statement is not allowed in a kernel file: its patterns read attributes and items "
                 "(`case object(__globals__=g)`) and bind names where no rule sees them (red team s30); use if/elif")
    roots = _module_roots(pf)
    for kind in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete):
        for node in pf.by_type.get(kind, []):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]  # type: ignore[attr-defined]
            for t in targets:
                base = t.value if isinstance(t, (ast.Attribute, ast.Subscript)) else None
                root = dotted(base) if base is not None else ""
                if root and root.split(".")[0] in roots:
                    yield at(t, f"assignment into module `{root}` (monkeypatching) is not allowed")


def _reaches_jit(pf: ParsedFile) -> set[str]:
    """Names of module-level functions from which a JIT kernel is reachable through bare-name calls (linear)."""
    jit = pf.jit_names()
    callers: dict[str, set[str]] = {}
    for name, fn in pf.functions.items():
        for c in pf.calls_in.get(fn, []):
            if isinstance(c.func, ast.Name):
                callers.setdefault(c.func.id, set()).add(name)
    names, todo = set(jit), list(jit)
    while todo:
        for caller in callers.get(todo.pop(), ()):
            if caller not in names:
                names.add(caller)
                todo.append(caller)
    return names


def _calls_any(nodes: list[ast.stmt], names: set[str]) -> ast.Call | None:
    for stmt in nodes:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names:
                return n
    return None


@check("PF03")
def pf03_no_try_around_jit(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    if not pf.jit_fns:
        return
    targets = _reaches_jit(pf)
    for kind in (ast.Try, getattr(ast, "TryStar", ast.Try)):
        for node in set(pf.by_type.get(kind, [])):
            swallows = bool(node.handlers) or any(  # type: ignore[attr-defined]
                isinstance(n, (ast.Return, ast.Break, ast.Continue)) for s in node.finalbody for n in ast.walk(s))  # type: ignore[attr-defined]
            scope = pf.enclosing_fn.get(node)
            names = targets | (pf.kernel_names_in(scope) if scope is not None else set())
            call = _calls_any(node.body, names)  # type: ignore[attr-defined]
            if swallows and call is not None:
                yield at(node, f"try/except around the kernel call `{call.func.id}(...)` (line {call.lineno}); "  # type: ignore[attr-defined]
                         "a failing kernel must fail verification")
    for node in pf.nodes(ast.With):
        suppress = any("suppress" in pf.name(item.context_expr) for item in node.items)
        scope = pf.enclosing_fn.get(node)
        call = _calls_any(node.body, targets | (pf.kernel_names_in(scope) if scope is not None else set()))
        if suppress and call is not None:
            yield at(node, "`suppress(...)` around the kernel call")


def _env_read(node: ast.AST, pf: ParsedFile, tainted: set[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in ("environ", "environb", "getenv"):
            return True  # whatever the chain before it (``sys.modules["os"].environ``)
        if isinstance(n, (ast.Attribute, ast.Name)):
            full = pf.name(n)
            if (full.startswith(_ENV) or full.endswith((".environ", ".getenv", ".environb"))
                    or (isinstance(n, ast.Name) and n.id in tainted)):
                return True
    return False


_DEVICE_FLAGS = frozenset({"is_cuda", "is_cpu", "is_npu", "is_meta", "is_xpu", "is_mps"})
_DEVICE_MSG = ("reads which device a tensor lives on (the CPU under verification, the NPU in use): a kernel file "
               "computes one way wherever it runs; pass `device=x.device` on, do not test it")


_PLACEMENT_FLAGS = frozenset({"is_pinned", "is_shared"})
_CALLER_FACTS = frozenset({"grad_fn", "is_leaf", "output_nr", "base", "grad", "retains_grad"})
"""Red team s40 added ``grad`` (a weight holding a gradient: the second micro-batch of gradient accumulation) and
``retains_grad``."""
_CALLER_FACTS_MSG = ("reads where its caller's tensor came from (an autograd graph, the array it is a view of): a "
                     "training step hands a non-leaf activation, `h.reshape(-1, D)` a view of a 3-D array; a kernel "
                     "file computes one way whoever produced its inputs")
_CONTIGUITY = frozenset({"c_contiguous", "f_contiguous", "contiguous", "C_CONTIGUOUS", "F_CONTIGUOUS", "C", "F",
                         "CONTIGUOUS", "FORC", "forc", "fnc", "FNC"})
_PLACEMENT_MSG = ("reads how its caller allocated a tensor (pinned, shared or read-only memory): verification hands "
                  "ordinary buffers, a DataLoader pinned or shared ones, np.frombuffer read-only ones; a kernel file "
                  "computes one way whatever the allocation")


def _placement_reads(pf: ParsedFile) -> Iterator[Hit]:
    """``x.is_pinned()``, ``x.is_shared()``, ``x.flags.writeable`` / ``x.flags["WRITEABLE"]``: facts of how the caller
    allocated an input that verification never varies (red team s22b: a wrapper choosing its kernel by them passed
    every verification and was wrong for a ``share_memory_()`` tensor or an ``np.frombuffer`` array)."""
    if not any(k in pf.source for k in ("is_", "flags", "grad", "output_nr", "base")):
        return
    for node in pf.nodes(ast.Attribute):
        if node.attr in _PLACEMENT_FLAGS:
            yield at(node, f"`{dotted(node) or '.' + node.attr}` {_PLACEMENT_MSG}")
        elif node.attr in _CALLER_FACTS and isinstance(node.ctx, ast.Load) and \
                not pf.name(node).startswith(("torch.autograd.", "torch.func.", "functorch.")):
            # red team s25: `x.grad_fn is not None` (leaf inputs only under verification), `x.base.ndim > 2`; a
            # module's function (`torch.autograd.grad(...)`, `torch.func.grad`) is no fact of a caller's tensor
            yield at(node, f"`{dotted(node) or '.' + node.attr}` {_CALLER_FACTS_MSG}")
        elif node.attr == "flags" and isinstance(node.ctx, ast.Load):
            # only the contiguity of an array is the wrapper's business (it must make a copy otherwise); the rest
            # (`writeable`, `owndata`, `str(x.flags)` as text: red team s25) tells how its caller allocated it
            up = pf.parents.get(node)
            key = up.attr if isinstance(up, ast.Attribute) and up.value is node else \
                up.slice.value if isinstance(up, ast.Subscript) and up.value is node and \
                isinstance(up.slice, ast.Constant) else None
            if key not in _CONTIGUITY:
                yield at(up if key is not None and up is not None else node, f"`{dotted(node) or '.flags'}` beyond "
                         f"its contiguity {_PLACEMENT_MSG}")


def _device_names(pf: ParsedFile) -> set[str]:
    """Names bound to a tensor's device (``dev = x.device``, ``device = query.device``: how real wrappers keep it to
    pass it on), through chains of plain names."""
    names: set[str] = set()
    assigns = [n for n in pf.nodes(ast.Assign) if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)]
    for _ in range(4):
        before = len(names)
        for node in assigns:
            v = node.value
            if isinstance(v, ast.Attribute) and v.attr == "device" or isinstance(v, ast.Name) and v.id in names:
                names.add(node.targets[0].id)  # type: ignore[attr-defined]
        if len(names) == before:
            break
    return names


def _fixed_device(pf: ParsedFile, e: ast.AST, fixed_names: set[str]) -> bool:
    """A device that is the same wherever the file runs, or the device of a tensor the file made itself: a string
    (anywhere in ``e``: ``x.device.type in ("cpu",)``), ``torch.device(...)``, ``<call>.device``, or a name bound to one."""
    for n in ast.walk(e):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            return True
        if isinstance(n, ast.Call) and pf.name(n.func).split(".")[-1] == "device":
            return True
        if isinstance(n, ast.Attribute) and n.attr == "device" and not isinstance(n.value, ast.Name):
            return True
        if isinstance(n, ast.Name) and n.id in fixed_names:
            return True
    return False


def _statement(pf: ParsedFile, node: ast.AST) -> ast.AST | None:
    """The statement ``node`` is part of."""
    cur = pf.parents.get(node)
    while cur is not None and not isinstance(cur, ast.stmt):
        cur = pf.parents.get(cur)
    return cur


def _in_error_message(pf: ParsedFile, node: ast.AST) -> bool:
    """Inside the exception of a ``raise`` or the message of an ``assert``: text that ends the call, loudly."""
    cur = _statement(pf, node)
    return isinstance(cur, ast.Raise) or isinstance(cur, ast.Assert) and cur.msg is not None and any(
        n is node for n in ast.walk(cur.msg))


def _device_reads(pf: ParsedFile) -> Iterator[Hit]:
    """``x.device.type``, ``x.is_cpu``, ``x.device == ...``, ``str(x.device) == "cpu"``, ``x.get_device()``: the one
    environment fact no emulator can hide - verification hands a torch wrapper CPU tensors, a real caller NPU ones
    (red team s16: a wrapper that dropped the tail unless ``x.device.type == "cpu"`` got PASS; red team s30: the same
    through ``dev = x.device; dev.type``, and ``x.get_device() < 0``). A device may be passed on (``device=x.device``,
    ``.to(dev)``), kept in a name for that, compared with another argument's device, and named in an error message."""
    if "device" not in pf.source and "is_" not in pf.source:
        return
    names = _device_names(pf)
    fixed_names = {t.id for n in pf.nodes(ast.Assign) for t in n.targets[:1]
                   if len(n.targets) == 1 and isinstance(t, ast.Name) and _fixed_device(pf, n.value, set())}

    def device_like(e: ast.AST) -> bool:
        return isinstance(e, ast.Attribute) and e.attr == "device" or isinstance(e, ast.Name) and e.id in names

    for node in pf.nodes(ast.Attribute):
        if node.attr == "get_device":
            yield at(node, f"`.get_device()` {_DEVICE_MSG}")
            continue
        made = isinstance(node.value, ast.Call) and pf.name(node.value.func).split(".")[-1] == "device"
        if node.attr in _DEVICE_FLAGS or ((device_like(node.value) or made) and not node.attr.startswith("__")
                                          and node.attr != "device"):
            yield at(node, f"`{dotted(node) or '.' + node.attr}` {_DEVICE_MSG}")
    for cmp in pf.nodes(ast.Compare):
        operands = [cmp.left, *cmp.comparators]
        unwrapped = [o.args[0] if isinstance(o, ast.Call) and pf.name(o.func) in ("str", "repr", "format") and o.args
                     else o for o in operands]
        if not any(device_like(o) for o in unwrapped):
            continue
        # devices of the call's own tensors compared with each other (gather_pa_kv_cache's argument checks) say the
        # same wherever they run; a string, a `torch.device(...)`, the device of a tensor made here
        # (`x.device == torch.empty(1).device` is "am I on the CPU?"), or a name bound to one of these do not
        fixed = [o for o in unwrapped if _fixed_device(pf, o, fixed_names)]
        if fixed or any(o is not operands[i] for i, o in enumerate(unwrapped)):
            yield at(cmp, f"a comparison of `{ast.unparse(cmp)[:60]}` with a fixed device or a device as text "
                     f"{_DEVICE_MSG}")
    texts: list[tuple[ast.AST, ast.expr]] = [(n, n.value) for n in pf.nodes(ast.FormattedValue)]
    texts += [(c, c.args[0]) for c in pf.nodes(ast.Call) if pf.name(c.func) in ("str", "repr", "format") and c.args]
    for node, value in texts:
        if device_like(value) and not _in_error_message(pf, node) and not isinstance(pf.parents.get(node),
                                                                                     ast.Compare):
            yield at(node, f"turning `{ast.unparse(value)}` into text outside an error message {_DEVICE_MSG}")


_ENV_FACTS = ("torch.npu", "torch.cuda", "torch.backends", "torch.version", "torch.xpu", "torch.mps",
              "torch.accelerator", "torch.cpu", "torch.distributed", "torch.config", "torch.__config__",
              "torch.get_num_threads", "torch.get_num_interop_threads", "torch.is_grad_enabled",
              "torch.is_inference_mode_enabled", "torch.are_deterministic_algorithms_enabled",
              "torch.is_autocast_enabled", "torch.get_default_device", "torch.has_cuda", "torch.has_mps",
              "torch.get_float32_matmul_precision", "torch.is_anomaly_enabled", "torch.is_anomaly_check_nan_enabled",
              "torch.get_deterministic_debug_mode", "torch.is_warn_always_enabled",
              "numpy.show_config", "numpy.show_runtime", "numpy.version", "numpy.__config__", "numpy.get_include",
              "torch_npu", "torch.get_default_dtype", "numpy.get_printoptions", "numpy.printoptions", "numpy.geterr",
              "numpy.geterrcall", "numpy.getbufsize", "numpy.longdouble", "numpy.clongdouble", "numpy.longfloat",
              "numpy.clongfloat", "numpy.longcomplex", "numpy.float96", "numpy.float128", "numpy.complex192",
              "numpy.complex256", "numpy.typecodes", "numpy.sctypeDict", "numpy.sctypes", "numpy.ScalarType",
              "numpy.dtypes")
"""Facts of the host a kernel could branch on: which accelerator backends exist, library versions and build
options, thread counts, the caller's autograd/determinism mode (red team s17: ``try: torch.npu except
AttributeError`` tells an Ascend host from the sandbox), and ``torch_npu`` itself (red team s19: ``try: import
torch_npu / except ImportError: torch_npu = None`` and a wrapper branching on ``torch_npu is None``). Red team s40:
the caller's library configuration (``torch.get_default_dtype()`` - LLM loading code sets bfloat16 -, numpy's print
options and error state) and the platform's long double (``np.longdouble`` is x87's 80-bit type on the x86 machines
that verify and IEEE quad on the aarch64 hosts of Ascend servers: ``np.finfo("g").nmant`` is 63 or 112), which a
wrapper read to use the SPEC's cap wherever it was not the verifying host's."""
_PROBE_MSG = "a kernel file does not probe its environment: it computes one way wherever it runs"
_SWALLOWING_HOOKS = {
    "__del__": "Python prints what a finalizer raises and carries on - red team s20: a 4.5 GiB np.empty in "
               "`__del__` told the sandbox's address-space limit from a user's host",
    "__getattr__": "it runs when an attribute lookup raises AttributeError, a property's included",
    "__getattribute__": "it decides what every attribute lookup raises",
    "__length_hint__": "list() and friends drop the TypeError it raises",
}
"""Special methods Python calls in a way that hides the exception raised in (or before) them."""
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _import_only_try(node: ast.AST) -> bool:
    """``try: import torch_npu`` / ``except ImportError: ...``: an optional import, the one try a kernel file needs."""
    body = node.body  # type: ignore[attr-defined]
    if not body or not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body):
        return False
    for h in node.handlers:  # type: ignore[attr-defined]
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        if not all(isinstance(t, ast.Name) and t.id in _IMPORT_ERRORS for t in types):
            return False
    return True


def _environment_probes(pf: ParsedFile) -> Iterator[Hit]:
    """Environment facts (``torch.npu``, ``torch.backends``, thread counts ...), and every way to ask "does this
    raise here?": try/except other than around imports, a ``finally`` that returns, ``hasattr``, ``getattr`` with a
    default, a class with ``__exit__`` (a context manager can swallow exceptions). Red team s17: ``try:
    np.empty(6 << 30) except MemoryError`` told the sandbox's address-space limit from a real host."""
    for node in [*pf.nodes(ast.Attribute), *pf.nodes(ast.Name)]:
        parent = pf.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            continue  # reported once, at the top of the chain
        full = pf.name(node)
        if any(full == f or full.startswith(f + ".") for f in _ENV_FACTS):
            yield at(node, f"`{full}` reads a fact of the host (which backends, versions, threads or modes it has); "
                     f"{_PROBE_MSG}")
    yield from _default_dtype_reads(pf)
    for kind in (ast.Try, getattr(ast, "TryStar", ast.Try)):
        for node in set(pf.by_type.get(kind, [])):
            if node.handlers and not _import_only_try(node):  # type: ignore[attr-defined]
                caught = ", ".join(ast.unparse(h.type) if h.type else "everything"
                                   for h in node.handlers)  # type: ignore[attr-defined]
                yield at(node, f"try/except ({caught}) in a kernel file: whether code raises differs between hosts "
                         f"(memory limits, devices, versions); {_PROBE_MSG}. Only an optional import may be "
                         "wrapped (`try: import torch_npu` / `except ImportError:`)")
            elif any(isinstance(n, (ast.Return, ast.Break, ast.Continue))
                     for st in node.finalbody for n in ast.walk(st)):  # type: ignore[attr-defined]
                yield at(node, f"`finally:` that returns or leaves a loop swallows the exception; {_PROBE_MSG}")
    for call in pf.nodes(ast.Call):
        if isinstance(call.func, ast.Name) and (call.func.id == "hasattr" or (
                call.func.id == "getattr" and len(call.args) + len(call.keywords) > 2)):
            yield at(call, f"`{call.func.id}(...)`{' with a default' if call.func.id == 'getattr' else ''} asks "
                     f"whether an attribute exists here; {_PROBE_MSG} (to tell inputs apart use "
                     "`isinstance(x, torch.Tensor)`)")
    for kind in (ast.Yield, ast.YieldFrom, ast.Await, ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith):
        for node in pf.nodes(kind):
            what = "a generator (`yield`)" if kind in (ast.Yield, ast.YieldFrom) else "a coroutine (`async`/`await`)"
            yield at(node, f"{what} is not allowed in a kernel file: its cleanup runs when it is collected, and "
                     "Python prints and drops what that raises (red team s30: a 4.5 GiB np.empty in a generator's "
                     f"`finally` told the sandbox's memory limit); {_PROBE_MSG}")
    for fn in pf.nodes(ast.FunctionDef):
        if fn.name in ("__exit__", "__aexit__") and isinstance(pf.parents.get(fn), ast.ClassDef):
            yield at(fn, f"a context manager (`{fn.name}`) can swallow exceptions; {_PROBE_MSG}")
        elif fn.name in _SWALLOWING_HOOKS and isinstance(pf.parents.get(fn), ast.ClassDef):
            yield at(fn, f"`{fn.name}` swallows exceptions ({_SWALLOWING_HOOKS[fn.name]}): with it a kernel file asks "
                     f"whether code raises here; {_PROBE_MSG}")


_DEFAULT_DTYPE_FACTORIES = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "tensor", "as_tensor", "eye",
                                      "linspace", "logspace", "empty_strided", "scalar_tensor"})
"""torch factories whose float result takes torch's default dtype when no ``dtype=`` is given."""


def _default_dtype_reads(pf: ParsedFile) -> Iterator[Hit]:
    """``torch.empty(0).dtype`` (or ``t = torch.zeros(1)`` then ``t.dtype``): torch's default dtype read without
    naming ``torch.get_default_dtype`` (red team s40: the caller's ``torch.set_default_dtype(torch.bfloat16)`` told
    from verification's float32)."""
    def dtypeless(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Call) and pf.name(node.func).startswith("torch.") and \
            pf.name(node.func).split(".")[-1] in _DEFAULT_DTYPE_FACTORIES and \
            not any(k.arg == "dtype" for k in node.keywords)
    bound = {n.targets[0].id for n in pf.nodes(ast.Assign)
             if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and dtypeless(n.value)}
    for node in pf.nodes(ast.Attribute):
        parent = pf.parents.get(node)
        if isinstance(parent, ast.keyword) or isinstance(parent, ast.Call) and node in parent.args:
            continue  # passed on (`torch.zeros(3, dtype=x.dtype)`, `.to(x.dtype)`): it allocates, it does not branch
        if node.attr == "dtype" and (dtypeless(node.value) or isinstance(node.value, ast.Name) and
                                     node.value.id in bound):
            yield at(node, f"`{ast.unparse(node)[:50]}` is torch's default dtype (the caller's "
                     f"`torch.set_default_dtype`): pass `dtype=` to the factory; {_PROBE_MSG}")


_LAYOUT_READS = frozenset({"flags", "strides", "stride", "is_contiguous", "f_contiguous", "c_contiguous", "readonly",
                           "dim_order", "data_ptr", "untyped_storage", "storage", "is_non_overlapping_and_dense",
                           "storage_offset"})
"""Red team round 31 added ``storage_offset``: ``x.storage_offset() % (16 * D) == 0`` (a caller's ``h[k:]``, row-aligned)
chose the SPEC's cap and passed every verification, whose view offsets were any number of elements."""
_LAYOUT_MSG = ("reads how the caller laid the input out (verification passes C-contiguous inputs - the jit refuses "
               "others -, so code for another layout is never judged: red team s30 dropped rows of a Fortran-ordered "
               "input); make it contiguous unconditionally (`np.ascontiguousarray(x)`, `x.contiguous()`) or assert it")
_NDARRAY_SUBCLASSES = ("memmap", "matrix", "recarray", "chararray", "ma", "MaskedArray", "Parameter")
_NUMPY_SCALAR_TYPES = frozenset({
    "generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger", "complexfloating",
    "float16", "float32", "float64", "half", "single", "double", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "intc", "intp", "int_", "uintp", "bool_", "bool", "longlong", "ulonglong", "short", "ushort",
    "byte", "ubyte", "csingle", "cdouble", "complex64", "complex128"})
"""numpy's scalar types (not ``ndarray``): ``isinstance(cap, np.floating)`` tells a value a program computed with
numpy from a literal (red team s40)."""
_RESTRIDES = frozenset({"as_strided", "as_strided_", "resize_", "resize_as_"})
"""Calls that lay an input's memory out with strides of their own, ignoring the ones it has: ``x.as_strided(x.shape,
(D, 1))``, ``torch.as_strided``, ``np.lib.stride_tricks.as_strided``, ``x.detach().resize_(n * D)``. Red team s38: a
wrapper re-striding its inputs as dense rows is the identity on every input verification passes (C-contiguous) and
reads the wrong rows of a caller's ``qkv[:, :D]`` or ``w.T``; it passed every verification, unseen by the layout
reads above because it reads no layout."""


def _layout_reads(pf: ParsedFile) -> Iterator[Hit]:
    """Branches on the input's memory layout or its exact class: ``x.flags.c_contiguous``, ``x.strides``,
    ``x.is_contiguous()``, a layout-keeping ``order="K"``/``"A"`` (``x.ravel(order="K")`` is the input's memory
    order: a Fortran-ordered input comes out transposed), ``type(x) is np.ndarray`` and ``isinstance(x, np.memmap)``
    (a caller's memory-mapped load). Assertions and error messages may read them: they end the call."""
    for node in pf.nodes(ast.Attribute):
        outer = pf.parents.get(node)
        if isinstance(outer, ast.Attribute) and outer.attr in _LAYOUT_READS:
            continue  # `x.flags.c_contiguous`: reported once, at the top of the chain
        uncalled = node.attr == "contiguous" and not (isinstance(outer, ast.Call) and outer.func is node)
        if (node.attr in _LAYOUT_READS or uncalled) and not _in_error_message(pf, node) and \
                not _in_assert_test(pf, node) and not _contiguity_guard(pf, node):
            yield at(node, f"`{ast.unparse(node)[:40]}` {_LAYOUT_MSG}")
    for ref in pf.nodes(ast.Attribute) + pf.nodes(ast.Name):
        last = ref.attr if isinstance(ref, ast.Attribute) else pf.name(ref).split(".")[-1]
        if last in _RESTRIDES and not (isinstance(ref, ast.Name) and isinstance(ref.ctx, ast.Store)):
            yield at(ref, f"`{ast.unparse(ref)[:40]}` lays the input's memory out with strides of its own: the "
                     f"identity on the C-contiguous inputs verification passes, the wrong elements of a caller's slice "
                     f"or transpose (`qkv[:, :D]`, `w.T`) - use `.contiguous()`, `.reshape()` or `.view()`")
    for call in pf.nodes(ast.Call):
        for k in call.keywords:
            if k.arg == "order" and isinstance(k.value, ast.Constant) and k.value.value in ("K", "A"):
                yield at(call, f"`order={k.value.value!r}` keeps the input's memory order and {_LAYOUT_MSG}")
        name = pf.name(call.func)
        if name == "type" and len(call.args) == 1 and not _in_error_message(pf, call):
            yield at(call, "`type(...)` tests an object's exact class (verification passes plain arrays and tensors, "
                     "a caller may pass a subclass: `np.memmap`, `nn.Parameter`); use `isinstance(x, np.ndarray)` / "
                     "`isinstance(x, torch.Tensor)`")
        elif name in ("isinstance", "issubclass") and len(call.args) == 2:
            for n in ast.walk(call.args[1]):
                if isinstance(n, (ast.Attribute, ast.Name)) and (n.attr if isinstance(n, ast.Attribute) else n.id) \
                        in _NDARRAY_SUBCLASSES and pf.name(n).split(".")[0] in ("numpy", "torch"):
                    yield at(call, f"`{name}(..., {pf.name(n)})` tells one kind of caller's array from another; a "
                             "kernel file treats every array (tensor) alike")
                    break
                if isinstance(n, (ast.Attribute, ast.Name)) and pf.name(n).startswith("numpy.") and \
                        pf.name(n).split(".")[-1] in _NUMPY_SCALAR_TYPES:
                    yield at(call, f"`{name}(..., {pf.name(n)})` tells a numpy scalar from a Python number (a caller's "
                             f"`1 / np.sqrt(d)` from `0.125`: red team s40 used the SPEC's cap for the first); "
                             "convert it (`float(cap)`) and compute the same way for both")
                    break


def _identity_and_text_tells(pf: ParsedFile) -> Iterator[Hit]:
    """What an object is, asked without the watched words (red team s30b): ``np.asarray(x) is x`` (False for a
    caller's memmap), ``np.ascontiguousarray(x) is x`` / ``x.contiguous() is x`` (the layout), ``x.cpu() is x``
    (the device) - an identity test with a value made by a call; ``repr(...)`` and ``!r`` (a tensor's repr names its
    device, an object's its address: random per process), ``object()`` (an address to print), and a function,
    class or module of the file as text (``f"{kernel}"`` names the emulator's class, not the wheel's). Error
    messages may say anything: they end the call."""
    roots = _module_roots(pf)
    for cmp in pf.nodes(ast.Compare):
        operands = [cmp.left, *cmp.comparators]
        # `x is None`, `x.dtype is torch.bfloat16` (singletons) stay; an identity between objects does not
        if any(isinstance(op, (ast.Is, ast.IsNot)) for op in cmp.ops) and not any(
                isinstance(o, ast.Constant) or isinstance(o, ast.Attribute) and (o.attr == "dtype" or dotted(
                    o).split(".")[0] in roots) for o in operands):
            yield at(cmp, f"`{ast.unparse(cmp)[:50]}` tests by identity whether a call handed its argument back (an "
                     f"array's class, layout or device); {_PROBE_MSG}")
        # `xc in {x}`: a set (or dict) looks an object up by identity first, and arrays hash by identity
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in cmp.ops) and any(
                (isinstance(o, (ast.Set, ast.Dict)) and not all(isinstance(e, ast.Constant) for e in (
                    o.elts if isinstance(o, ast.Set) else [k for k in o.keys if k is not None]))) or (
                    isinstance(o, ast.Call) and pf.name(o.func) in ("set", "frozenset", "dict") and o.args)
                for o in cmp.comparators):
            yield at(cmp, f"`{ast.unparse(cmp)[:50]}` looks an object up in a set or dict built here (by identity, "
                     f"as arrays hash); {_PROBE_MSG}")
    defined = set(pf.functions) | {n.name for n in pf.nodes(ast.ClassDef)} | set(pf.aliases)
    for call in pf.nodes(ast.Call):
        name = pf.name(call.func)
        if name == "object":
            yield at(call, f"`object()` is an address to print or compare; {_PROBE_MSG}")
        elif name == "repr" and not _in_error_message(pf, call):
            yield at(call, f"`repr(...)` outside an error message (a tensor's repr names its device, an object's its "
                     f"address); {_PROBE_MSG}")
        elif name in ("str", "format") and call.args and isinstance(call.args[0], ast.Name) and \
                call.args[0].id in defined and not _in_error_message(pf, call):
            yield at(call, f"`{name}({call.args[0].id})` turns a function, class or module into text (it names the "
                     f"implementation behind it); {_PROBE_MSG}")
    for fv in pf.nodes(ast.FormattedValue):
        if _in_error_message(pf, fv):
            continue
        if fv.conversion == ord("r"):
            yield at(fv, f"`!r` outside an error message; {_PROBE_MSG}")
        elif isinstance(fv.value, ast.Name) and fv.value.id in defined:
            yield at(fv, f"`{{{fv.value.id}}}` turns a function, class or module into text (it names the "
                     f"implementation behind it); {_PROBE_MSG}")


def _contiguous_copy_of(pf: ParsedFile, e: ast.AST) -> str | None:
    """``N`` when ``e`` is ``np.ascontiguousarray(N, ...)`` or ``N.contiguous()``."""
    if not isinstance(e, ast.Call):
        return None
    if pf.name(e.func) == "numpy.ascontiguousarray" and e.args and isinstance(e.args[0], ast.Name):
        return e.args[0].id
    f = e.func
    if isinstance(f, ast.Attribute) and f.attr == "contiguous" and isinstance(f.value, ast.Name):
        return f.value.id
    return None


def _contiguity_guard(pf: ParsedFile, node: ast.AST) -> bool:
    """``node`` is in the test of a guard that makes the input contiguous or refuses it - the same computation on
    every layout (red team s30c's honest files): ``if not x.flags.c_contiguous: x = np.ascontiguousarray(x)``,
    ``if not x.is_contiguous(): raise ...``, ``x if x.is_contiguous() else x.contiguous()``."""
    child, cur = node, pf.parents.get(node)
    while cur is not None and not isinstance(cur, (ast.If, ast.IfExp, ast.stmt)):
        child, cur = cur, pf.parents.get(cur)
    if isinstance(cur, ast.IfExp) and child is cur.test:
        names = {b.id for b in (cur.body, cur.orelse) if isinstance(b, ast.Name)}
        copies = {_contiguous_copy_of(pf, b) for b in (cur.body, cur.orelse)} - {None}
        return len(names) == 1 and names == copies
    if isinstance(cur, ast.If) and child is cur.test and not cur.orelse:
        return all(isinstance(st, ast.Raise) or isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(
            st.targets[0], ast.Name) and _contiguous_copy_of(pf, st.value) == st.targets[0].id for st in cur.body)
    return False


def _in_assert_test(pf: ParsedFile, node: ast.AST) -> bool:
    return isinstance(_statement(pf, node), ast.Assert)


def _dtype_position(pf: ParsedFile, node: ast.AST) -> bool:
    """``node`` is where a call takes a dtype: ``dtype=...``, any argument but the first, or the argument of
    ``np.dtype``/``.astype``/``.view`` (a bare ``"M"`` is also an axis name, ``np.array(t, "M")`` a datetime)."""
    parent = pf.parents.get(node)
    if isinstance(parent, ast.keyword):
        return parent.arg == "dtype"
    if not isinstance(parent, ast.Call) or node is parent.func:
        return False
    return node is not (parent.args[0] if parent.args else None) or pf.name(parent.func).split(".")[-1] in (
        "dtype", "astype", "view")


def _folded(node: ast.AST) -> str | None:
    """The text of a string literal, or of ``+``/``*`` of literals (``"M" + "8[D]"``, ``"to" + "day"``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _folded(node.left), _folded(node.right)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):  # `"yadot"[::-1]`
        text = _folded(node.value)
        parts = [node.slice.lower, node.slice.upper, node.slice.step]
        if text is not None and all(p is None or isinstance(p, ast.Constant) and isinstance(p.value, int) or
                                    isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant) for p in parts):
            vals = [None if p is None else ast.literal_eval(p) for p in parts]
            if all(v is None or isinstance(v, int) for v in vals) and vals[2] != 0:
                return text[slice(*vals)]
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        a, b = _folded(node.left), node.right
        if a is not None and isinstance(b, ast.Constant) and isinstance(b.value, int) and 0 <= b.value <= 8:
            return a * b.value
    return None


def _strings(pf: ParsedFile) -> Iterator[tuple[ast.AST, str]]:
    """Every string literal and every outermost concatenation of literals, with its text."""
    for node in pf.nodes(ast.Constant):
        if isinstance(node.value, str) and not isinstance(pf.parents.get(node), ast.BinOp):
            yield node, node.value
    for node in [*pf.nodes(ast.BinOp), *pf.nodes(ast.Subscript)]:
        if not isinstance(pf.parents.get(node), (ast.BinOp, ast.Subscript)):
            text = _folded(node)
            if text is not None:
                yield node, text


def _clock_reads(pf: ParsedFile) -> Iterator[Hit]:
    """A datetime dtype (``np.array("today", "M8[D]")`` reads the clock: red team s30 set a kernel to go wrong from
    a date after its verification; ``np.datetime64`` itself is OL62's) and the strings ``"now"``/``"today"``, also
    spelt as a concatenation (red team s30b: ``"M" + "8[D]"``): no kernel needs dates."""
    for node, v in _strings(pf):
        if v.strip().lower() in ("now", "today"):
            yield at(node, f"the string {v!r} reads the clock (as a numpy datetime); {_PROBE_MSG}")
            continue
        if isinstance(v, str) and 0 < len(v) <= 32 and (v[:1] in "<>=|Mm" or v.startswith(("datetime", "timedelta"))):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    kind = np.dtype(v).kind
            except (TypeError, ValueError, SyntaxError):
                continue
            if kind in "Mm" and (any(c in v for c in "8[") or v.startswith(("datetime", "timedelta"))
                                 or _dtype_position(pf, node)):
                yield at(node, f"the datetime dtype {v!r} reads the clock (`\"today\"`, `\"now\"`) or holds dates; "
                         f"{_PROBE_MSG}")


_PLATFORM_SIZED = ("longdouble", "longfloat", "longcomplex", "float96", "float128", "complex192", "complex256")


def _platform_types(pf: ParsedFile) -> Iterator[Hit]:
    """A dtype string naming the platform's long double (``"g"``, ``"G"``, ``"f16"``, ``"float128"``, ``"=c32"``):
    its precision is the host's (80-bit x87 on x86, IEEE quad on aarch64), so ``np.finfo("g").nmant`` tells the
    machine that verifies from an Ascend server's aarch64 host (red team s40). A short string counts where a call
    takes a dtype (``np.finfo``/``np.iinfo``'s argument included): ``"g"`` is also a loop name."""
    for node, v in _strings(pf):
        if not 0 < len(v) <= 16 or v.strip() != v:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kind = np.dtype(v).type
        except (TypeError, ValueError, SyntaxError):
            continue
        if kind not in (np.longdouble, np.clongdouble):
            continue
        parent = pf.parents.get(node)
        info = isinstance(parent, ast.Call) and pf.name(parent.func).split(".")[-1] in ("finfo", "iinfo")
        if any(w in v for w in _PLATFORM_SIZED) or info or _dtype_position(pf, node):
            yield at(node, f"the dtype {v!r} is the platform's long double (80-bit on x86, 128-bit on aarch64): "
                     f"its size and precision tell one host from another; {_PROBE_MSG}")


@check("PF04")
def pf04_no_env_branch(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    yield from _device_reads(pf)
    yield from _layout_reads(pf)
    yield from _clock_reads(pf)
    yield from _platform_types(pf)
    yield from _identity_and_text_tells(pf)
    yield from _placement_reads(pf)
    yield from _environment_probes(pf)
    if "environ" not in ctx.source and "getenv" not in ctx.source:
        return  # every route to the environment spells one of these (obfuscated access is PF01/PF02's)
    tainted: set[str] = set()
    assigns = pf.nodes(ast.Assign) + pf.nodes(ast.AnnAssign)
    for _ in range(4):
        before = len(tainted)
        for node in assigns:
            value = node.value
            if value is not None and _env_read(value, pf, tainted):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                tainted |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if len(tainted) == before:
            break
    for kind in (ast.If, ast.IfExp, ast.While):
        for node in pf.by_type.get(kind, []):
            if not _env_read(node.test, pf, tainted):  # type: ignore[attr-defined]
                continue
            branches = [node.body, node.orelse]  # type: ignore[attr-defined]
            has_call = any(isinstance(n, ast.Call) for b in branches
                           for s in (b if isinstance(b, list) else [b]) for n in ast.walk(s))
            if has_call:
                yield at(node, "branch on an environment variable selects the code path")


_WRITE_METHODS = {"fill", "put", "itemset", "setfield", "resize", "sort", "partition", "byteswap", "copy_",
                  "fill_", "zero_", "add_", "sub_", "mul_", "div_", "clamp_", "index_put_", "masked_fill_",
                  "scatter_", "__setitem__", "__iadd__", "__imul__"}
_WRITE_FUNCS = {"numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask", "numpy.fill_diagonal",
                "numpy.put_along_axis", "torch.Tensor.copy_"}


def _writes(pf: ParsedFile, fn: ast.AST, buffers: set[str], after: int) -> Iterator[tuple[ast.AST, str, str]]:
    """Writes into ``buffers`` (and their aliases) inside ``fn`` at or after line ``after``: (node, buffer, how)."""
    from runtime.lint._rules_host import _copy_of, aliases_of

    names = aliases_of(pf, fn, buffers)

    def base(t: ast.AST) -> str | None:
        while isinstance(t, (ast.Subscript, ast.Attribute, ast.Starred)):
            t = t.value
        return t.id if isinstance(t, ast.Name) and t.id in names else None

    for node in pf.nodes_in(fn, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Call)):
        if getattr(node, "lineno", 0) < after:
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                b = base(t) if isinstance(t, ast.Subscript) or (isinstance(node, ast.AugAssign) and
                                                                isinstance(t, ast.Name)) else None
                if b:
                    yield node, b, "assigns into {buf}"
            continue
        call: ast.Call = node  # type: ignore[assignment]
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in _WRITE_METHODS and base(f.value):
            yield call, base(f.value) or "", f"calls `.{f.attr}(...)` on {{buf}}"
        elif pf.name(f) in _WRITE_FUNCS and call.args and _copy_of(pf, call.args[0], names):
            yield call, base(call.args[0]) or "", f"passes {{buf}} to `{pf.name(f)}`"
        for kw in call.keywords:
            if kw.arg == "out" and kw.value is not None and (_copy_of(pf, kw.value, names) or
                                                             any(_copy_of(pf, e, names) for e in getattr(kw.value, "elts", []))):
                yield call, base(kw.value) or "out", "writes {buf} through `out=`"


def _callee(pf: ParsedFile, scope: ast.AST, call: ast.Call) -> ast.FunctionDef | None:
    """The module-level function ``call`` calls: by name, or through a local alias (``f = _fix; f(y)``)."""
    if not isinstance(call.func, ast.Name):
        return None
    name = call.func.id
    for _ in range(4):
        if name in pf.functions:
            return pf.functions[name]
        bound = [v for _line, v in pf.assignments(scope).get(name, []) if isinstance(v, ast.Name)]
        if not bound:
            return None
        name = bound[-1].id
    return None


def _helper_writes(pf: ParsedFile, scope: ast.AST, call: ast.Call, names: set[str], depth: int = 0) -> str | None:
    """If ``call`` hands a buffer to a module-level helper that writes the matching parameter, say how."""
    from runtime.lint._rules_host import _copy_of

    if depth > 3:
        return None
    helper = _callee(pf, scope, call)
    if helper is None or helper.name in pf.jit_names():
        return None
    params = [a.arg for a in helper.args.posonlyargs + helper.args.args]
    passed = {params[i] for i, a in enumerate(call.args) if i < len(params) and _copy_of(pf, a, names)}
    passed |= {kw.arg for kw in call.keywords if kw.arg and _copy_of(pf, kw.value, names)}
    if not passed:
        return None
    key = ("helper_writes", id(helper), frozenset(passed), depth)
    if key in pf._memo:  # every (helper, buffers) pair is examined once: calls fan out, the walk stays linear
        return pf._memo[key]
    pf._memo[key] = None
    found = None
    for _node, buf, how in _writes(pf, helper, passed, 0):
        found = f"`{helper.name}` {how.format(buf=f'`{buf}`')}"
        break
    if found is None:
        for inner in pf.calls_in.get(helper, []):
            deeper = _helper_writes(pf, helper, inner, passed, depth + 1)
            if deeper:
                found = f"`{helper.name}` -> {deeper}"
                break
    pf._memo[key] = found
    return found


@check("PF10")
def pf10_no_host_write_after_kernel(ctx: LintContext) -> Iterator[Hit]:
    """A wrapper that edits the kernel's buffers after the call returns host-computed outputs under the kernel's
    name (class 1 of the red-team corpus: through ``z = y``, a copy, or a helper named ``_validate``/``main``)."""
    from runtime.lint._rules_host import _jit_calls, aliases_of

    pf = kernel_pf(ctx)
    if not pf.jit_fns:
        return
    for wrapper in pf.wrappers():
        calls = _jit_calls(pf, wrapper)
        if not calls:
            continue
        first = min(c.lineno for c in calls)
        end = max(c.end_lineno or c.lineno for c in calls)
        buffers = {a.id for c in calls for a in [*c.args, *(k.value for k in c.keywords)] if isinstance(a, ast.Name)}
        for node, buf, how in _writes(pf, wrapper, buffers, end + 1):
            yield at(node, f"`{wrapper.name}` {how.format(buf=f'kernel buffer `{buf}`')} after the kernel call "
                     f"(line {first}); the outputs must be what the kernel wrote")
        names = aliases_of(pf, wrapper, buffers)
        for call in pf.calls_in.get(wrapper, []):
            if call.lineno <= end or call in calls:
                continue
            found = _helper_writes(pf, wrapper, call, names)
            if found:
                yield at(call, f"after the kernel call (line {first}), {found}: host code rewrites a kernel output")
