"""The public API is deliberate: `__all__` is pinned and sorted."""

import meta_tools


def test_public_names_are_pinned_and_sorted() -> None:
    assert meta_tools.__all__ == sorted(meta_tools.__all__)
    assert set(meta_tools.__all__) == {
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
    }
    for name in meta_tools.__all__:
        assert getattr(meta_tools, name) is not None
