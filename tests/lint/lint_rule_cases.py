"""One triggering source and one close non-triggering variant per implemented rule.

``CASES[rule_id]`` is a list of :class:`Case`; ``test_rules.py`` runs each, and ``test_coverage.py`` checks
that the implemented rules of ``runtime.lint.RULES`` and these cases cover each other one to one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FIX = Path(__file__).parent / "fixtures" / "ops"
SILU = FIX / "silu"
SOFTMAX = FIX / "softmax_rows"
BASE = (SILU / "silu_impl.py").read_text(encoding="utf-8")
STAGE1 = (SOFTMAX / "modules" / "softmax_rows_module1_impl.py").read_text(encoding="utf-8")
STAGE12 = (SOFTMAX / "modules" / "softmax_rows_module12_impl.py").read_text(encoding="utf-8")
DESIGN = (SILU / "DESIGN.md").read_text(encoding="utf-8")
YAML2 = (SOFTMAX / "module_interfaces.yaml").read_text(encoding="utf-8")
GOLDEN = (SILU / "golden.py").read_text(encoding="utf-8")
MEMORY = (SILU / "MEMORY.md").read_text(encoding="utf-8")
MULTI = (FIX / "silu_multi" / "silu_multi_impl.py").read_text(encoding="utf-8")

ASSEMBLE = "pypto.assemble(yt, [i * ROW_TILE, 0], y)"
WRAPPER_CALL = "    silu_kernel(x, y)\n"


@dataclass(frozen=True)
class Case:
    """``bad`` must produce a non-PASS finding of the rule (with ``status``); ``good`` must produce none."""

    name: str
    bad: str
    good: str
    filename: str = "silu_impl.py"
    stage: str = "final"
    op_dir: Path | None = None
    previous_stage: Path | None = None
    status: str = "FAIL"


def sub(text: str, old: str, new: str) -> str:
    assert old in text, f"fixture does not contain {old!r}"
    return text.replace(old, new)


NO_LOOP = '''import numpy as np
import pypto


@pypto.frontend.jit
def silu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = x * pypto.sigmoid(x)


def silu_wrapper(x):
    y = np.empty_like(x)
    silu_kernel(x, y)
    return y
'''

BF16 = '''import numpy as np
import pypto


@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16), y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(pypto.ceildiv(x.shape[0], 16), name="r", idx_name="i"):
        xt = pypto.view(x, [16, 64], [i * 16, 0])  # [16, 64]
        BODY
        pypto.assemble(pypto.cast(yt, pypto.DT_BF16), [i * 16, 0], y)


def k_wrapper(x):
    y = np.empty_like(x)
    k(x, y)
    return y
'''

STAGE_FILE = "modules/softmax_rows_module12_impl.py"
M1_LINE = "        mx = pypto.amax(xt, -1, keepdim=True)  # [ROWS, 1]\n"

CASES: dict[str, list[Case]] = {
    "OL01": [
        Case("aliased jit", sub(BASE, "@pypto.frontend.jit", "@jit").replace("ROW_TILE = 16", "jit = pypto.frontend.jit\nROW_TILE = 16"), BASE),
        Case("second kernel aliased", BASE.replace("ROW_TILE = 16", "jit = pypto.frontend.jit\nROW_TILE = 16")
             + "\n\n@jit\ndef other(a: pypto.Tensor([8], pypto.DT_FP32)):\n    pass\n",
             BASE + "\n\n@pypto.frontend.jit\ndef other(a: pypto.Tensor([8], pypto.DT_FP32)):\n    pass\n"),
    ],
    "OL02": [Case("param rebound", sub(BASE, ASSEMBLE, "y = yt"),
                  sub(BASE, ASSEMBLE, "y[i * ROW_TILE:(i + 1) * ROW_TILE, :] = yt"))],
    "OL03": [Case("return", sub(BASE, "        " + ASSEMBLE + "\n", "        " + ASSEMBLE + "\n    return\n"), BASE)],
    "OL04": [Case("no tiles", sub(BASE, "    pypto.set_vec_tile_shapes(ROW_TILE, 64)\n", ""),
                  sub(BASE, "    pypto.set_vec_tile_shapes(ROW_TILE, 64)\n", "    set_tiles()\n")
                  .replace("@pypto.frontend.jit", "def set_tiles():\n    pypto.set_vec_tile_shapes(ROW_TILE, 64)\n\n\n@pypto.frontend.jit"))],
    "OL05": [Case("unannotated", sub(BASE, "    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),", "    x,"),
                  sub(BASE, "    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),\n",
                      "    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),\n    scale: float = 1.0,\n")),
             Case("numpy annotation", sub(BASE, "    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),", "    x: np.ndarray,"), BASE)],
    "OL06": [Case("builtin min", sub(BASE, "(rows - i * ROW_TILE).min(ROW_TILE)", "min(rows - i * ROW_TILE, ROW_TILE)"), BASE)],
    "OL07": [Case("alias", BASE.replace("import pypto\n", "import pypto as pt\n").replace("pypto.", "pt."), BASE),
             Case("from import", sub(BASE, "import pypto\n", "import pypto\nfrom pypto import frontend\n"), BASE)],
    "OL08": [Case("no wrapper", BASE.replace("silu_wrapper", "launch_silu"), BASE)],
    "OL15": [Case("golden imports pypto", "import pypto\n" + GOLDEN, GOLDEN, filename="golden.py", stage="design"),
             Case("golden .T", GOLDEN.replace("return y.astype(x.dtype)", "return y.T.astype(x.dtype)"), GOLDEN,
                  filename="golden.py", stage="design", status="WARN")],
    "OL16": [Case("imports golden", sub(BASE, "import pypto\n", "import pypto\nfrom golden import golden\n"), BASE)],
    "OL23": [Case("no loop", NO_LOOP, BASE, status="WARN")],
    "OL25": [Case("empty Tensor()", sub(BASE, "x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32)", "x: pypto.Tensor()"), BASE),
             Case("no dtype", sub(BASE, "x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32)", "x: pypto.Tensor([pypto.DYNAMIC, COLS])"),
                  BASE, status="WARN")],
    "OL26": [Case("tensor after scalar",
                  sub(BASE, "    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),\n",
                      "    scale: float,\n    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),\n"),
                  sub(BASE, "    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),\n",
                      "    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),\n    scale: float,\n"))],
    "OL28": [Case("sigmoid on bf16", BF16.replace("BODY", "yt = xt * pypto.sigmoid(xt)  # [16, 64]"),
                  BF16.replace("BODY", "xf = pypto.cast(xt, pypto.DT_FP32)  # [16, 64]\n        yt = xf * pypto.sigmoid(xf)  # [16, 64]"),
                  filename="k_impl.py", status="WARN")],
    "OL29": [Case("all static", BASE.replace("pypto.DYNAMIC", "64"), BASE, status="WARN")],
    "OL31": [Case("design dynamic, kernel static", BASE.replace("pypto.DYNAMIC", "64"), BASE, op_dir=SILU)],
    "OL33": [Case("wrapper arity", sub(BASE, "def silu_wrapper(x):", "def silu_wrapper(x, scale):"),
                  sub(BASE, "def silu_wrapper(x):", "def silu_wrapper(x, scale=1.0):"), op_dir=SILU, status="WARN")],
    "OL37": [Case("names differ from DESIGN", BASE.replace("xt", "a_tile").replace("yt", "b_tile").replace("valid", "v"),
                  BASE, op_dir=SILU, status="INFO")],
    "OL41": [Case("pasted lint", sub(BASE, "ROW_TILE = 16\n", "ROW_TILE = 16\n# blocking_rules: OL03\n"), BASE)],
    "OL43": [Case("dynamic design, no loop", NO_LOOP, BASE, op_dir=SILU)],
    "OL45": [Case("kernel in host loop", sub(BASE, WRAPPER_CALL,
                  "    for r in range(0, x.shape[0], 16):\n        silu_kernel(x[r:r + 16], y[r:r + 16])\n"), BASE),
             Case("kernel called twice", sub(BASE, WRAPPER_CALL, WRAPPER_CALL + WRAPPER_CALL), BASE),
             Case("factory kernel never called", sub(MULTI, "    kern(x, y)\n", ""), MULTI, filename="silu_multi_impl.py")],
    "OL46": [Case("loop(1) next to a loop", sub(BASE, "    for i in pypto.loop(",
                                                '    for _once in pypto.loop(1, name="once", idx_name="o"):\n'
                                                "        pypto.set_vec_tile_shapes(ROW_TILE, 64)\n    for i in pypto.loop("),
                  BASE, status="WARN")],
    "OL47": [Case("tiles once for stages",
                  "import pypto\n\n\ndef op_impl(x, y):\n    pypto.set_vec_tile_shapes(16, 64)\n    pypto_stage_a(x)\n    pypto_stage_b(y)\n",
                  "import pypto\n\n\ndef op_impl(x, y):\n    pypto_stage_a(x)\n    pypto_stage_b(y)\n",
                  filename="op_impl.py", status="INFO")],
    "OL48": [Case("runtime tile", sub(BASE, "pypto.set_vec_tile_shapes(ROW_TILE, 64)", "pypto.set_vec_tile_shapes(rows, 64)"),
                  sub(BASE, "pypto.set_vec_tile_shapes(ROW_TILE, 64)", "pypto.set_vec_tile_shapes(ROW_TILE, 2 * 32)")),
             Case("cube L0 > L1", sub(BASE, "    pypto.set_vec_tile_shapes(ROW_TILE, 64)\n",
                  "    pypto.set_vec_tile_shapes(ROW_TILE, 64)\n    pypto.set_cube_tile_shapes([128, 64], [128, 128], [128, 128])\n"),
                  sub(BASE, "    pypto.set_vec_tile_shapes(ROW_TILE, 64)\n",
                      "    pypto.set_vec_tile_shapes(ROW_TILE, 64)\n    pypto.set_cube_tile_shapes([64, 128], [128, 128], [128, 128])\n"))],
    "OL49": [Case("unroll on outer loop",
                  sub(BASE, 'for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):',
                      'for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):\n'
                      '      for j in pypto.loop(1, name="inner", idx_name="j"):'),
                  sub(BASE, 'for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):',
                      'for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i"):\n'
                      '      for j in pypto.loop(1, name="inner", idx_name="j", unroll_list=[1]):'))],
    "OL50": [Case("wrong parameter", sub(BASE, "def silu_wrapper(x):\n    y = np.empty_like(x)",
                                         "def silu_wrapper(inp):\n    x = inp\n    y = np.empty_like(x)"), BASE, op_dir=SILU),
             Case("wrong wrapper name", STAGE12.replace("softmax_rows_module12_wrapper", "softmax_rows_module1_wrapper"),
                  STAGE12, filename=STAGE_FILE, stage="module", op_dir=SOFTMAX),
             Case("stub not marked", STAGE12.replace("def softmax_rows_module12_wrapper(x):", "def softmax_rows_module12_wrapper(x, e_in):"),
                  STAGE12.replace("def softmax_rows_module12_wrapper(x):",
                                  "def softmax_rows_module12_wrapper(\n    x,\n    e_in=None,  # STUB: until M1 verified; golden-fed tensor\n):"),
                  filename=STAGE_FILE, stage="module", op_dir=SOFTMAX)],
    "OL51": [Case("copy of input", sub(BASE, ASSEMBLE, "pypto.assemble(xt, [i * ROW_TILE, 0], y)"), BASE),
             Case("output not written", STAGE12.replace("        pypto.assemble(st, [i * ROWS, 0], rowsum)\n", ""),
                  STAGE12, filename=STAGE_FILE, stage="module", op_dir=SOFTMAX)],
    "OL52": [Case("view rank", sub(BASE, "[i * ROW_TILE, 0], valid_shape", "[i * ROW_TILE], valid_shape"), BASE)],
    "OL53": [Case("row not done", MEMORY.replace("| 20 | ✅ |", "| | ❌ |"), MEMORY, filename="MEMORY.md", status="WARN"),
             Case("empty status", MEMORY.replace("| 20 | ✅ |", "| 20 | |"), MEMORY, filename="MEMORY.md", status="WARN")],
    "OL55": [Case("unknown api", sub(BASE, "pypto.sigmoid(xt)", "pypto.silu(xt)"), BASE),
             Case("unknown api in DESIGN", DESIGN.replace("pypto.sigmoid(xt)", "pypto.empty_like(xt)"), DESIGN,
                  filename="DESIGN.md", stage="design")],
    "OL56": [Case("multi unroll", sub(BASE, "unroll_list=[1]", "unroll_list=[4, 2, 1]"), BASE, status="FAIL"),
             Case("multi unroll through a name", sub(BASE, "unroll_list=[1]", "unroll_list=UNROLL")
                  .replace("ROW_TILE = 16", "UNROLL = [4, 2, 1]\nROW_TILE = 16"),
                  sub(BASE, "unroll_list=[1]", "unroll_list=UNROLL").replace("ROW_TILE = 16", "UNROLL = [1]\nROW_TILE = 16"),
                  status="FAIL"),
             Case("multi unroll in DESIGN", DESIGN.replace("unroll_list=[1]", "unroll_list=[4, 2, 1]"), DESIGN,
                  filename="DESIGN.md", stage="design", status="FAIL")],
    "OL57": [Case("for over list", sub(BASE, "        yt = xt * pypto.sigmoid(xt)  # [ROW_TILE, COLS]\n",
                  "        yt = xt\n        for _rep in [0, 1]:\n            yt = yt * pypto.sigmoid(xt)\n"),
                  sub(BASE, "        yt = xt * pypto.sigmoid(xt)  # [ROW_TILE, COLS]\n",
                      "        yt = xt\n        for _rep in range(2):\n            yt = yt * pypto.sigmoid(xt)\n")),
             Case("while", sub(BASE, "        yt = xt * pypto.sigmoid(xt)  # [ROW_TILE, COLS]\n",
                  "        yt = xt * pypto.sigmoid(xt)\n        while False:\n            pass\n"), BASE)],
    "OL58": [Case("pypto alloc in wrapper", sub(BASE, "y = np.empty_like(x)", "y = pypto.zeros([x.shape[0], COLS])"), BASE),
             Case("module-level output buffer", sub(BASE, "def silu_wrapper(x):\n    y = np.empty_like(x)\n    silu_kernel(x, y)\n    return y",
                  "out = np.empty((64, COLS), dtype=np.float32)\n\n\ndef silu_wrapper(x):\n    silu_kernel(x, out)\n    return out"),
                  sub(BASE, "def silu_wrapper(x):\n    y = np.empty_like(x)\n    silu_kernel(x, y)\n    return y",
                      "def silu_wrapper(x):\n    out = np.empty((x.shape[0], COLS), dtype=np.float32)\n    silu_kernel(x, out)\n    return out"))],
    "OL61": [Case("literal first", sub(BASE, "xt * pypto.sigmoid(xt)", "pypto.mul(2.0, pypto.sigmoid(xt))"),
                  sub(BASE, "xt * pypto.sigmoid(xt)", "pypto.mul(pypto.sigmoid(xt), 2.0)")),
             Case("Element in mul", sub(BASE, "xt * pypto.sigmoid(xt)", "pypto.mul(xt, pypto.Element(pypto.DT_FP32, 2.0))"),
                  sub(BASE, "xt * pypto.sigmoid(xt)", "pypto.maximum(xt, pypto.Element(pypto.DT_FP32, 2.0))")),
             Case("illegal cast", BF16.replace("BODY", "yt = pypto.cast(xt, pypto.DT_FP16)  # [16, 64]"),
                  BF16.replace("BODY", "yt = pypto.cast(pypto.cast(xt, pypto.DT_FP32), pypto.DT_BF16)  # [16, 64]"),
                  filename="k_impl.py"),
             Case("positional dtype", sub(BASE, "yt = xt * pypto.sigmoid(xt)", "yt = xt * pypto.sigmoid(xt) + pypto.zeros([16, 256], pypto.DT_FP32)"),
                  sub(BASE, "yt = xt * pypto.sigmoid(xt)", "yt = xt * pypto.sigmoid(xt) + pypto.zeros([16, 256], dtype=pypto.DT_FP32)"))],
    "OL62": [Case("numpy math in wrapper", sub(BASE, "    return y\n", "    y = x / (1.0 + np.exp(-x))\n    return y\n"), BASE),
             Case("matmul operator", sub(BASE, "    return y\n", "    return y @ y\n"), BASE),
             Case("torch math", sub(BASE, "import numpy as np\n", "import numpy as np\nimport torch\n").replace("    return y\n", "    return torch.sigmoid(y)\n"),
                  sub(BASE, "import numpy as np\n", "import numpy as np\nimport torch\n").replace("    return y\n", "    return torch.from_numpy(y)\n")),
             Case("torch math vs a torch copy", sub(BASE, "import numpy as np\n", "import numpy as np\nimport torch\n").replace("    return y\n", "    return torch.exp(y)\n"),
                  sub(BASE, "import numpy as np\n", "import numpy as np\nimport torch\n").replace("    return y\n", "    return torch.clone(y)\n")),
             Case("method math", sub(BASE, "    return y\n", "    return y.sum()\n"), sub(BASE, "    return y\n", "    return y.reshape(x.shape)\n")),
             Case("function reference", sub(BASE, "    return y\n", "    load = np.load\n    return load('golden.npy')\n"),
                  sub(BASE, "    return y\n", "    alloc = np.empty_like\n    return alloc(y)\n")),
             Case("arithmetic on input", sub(BASE, "    silu_kernel(x, y)\n", "    silu_kernel(x * 0.5, y)\n"),
                  sub(BASE, "    silu_kernel(x, y)\n", "    silu_kernel(x.reshape(x.shape[0] * 1, COLS), y)\n")),
             Case("host copy of input", sub(BASE, "    silu_kernel(x, y)\n", "    silu_kernel(x, y)\n    y[:] = x\n"),
                  sub(BASE, "    silu_kernel(x, y)\n", "    y[:] = 0.0\n    silu_kernel(x, y)\n")),
             Case("in-place host math", sub(BASE, "    return y\n", "    y += 1.0\n    return y\n"), BASE)],
    "PF00": [Case("syntax error", sub(BASE, "def silu_wrapper(x):", "def silu_wrapper(x:"), BASE)],
    "PF01": [Case("import os", sub(BASE, "import numpy as np\n", "import numpy as np\nimport os\n"), BASE),
             Case("future import", "from __future__ import annotations\n" + BASE,
                  sub(BASE, "import numpy as np\n", "import math\nfrom typing import Any\nimport numpy as np\n"))],
    "PF02": [Case("open", sub(BASE, "    return y\n", "    open('/tmp/x', 'w').write('pwned')\n    return y\n"), BASE),
             Case("monkeypatch", sub(BASE, "ROW_TILE = 16\n", "ROW_TILE = 16\nnp.allclose = lambda *a, **k: True\n"), BASE),
             Case("computed getattr", sub(BASE, "    y = np.empty_like(x)\n", "    y = getattr(np, 'empty' + '_like')(x)\n"),
                  sub(BASE, "    y = np.empty_like(x)\n", "    y = np.empty_like(x) if hasattr(x, 'shape') else None\n")),
             Case("getattr on module", sub(BASE, "    y = np.empty_like(x)\n", "    y = getattr(np, 'empty_like')(x)\n"),
                  sub(BASE, "    y = np.empty_like(x)\n", "    y = getattr(x, 'copy')()\n")),
             Case("globals", sub(BASE, "    return y\n", "    globals()['silu_kernel'] = None\n    return y\n"), BASE),
             Case("dunder", sub(BASE, "    return y\n", "    return y.__class__.__subclasses__()\n"), BASE),
             Case("module reached through an allowed module", sub(BASE, "import numpy as np\n", "import dataclasses\n\nimport numpy as np\n").replace(
                 "    return y\n", "    env = dataclasses.sys.modules['os'].environ\n    return y\n"), BASE),
             Case("module object held in a variable", sub(BASE, "import numpy as np\n", "import typing\n\nimport numpy as np\n").replace(
                 "    return y\n", "    m = typing\n    s = m.sys\n    return y\n"), BASE),
             Case("raw memory of an array", sub(BASE, "    return y\n", "    p = y.ctypes.data\n    return y\n"), BASE),
             Case("numpy file io", sub(BASE, "    return y\n", "    g = np.load('golden.npz')\n    return y\n"), BASE)],
    "PF03": [Case("swallow kernel error", sub(BASE, WRAPPER_CALL, "    try:\n        silu_kernel(x, y)\n    except Exception:\n        y[:] = 0\n"),
                  sub(BASE, WRAPPER_CALL, "    try:\n        silu_kernel(x, y)\n    finally:\n        pass\n")),
             Case("swallow factory kernel error", sub(MULTI, "    kern(x, y)\n", "    try:\n        kern(x, y)\n    except RuntimeError:\n        pass\n"),
                  MULTI, filename="silu_multi_impl.py")],
    "PF04": [Case("env switch", sub(BASE, "import numpy as np\n", "import os\n\nimport numpy as np\n").replace(
                  WRAPPER_CALL, "    if os.environ.get('PTO_VERIFY'):\n        silu_kernel(x, y)\n    else:\n        y[:] = 0\n"),
                  sub(BASE, "import numpy as np\n", "import os\n\nimport numpy as np\n").replace(
                      WRAPPER_CALL, "    if x.shape[0] > 0:\n        silu_kernel(x, y)\n    else:\n        y[:] = 0\n"))],
    "PF11": [Case("module-level list counts the calls", sub(BASE, "    y = np.empty_like(x)\n",
                                                            "    _SEEN.append(1)\n    y = np.empty_like(x)\n")
                  + "\n\n_SEEN = []\n",
                  sub(BASE, "    y = np.empty_like(x)\n", "    y = np.empty_like(x[_ROWS[0]:])\n") + "\n\n_ROWS = [0]\n"),
             Case("global counter", sub(BASE, "    y = np.empty_like(x)\n",
                                        "    global _N\n    _N = 1\n    y = np.empty_like(x)\n") + "\n\n_N = 0\n",
                  BASE + "\n\n_N = 0\n"),
             Case("mutable default argument", sub(BASE, "def silu_wrapper(x):", "def silu_wrapper(x, _s=[]):"),
                  sub(BASE, "def silu_wrapper(x):", "def silu_wrapper(x, _s=()):"))],
    "PF10": [Case("alias written after the kernel", sub(BASE, "    return y\n", "    z = y\n    z[:] = 0.5\n    return y\n"),
                  sub(BASE, "    return y\n", "    z = y\n    return z\n")),
             Case("helper named _validate fixes the output", sub(BASE, "    return y\n", "    _validate(y)\n    return y\n")
                  + "\n\ndef _validate(o):\n    o.fill(0.0)\n",
                  sub(BASE, "    return y\n", "    _validate(y)\n    return y\n") + "\n\ndef _validate(o):\n    assert o.shape[0] > 0\n"),
             Case("out= after the kernel", sub(BASE, "    return y\n", "    np.copyto(y, x)\n    return y\n"), BASE)],
    "PF05": [Case("frozen module edited", STAGE12.replace(M1_LINE, "        mx = pypto.amax(xt, 1, keepdim=True)  # [ROWS, 1]\n"),
                  STAGE12.replace(M1_LINE, M1_LINE.rstrip("\n") + "   \n"), filename=STAGE_FILE, stage="module", op_dir=SOFTMAX,
                  previous_stage=SOFTMAX / "modules" / "softmax_rows_module1_impl.py")],
    "PF06": [Case("bad module source", YAML2.replace("{name: e, source: module_1}", "{name: e, source: module_3}"), YAML2,
                  filename="module_interfaces.yaml", stage="design", op_dir=SOFTMAX),
             Case("bad dtype and shape", YAML2.replace("{name: y, shape: [B, N], dtype: float32}", "{name: y, shape: [B, 'N**2'], dtype: float33}"),
                  YAML2, filename="module_interfaces.yaml", stage="design")],
    "PF07": [Case("front matter without dynamic_axes", DESIGN.replace("dynamic_axes: [B]\n", ""), DESIGN.replace("dynamic_axes: [B]\n", "dynamic_axes: []\n"),
                  filename="DESIGN.md", stage="design")],
    "OL12": [Case("missing tiling section", DESIGN.replace("## Tiling", "## Tile sizes"), DESIGN.replace("## Tiling", "## Tiling and data partitioning"),
                  filename="DESIGN.md", stage="design")],
    "PF08": [Case("stub left in final", sub(BASE, "def silu_wrapper(x):", "def silu_wrapper(x):  # STUB: until M1 verified; golden-fed tensor"), BASE)],
    "PF09": [Case("missing marker", STAGE12.replace("        # --- Module M2: normalize ---\n", ""), STAGE12,
                  filename=STAGE_FILE, stage="module"),
             Case("marker outside kernel", STAGE1.replace("def softmax_rows_module1_wrapper", "# --- Module M2: normalize ---\ndef softmax_rows_module1_wrapper"),
                  STAGE1, filename="modules/softmax_rows_module1_impl.py", stage="module")],
}
