"""Python tools in every accepted form: objects, packs, modules, files and specs in text."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

from meta_tools import MetaManager, MetaToolsConfig, ToolDefinitionError, ToolPack, tool
from meta_tools.llm import ScriptedModel
from meta_tools.tools.mcp.source import McpToolSource
from meta_tools.tools.python_source import collect_tools, import_tools
from tests.servers import tasks


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
def whisper(text: str) -> str:
    """Lower-case a text."""
    return text.lower()


PACK = ToolPack([shout, whisper], name="voice")
CONFIG = {"Voice": {"description": "Change a text's volume.", "tools": ["shout", "whisper"]}}


def names(meta: MetaManager) -> list[str]:
    return [t.name for t in meta.get_category("voice").tools.list_tools()]


@pytest.mark.parametrize(
    "given",
    [PACK, [PACK], [shout, whisper], (shout, PACK), sys.modules[__name__]],
    ids=["pack", "list of a pack", "functions", "a tool and a pack", "module"],
)
def test_a_pack_a_list_or_a_module_are_accepted_wherever_tools_are(given: object) -> None:
    config = MetaToolsConfig.from_data(CONFIG)
    meta = MetaManager.from_config(config, tools=given, model=ScriptedModel([]))  # type: ignore[arg-type]
    assert names(meta) == ["shout", "whisper"]


def test_something_that_is_no_tool_is_refused_with_the_accepted_forms() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        collect_tools([shout, 42])
    assert str(caught.value) == (
        "42 is not a tool: pass a BaseTool, an @tool function, a ToolPack, a module, or a list"
        " of these"
    )


def test_a_file_spec_with_an_attribute_and_an_import_error_that_names_the_cause(
    tmp_path: Path,
) -> None:
    (tmp_path / "mine.py").write_text(
        "from meta_tools import ToolPack, tool\n\n\n@tool\ndef double(n: int) -> int:\n"
        '    """Double."""\n    return 2 * n\n\n\nnumbers = ToolPack([double])\n'
    )
    found = import_tools("mine.py:numbers", base_dir=tmp_path)
    assert [t.name for t in found] == ["double"]
    (tmp_path / "needs.py").write_text("import surely_not_installed_pkg\n")
    with pytest.raises(ToolDefinitionError) as caught:
        import_tools("needs", base_dir=tmp_path)
    assert str(caught.value) == (
        "--tools 'needs': cannot import module 'needs': it imports 'surely_not_installed_pkg',"
        " which is not installed"
    )
    with pytest.raises(ToolDefinitionError) as missing:
        import_tools("mine.py:nothing", base_dir=tmp_path)
    assert str(missing.value) == "--tools 'mine.py:nothing': 'mine.py' has no 'nothing'"


def test_a_module_without_tools_says_how_to_make_one(tmp_path: Path) -> None:
    (tmp_path / "empty_tools_mod.py").write_text("X = 1\n")
    with pytest.raises(ToolDefinitionError) as caught:
        import_tools("empty_tools_mod", base_dir=tmp_path)
    assert "no tool found; decorate functions with @tool" in str(caught.value)
    assert isinstance(sys.modules["empty_tools_mod"], ModuleType)


@pytest.mark.anyio
async def test_mcp_tools_that_must_run_as_tasks_are_left_out_with_a_warning() -> None:
    config = MetaToolsConfig.from_data(
        {"Words": {"description": "Words.", "tools": ["echo", "e*"]}}
    )
    source = McpToolSource("tasks", tasks.build(), mode="legacy")  # type: ignore[arg-type]
    meta = MetaManager.from_config(config, model=ScriptedModel([]), sources=[source])
    async with meta:
        assert [t.name for t in meta.get_category("words").tools.list_tools()] == ["echo"]
        assert meta.warnings == [
            "$.mcp_servers.tasks: tool 'research' is left out: it must be called as a task"
            ' (execution.taskSupport "required"), which meta-tools cannot do yet'
        ]
