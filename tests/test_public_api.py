"""The public API is deliberate: `__all__` is pinned and sorted, and lists every type a user meets."""

from importlib.metadata import version

import meta_tools


def test_public_names_are_pinned_and_sorted() -> None:
    assert meta_tools.__all__ == sorted(meta_tools.__all__)
    assert set(meta_tools.__all__) == {
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
    }
    for name in meta_tools.__all__:
        assert getattr(meta_tools, name) is not None


def test_internal_records_are_not_public() -> None:
    assert "ToolOutcome" not in meta_tools.__all__


def test_the_version_is_the_installed_package_version() -> None:
    assert meta_tools.__version__ == version("meta-tools")
