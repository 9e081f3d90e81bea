"""meta-tools: a hierarchical tool router for LLM agents.

The main agent sees a few category tools (`MetaManager`, level 3); each
category (`CategoryManager`, level 2) picks, runs and checks concrete tools
(`BaseTool`, level 1). This top level holds the names of the quick start and
what their documented behaviour needs; the rest lives in sub-namespaces:

    meta_tools              MetaManager, MainAgent, MetaToolsConfig, CategoryManager,
                            CategoryResult, Limits, RunSuspended, SuspendedRun, tool,
                            FunctionTool, BaseTool, ToolPack, ToolParameter, ToolContext,
                            MetaToolsError, ConfigError, ModelError
    meta_tools.llm          models and chat types: OpenAIChatModel, DashScopeChatModel,
                            ScriptedModel, ChatModel, GenerationOptions, Message, ...
    meta_tools.events       what a run reports step by step (RunEvent, ToolFinished, ...)
    meta_tools.exceptions   the one exception family, drawn in its docstring
    meta_tools.tracing      JsonlTrace, Tracer
    meta_tools.tools.mcp    McpToolSource, McpServerTool
    meta_tools.category     Execution, RunUsage

Each name is imported on first use, so that importing one module of the package (the
command's `--version`, a tool server) does not load every level and the MCP SDK.
A name that moved to a sub-namespace still resolves here, with a `DeprecationWarning`
naming its new import.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .agent import MainAgent
    from .category import CategoryManager, CategoryResult
    from .category.limits import Limits
    from .category.suspend import RunSuspended, SuspendedRun
    from .config import MetaToolsConfig
    from .exceptions import ConfigError, MetaToolsError, ModelError
    from .router import MetaManager
    from .tools import BaseTool, FunctionTool, ToolContext, ToolPack, ToolParameter, tool

__all__ = [
    "BaseTool",
    "CategoryManager",
    "CategoryResult",
    "ConfigError",
    "FunctionTool",
    "Limits",
    "MainAgent",
    "MetaManager",
    "MetaToolsConfig",
    "MetaToolsError",
    "ModelError",
    "RunSuspended",
    "SuspendedRun",
    "ToolContext",
    "ToolPack",
    "ToolParameter",
    "tool",
]

#: The module each public name is imported from.
_HOMES = {
    "BaseTool": ".tools",
    "CategoryManager": ".category",
    "CategoryResult": ".category",
    "ConfigError": ".exceptions",
    "FunctionTool": ".tools",
    "Limits": ".category.limits",
    "MainAgent": ".agent",
    "MetaManager": ".router",
    "MetaToolsConfig": ".config",
    "MetaToolsError": ".exceptions",
    "ModelError": ".exceptions",
    "RunSuspended": ".category.suspend",
    "SuspendedRun": ".category.suspend",
    "ToolContext": ".tools",
    "ToolPack": ".tools",
    "ToolParameter": ".tools",
    "tool": ".tools",
}

#: Names that were flat here before 0.2 and the public namespace that holds each now.
MOVED = {
    "AgentStep": "meta_tools.events",
    "AssistantTurn": "meta_tools.llm",
    "CategoryCall": "meta_tools.router.manager",
    "CategoryCalled": "meta_tools.events",
    "CategoryNotFoundError": "meta_tools.exceptions",
    "CategoryReturned": "meta_tools.events",
    "ChatModel": "meta_tools.llm",
    "ChatRequest": "meta_tools.llm",
    "ClosedError": "meta_tools.exceptions",
    "ConfigReloader": "meta_tools.router.reload",
    "DashScopeChatModel": "meta_tools.llm",
    "Evaluated": "meta_tools.events",
    "EventSink": "meta_tools.events",
    "Execution": "meta_tools.category",
    "JsonlTrace": "meta_tools.tracing",
    "McpServerTool": "meta_tools.tools.mcp",
    "McpToolSource": "meta_tools.tools.mcp",
    "Message": "meta_tools.llm",
    "ModelCalled": "meta_tools.events",
    "OpenAIChatModel": "meta_tools.llm",
    "ReloadOutcome": "meta_tools.router.reload",
    "RunEvent": "meta_tools.events",
    "RunFinished": "meta_tools.events",
    "RunStarted": "meta_tools.events",
    "RunUsage": "meta_tools.category",
    "SamplingUnsupportedError": "meta_tools.exceptions",
    "ScriptExhaustedError": "meta_tools.exceptions",
    "ScriptedModel": "meta_tools.llm",
    "ToolArgumentsError": "meta_tools.exceptions",
    "ToolCall": "meta_tools.llm",
    "ToolDefinition": "meta_tools.llm",
    "ToolDefinitionError": "meta_tools.exceptions",
    "ToolError": "meta_tools.exceptions",
    "ToolExecutionError": "meta_tools.exceptions",
    "ToolFinished": "meta_tools.events",
    "ToolNotFoundError": "meta_tools.exceptions",
    "ToolTimeoutError": "meta_tools.exceptions",
    "ToolUnavailableError": "meta_tools.exceptions",
    "ToolsSelected": "meta_tools.events",
    "Tracer": "meta_tools.tracing",
    "Usage": "meta_tools.llm",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home, __name__), name)
        globals()[name] = value
        return value
    moved = MOVED.get(name)
    if moved is not None:
        warnings.warn(
            f"meta_tools.{name} moved: use `from {moved} import {name}`",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(moved), name)
    try:  # a subpackage, as `import meta_tools` used to load them all (`meta_tools.llm`)
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
