"""The docs agree with themselves and with the code on what a newcomer meets first (issue 57)."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from meta_tools.cli.app import app
from meta_tools.cli.tokens import ESTIMATE
from meta_tools.serve.progress import PROGRESS_EVERY_S

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def pages() -> dict[str, str]:
    found = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for path in sorted(DOCS.glob("*.md")):
        found[f"docs/{path.name}"] = path.read_text(encoding="utf-8")
    return found


def section(text: str, heading: str) -> str:
    """The text under a `## heading`, up to the next heading of that level."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_every_npx_command_in_the_docs_installs_without_asking() -> None:
    commands = [
        (page, line.strip())
        for page, text in pages().items()
        for line in text.splitlines()
        if re.match(r"\s*npx\s", line)
    ]
    assert commands, "no npx command found: the test looks in the wrong place"
    assert [(page, line) for page, line in commands if not line.startswith("npx -y ")] == []


def test_the_inspector_commands_give_the_config_as_the_last_word_of_the_server_command() -> None:
    inspector = [
        line
        for text in pages().values()
        for line in text.splitlines()
        if "@modelcontextprotocol/inspector" in line and "meta-tools serve" in line
    ]
    assert inspector
    for line in inspector:
        server = line.split("meta-tools serve", 1)[1].split()
        assert server[0].endswith("Meta_tool_config.json"), line


def test_the_hosts_page_says_how_long_hosts_wait_and_how_often_progress_comes() -> None:
    text = section((DOCS / "hosts.md").read_text(encoding="utf-8"), "When a call takes long")
    assert f"at least every {PROGRESS_EVERY_S:.0f} seconds" in text
    for setting in (
        "requestTimeout",
        "MCP_SERVER_REQUEST_TIMEOUT",
        "MCP_REQUEST_TIMEOUT_RESET_ON_PROGRESS",
        "MCP_REQUEST_MAX_TOTAL_TIMEOUT",
    ):
        assert f"`{setting}`" in text, setting
    rows = {row.split("|")[1].strip(): row for row in text.splitlines() if row.startswith("| ")}
    assert "no setting documented" in rows["Claude Desktop"]
    assert "no setting documented" in rows["Cursor"]


def test_the_token_estimate_and_the_cli_page_name_the_extra_that_gives_real_counts() -> None:
    assert "meta-tools[tokens]" in ESTIMATE
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"^tokens = \[(.*)\]$", pyproject, re.MULTILINE)
    assert extra is not None and "bpe-openai" in extra.group(1)
    text = " ".join(section((DOCS / "cli.md").read_text(encoding="utf-8"), "Token counts").split())
    assert 'pip install -e ".[tokens]"' in text
    assert f"Tokens counted with {ESTIMATE}." in text


def cli_rows() -> dict[str, str]:
    """Each command's row of the CLI page's table: its name -> the row's first cell."""
    rows = {}
    for line in (DOCS / "cli.md").read_text(encoding="utf-8").splitlines():
        if found := re.match(r"\| `([a-z]+)([^`]*)` \|", line):
            rows[found.group(1)] = found.group(2)
    return rows


def test_the_cli_page_names_every_option_of_every_command() -> None:
    common = {"--config", "--tools", "--help"}  # said once, above and below the table
    rows = cli_rows()
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert sorted(rows) == sorted(commands)
    missing: dict[str, list[str]] = {}
    for name, sub in commands.items():
        for param in sub.params:
            if param.param_type_name != "option" or common & set(param.opts):
                continue
            spellings = param.opts + param.secondary_opts
            if not any(re.search(rf"{re.escape(s)}\b", rows[name]) for s in spellings):
                missing.setdefault(name, []).append(max(spellings, key=len))
    assert missing == {}
