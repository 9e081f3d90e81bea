"""meta-tools: a hierarchical tool router for LLM agents.

The main agent sees a few category tools (`MetaManager`, level 3); each
category (`CategoryManager`, level 2) picks, runs and checks concrete tools
(`BaseTool`, level 1). Every type a user passes in or gets back is importable
from here; the modules behind them may move.

Each is imported on first use, so that importing one module of the package (the
command's `--version`, a tool server) does not load every level and the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .agent import AgentStep, CategoryCalled, CategoryReturned, MainAgent
    from .category import CategoryManager, CategoryResult, Execution, RunUsage
    from .category.events import (
        Evaluated,
        EventSink,
        ModelCalled,
        RunEvent,
        RunFinished,
        RunStarted,
        ToolFinished,
        ToolsSelected,
    )
    from .config import MetaToolsConfig
    from .exceptions import (
        CategoryNotFoundError,
        ClosedError,
        ConfigError,
        MetaToolsError,
        ModelError,
        SamplingUnsupportedError,
        ScriptExhaustedError,
        ToolArgumentsError,
        ToolDefinitionError,
        ToolError,
        ToolExecutionError,
        ToolNotFoundError,
        ToolTimeoutError,
        ToolUnavailableError,
    )
    from .llm import (
        AssistantTurn,
        ChatModel,
        ChatRequest,
        Message,
        ScriptedModel,
        ToolCall,
        ToolDefinition,
        Usage,
    )
    from .llm.dashscope import DashScopeChatModel
    from .llm.openai import OpenAIChatModel
    from .router import MetaManager
    from .router.manager import CategoryCall
    from .router.reload import ConfigReloader, ReloadOutcome
    from .tools import BaseTool, FunctionTool, ToolContext, ToolPack, ToolParameter, tool
    from .tools.mcp import McpServerTool, McpToolSource
    from .tracing import JsonlTrace, Tracer

__all__ = [
    "AgentStep",
    "AssistantTurn",
    "BaseTool",
    "CategoryCall",
    "CategoryCalled",
    "CategoryManager",
    "CategoryNotFoundError",
    "CategoryResult",
    "CategoryReturned",
    "ChatModel",
    "ChatRequest",
    "ClosedError",
    "ConfigError",
    "ConfigReloader",
    "DashScopeChatModel",
    "Evaluated",
    "EventSink",
    "Execution",
    "FunctionTool",
    "JsonlTrace",
    "MainAgent",
    "McpServerTool",
    "McpToolSource",
    "Message",
    "MetaManager",
    "MetaToolsConfig",
    "MetaToolsError",
    "ModelCalled",
    "ModelError",
    "OpenAIChatModel",
    "ReloadOutcome",
    "RunEvent",
    "RunFinished",
    "RunStarted",
    "RunUsage",
    "SamplingUnsupportedError",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ToolArgumentsError",
    "ToolCall",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolExecutionError",
    "ToolFinished",
    "ToolNotFoundError",
    "ToolPack",
    "ToolParameter",
    "ToolTimeoutError",
    "ToolUnavailableError",
    "ToolsSelected",
    "Tracer",
    "Usage",
    "tool",
]

#: The module each public name is imported from.
_HOMES = {
    "AgentStep": ".agent",
    "AssistantTurn": ".llm",
    "BaseTool": ".tools",
    "CategoryCall": ".router.manager",
    "CategoryCalled": ".agent",
    "CategoryManager": ".category",
    "CategoryNotFoundError": ".exceptions",
    "CategoryResult": ".category",
    "CategoryReturned": ".agent",
    "ChatModel": ".llm",
    "ChatRequest": ".llm",
    "ClosedError": ".exceptions",
    "ConfigError": ".exceptions",
    "ConfigReloader": ".router.reload",
    "DashScopeChatModel": ".llm",
    "Evaluated": ".category.events",
    "EventSink": ".category.events",
    "Execution": ".category",
    "FunctionTool": ".tools",
    "JsonlTrace": ".tracing",
    "MainAgent": ".agent",
    "McpServerTool": ".tools.mcp",
    "McpToolSource": ".tools.mcp",
    "Message": ".llm",
    "MetaManager": ".router",
    "MetaToolsConfig": ".config",
    "MetaToolsError": ".exceptions",
    "ModelCalled": ".category.events",
    "ModelError": ".exceptions",
    "OpenAIChatModel": ".llm",
    "ReloadOutcome": ".router.reload",
    "RunEvent": ".category.events",
    "RunFinished": ".category.events",
    "RunStarted": ".category.events",
    "RunUsage": ".category",
    "SamplingUnsupportedError": ".exceptions",
    "ScriptExhaustedError": ".exceptions",
    "ScriptedModel": ".llm",
    "ToolArgumentsError": ".exceptions",
    "ToolCall": ".llm",
    "ToolDefinition": ".llm",
    "ToolContext": ".tools",
    "ToolDefinitionError": ".exceptions",
    "ToolError": ".exceptions",
    "ToolExecutionError": ".exceptions",
    "ToolFinished": ".category.events",
    "ToolNotFoundError": ".exceptions",
    "ToolPack": ".tools",
    "ToolParameter": ".tools",
    "ToolTimeoutError": ".exceptions",
    "ToolUnavailableError": ".exceptions",
    "ToolsSelected": ".category.events",
    "Tracer": ".tracing",
    "Usage": ".llm",
    "tool": ".tools",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        try:  # a subpackage, as `import meta_tools` used to load them all (`meta_tools.llm`)
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
