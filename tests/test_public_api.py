"""The public API is deliberate: each namespace's `__all__` is pinned and sorted."""

import importlib
import warnings
from importlib.metadata import version

import pytest

import meta_tools

#: What each public namespace exports. The top level holds the quick start's names.
SURFACE = {
    "meta_tools": {
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
    },
    "meta_tools.events": {
        "AgentStep",
        "CategoryCalled",
        "CategoryReturned",
        "Evaluated",
        "EventSink",
        "ModelCalled",
        "RunEvent",
        "RunFinished",
        "RunStarted",
        "ToolFinished",
        "ToolsSelected",
    },
    "meta_tools.exceptions": {
        "CategoryNotFoundError",
        "ClosedError",
        "ConfigError",
        "LoginRequiredError",
        "MetaToolsError",
        "ModelError",
        "SamplingUnsupportedError",
        "ScriptExhaustedError",
        "ToolArgumentsError",
        "ToolDefinitionError",
        "ToolError",
        "ToolExecutionError",
        "ToolNotFoundError",
        "ToolTimeoutError",
        "ToolUnavailableError",
    },
    "meta_tools.llm": {
        "AssistantTurn",
        "ChatModel",
        "ChatRequest",
        "DashScopeChatModel",
        "GenerationOptions",
        "Message",
        "OpenAIChatModel",
        "ScriptedModel",
        "ToolCall",
        "ToolDefinition",
        "Usage",
        "calls_in_text",
    },
}


@pytest.mark.parametrize("namespace", sorted(SURFACE))
def test_each_namespace_exports_exactly_its_pinned_names_sorted(namespace: str) -> None:
    module = importlib.import_module(namespace)
    assert module.__all__ == sorted(module.__all__)
    assert set(module.__all__) == SURFACE[namespace]
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_the_top_level_fits_in_one_screen() -> None:
    assert len(meta_tools.__all__) <= 20


def test_internal_records_are_not_public() -> None:
    assert "ToolOutcome" not in meta_tools.__all__


def test_a_moved_name_still_resolves_with_a_warning_naming_its_new_import() -> None:
    from meta_tools.llm import ToolCall

    with pytest.warns(DeprecationWarning, match=r"from meta_tools\.llm import ToolCall"):
        assert meta_tools.ToolCall is ToolCall  # type: ignore[attr-defined]


def test_every_moved_name_is_importable_from_its_new_home() -> None:
    for name, home in meta_tools.MOVED.items():
        assert getattr(importlib.import_module(home), name) is not None, name
        assert name not in meta_tools.__all__


def test_documented_behaviour_has_its_names_public() -> None:
    from meta_tools import Limits, RunSuspended, SuspendedRun
    from meta_tools.llm import GenerationOptions

    assert Limits().max_iterations == 5
    assert issubclass(RunSuspended, BaseException)
    assert "category" in SuspendedRun.model_fields
    assert GenerationOptions().max_tokens is None


def test_a_quick_start_import_warns_about_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in meta_tools.__all__:
            getattr(meta_tools, name)


def test_the_version_is_the_installed_package_version() -> None:
    assert meta_tools.__version__ == version("meta-tools")
