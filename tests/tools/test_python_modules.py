"""Python tools in every accepted form: objects, packs, modules, files and specs in text."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from types import ModuleType

import pytest

from meta_tools import MetaManager, MetaToolsConfig, ToolPack, tool
from meta_tools.exceptions import ToolDefinitionError
from meta_tools.llm import ScriptedModel
from meta_tools.tools.mcp.connection import McpToolSource
from meta_tools.tools.python_modules import collect_tools, import_tools
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


# What a module does at import is its own business; it must not end or stop the caller.
AT_IMPORT = {
    "sys.exit(0)": ("import sys\nsys.exit(0)\n", "it exited (SystemExit: 0) while being imported"),
    "exit()": ("exit()\n", "it exited (SystemExit: 0) while being imported"),
    "SystemExit('bye')": ("raise SystemExit('bye')\n", "it exited (SystemExit: 'bye')"),
    "KeyboardInterrupt": ("raise KeyboardInterrupt\n", "KeyboardInterrupt while it was being"),
    "GeneratorExit": ("raise GeneratorExit\n", "GeneratorExit: "),
    "argparse": (
        "import argparse\nparser = argparse.ArgumentParser(prog='cli')\n"
        "parser.add_argument('--name', required=True)\nparser.parse_args(['--other'])\n",
        "it exited (SystemExit: 2) while being imported; run a module's script code under"
        ' `if __name__ == "__main__":`; the last line it printed: \'cli: error: the'
        " following arguments are required: --name'",
    ),
}


@pytest.mark.parametrize("form", ["file", "module"])
@pytest.mark.parametrize(("code", "expected"), AT_IMPORT.values(), ids=AT_IMPORT.keys())
def test_anything_a_module_raises_at_import_is_a_definition_error_naming_it(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], form: str, code: str, expected: str
) -> None:
    name = f"raises_at_import_{form}_{abs(hash(code))}"
    (tmp_path / f"{name}.py").write_text(code)
    spec = f"{name}.py" if form == "file" else name
    stdout, stderr = sys.stdout, sys.stderr
    with pytest.raises(ToolDefinitionError) as caught:
        import_tools(spec, base_dir=tmp_path, label="$.python_tools[0]")
    where = f"{str(tmp_path / f'{name}.py')!r}" if form == "file" else f"module {name!r}"
    assert str(caught.value).startswith(f"$.python_tools[0] {spec!r}: cannot import {where}: ")
    assert expected in str(caught.value)
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert not [m for m in sys.modules if name in m]  # a second try imports it afresh
    assert capfd.readouterr() == ("", "")  # argparse's usage is in the message, not printed


def test_what_a_module_prints_at_import_goes_to_stderr_never_to_stdout(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "chatty_at_import.py").write_text(
        "import logging\n\nfrom meta_tools import tool\n\nprint('hello from chatty')\n"
        "logging.basicConfig(format='%(message)s')  # a handler on the stderr of the import\n\n\n"
        '@tool\ndef chat(text: str) -> str:\n    """Echo."""\n'
        "    logging.getLogger('chatty').warning('chat called')\n    return text\n"
    )
    root = logging.getLogger()
    handlers = list(root.handlers)
    try:
        root.handlers.clear()  # so that basicConfig in the module adds its handler
        [chat] = import_tools("chatty_at_import.py", base_dir=tmp_path)
        assert capfd.readouterr() == ("", "hello from chatty\n")
        chat.execute(text="hi")  # the handler made at import still writes, to stderr
        assert capfd.readouterr() == ("", "chat called\n")
    finally:
        root.handlers[:] = handlers
