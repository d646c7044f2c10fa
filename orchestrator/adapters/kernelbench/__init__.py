"""KernelBench-format task files as PTO Forge op dirs: ``python -m orchestrator import TASK.py DEST``.

See docs/kernelbench.md. The gym operator importer is :mod:`orchestrator.gym`; the ``import`` command picks
this one when its source is a task file (``class Model`` + ``get_inputs()``).
"""

from orchestrator.adapters.kernelbench._importer import (
    TOLERANCE,
    TaskImport,
    TaskImportError,
    import_task,
    is_task_file,
    task_op_name,
)

__all__ = ["TOLERANCE", "TaskImport", "TaskImportError", "import_task", "is_task_file", "task_op_name"]
