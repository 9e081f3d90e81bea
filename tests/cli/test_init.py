"""`meta-tools init`: the starter config it writes."""

from __future__ import annotations

from meta_tools.cli.init import starter_config


def test_the_starter_comment_names_every_section_of_the_config() -> None:
    assert starter_config()["$comment"][0] == (
        "Every top-level key that is not a section (model, mcp_servers, python_tools, builtins,"
        " defaults, prompts_dir, memory, serve, routing, guards) is a category: description,"
        " tool_usage_notes, tools (names or globs such as 'maps_*')."
    )
