"""Read-only tools for the roles' bounded tool loops (see :mod:`agents.tools._toolbox`)."""

from agents.tools._toolbox import ROLE_TOOLS, ToolBox, ToolSpec

__all__ = ["ROLE_TOOLS", "ToolBox", "ToolSpec"]
