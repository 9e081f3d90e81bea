"""meta-tools: a hierarchical tool router for LLM agents.

The main agent sees a few category tools (`MetaManager`); each category
(`CategoryManager`) picks, runs and checks concrete tools (`BaseTool`).
"""

from .category.manager import CategoryManager
from .category.result import CategoryResult, Execution, RunUsage
from .config import MetaToolsConfig
from .exceptions import (
    CategoryNotFoundError,
    ConfigError,
    MetaToolsError,
    ModelError,
    ToolArgumentsError,
    ToolDefinitionError,
    ToolError,
)
from .router.manager import MetaManager
from .tools import BaseTool, FunctionTool, ToolContext, ToolOutcome, ToolPack, ToolParameter, tool

__all__ = [
    "BaseTool",
    "CategoryManager",
    "CategoryNotFoundError",
    "CategoryResult",
    "ConfigError",
    "Execution",
    "FunctionTool",
    "MetaManager",
    "MetaToolsConfig",
    "MetaToolsError",
    "ModelError",
    "RunUsage",
    "ToolArgumentsError",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "ToolOutcome",
    "ToolPack",
    "ToolParameter",
    "tool",
]
