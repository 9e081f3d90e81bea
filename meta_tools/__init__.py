"""meta-tools: a hierarchical tool router for LLM agents.

The main agent sees a few category tools (`MetaManager`, level 3); each
category (`CategoryManager`, level 2) picks, runs and checks concrete tools
(`BaseTool`, level 1). Every type a user passes in or gets back is importable
from here; the modules behind them may move.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from . import llm
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
from .router import MetaManager
from .router.manager import CategoryCall
from .router.reload import ConfigReloader, ReloadOutcome
from .tools import BaseTool, FunctionTool, ToolContext, ToolPack, ToolParameter, tool
from .tools.mcp import McpServerTool, McpToolSource
from .tracing import JsonlTrace, Tracer

if TYPE_CHECKING:
    from .llm.dashscope import DashScopeChatModel
    from .llm.openai import OpenAIChatModel

try:
    __version__ = version("meta-tools")
except PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"

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


def __getattr__(name: str) -> Any:
    # The SDK clients load openai / dashscope: `meta_tools.llm` imports them on first use.
    if name in ("DashScopeChatModel", "OpenAIChatModel"):
        return getattr(llm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
