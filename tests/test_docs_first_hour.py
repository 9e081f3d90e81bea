"""The docs agree with themselves and with the code on what a newcomer meets first (issue 57)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import typer.main

from meta_tools.cli.app import app
from meta_tools.cli.tokens import ESTIMATE
from meta_tools.guards import GUARDS
from meta_tools.llm.profile import SMALL_BELOW_B, choose_profile
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


# -- the development page: the module map and the import order ---------------------------

PACKAGE = ROOT / "meta_tools"
IMPORT_ORDER = [
    {"helpers"},
    {"llm"},
    {"tools"},
    {"guards"},
    {"kernel"},
    {"category"},
    {"config"},
    {"turn_trace"},
    {"tracing"},
    {"router"},
    {"agent"},
    {"events"},
    {"grouping", "serve", "demo"},
    {"cli"},
]
"""The order docs/development.md gives: each part imports only from parts before it."""


def part_of(path: Path) -> str:
    """A module's part: its top folder ('helpers' for `support/`), or a top-level module's
    name ('helpers' for `_version` and `exceptions`)."""
    relative = path.relative_to(PACKAGE)
    if relative.parts[0] == "support":
        return "helpers"
    if len(relative.parts) > 1:
        return relative.parts[0]
    if relative.stem.startswith("_") or relative.stem == "exceptions":
        return "helpers"
    return relative.stem


def imported_parts(path: Path) -> set[str]:
    """The parts of `meta_tools` that a module imports from."""
    module = list(path.relative_to(ROOT).with_suffix("").parts)
    package = module[:-1]  # a module's package; an __init__'s is its own folder
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            target = base + (node.module.split(".") if node.module else [])
        else:
            target = (node.module or "").split(".")
        if target[0] != "meta_tools":
            continue
        names = [target[1]] if len(target) > 1 else [a.name for a in node.names]
        for name in names:
            candidate = PACKAGE / name
            found.add(part_of(candidate if candidate.is_dir() else candidate.with_suffix(".py")))
    return found


def test_imports_go_the_one_way_the_development_page_says() -> None:
    rank = {part: index for index, parts in enumerate(IMPORT_ORDER) for part in parts}
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == PACKAGE and path.stem in ("__init__", "__main__"):
            continue  # the public API and `python -m`: facades over everything
        part = part_of(path)
        for used in imported_parts(path) - {part}:
            if used == "helpers" and part == "helpers":
                continue
            if rank[used] >= rank[part]:
                wrong.append(f"{path.relative_to(ROOT)} imports from {used}")
    assert wrong == []
    text = (DOCS / "development.md").read_text(encoding="utf-8")
    assert "imports only from its own level or below" not in text


def module_map() -> dict[str, str]:
    """The development page's map: folder (or '' for the top level) -> the text naming its modules."""
    text = section((DOCS / "development.md").read_text(encoding="utf-8"), "Layout")
    block = text.split("```\nmeta_tools/\n", 1)[1].split("```", 1)[0]
    entries: dict[str, str] = {"": ""}
    stack: list[str] = []
    current = ""
    for line in block.splitlines():
        if found := re.match(r"^( +)([a-z_]+)/(\s|$)", line):
            depth = (len(found.group(1)) - 2) // 2
            stack = [*stack[:depth], found.group(2)]
            current = "/".join(stack)
            entries[current] = line[found.end() :]
        elif found := re.match(r"^  ([_a-z0-9]+\.py)(\s|$)", line):
            entries[""] += f" {found.group(1)}"
        else:
            entries[current] += f" {line}"
    return entries


def test_the_module_map_names_every_module() -> None:
    entries = module_map()
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        folder = "/".join(path.relative_to(PACKAGE).parts[:-1])
        if folder and path.stem in ("__init__", "__main__"):
            continue
        words = set(re.findall(r"[_a-z0-9.]+", entries.get(folder, "")))
        if (path.name if not folder else path.stem) not in words:
            missing.append(str(path.relative_to(PACKAGE)))
    assert missing == []


# -- the guards page: where guards act, how the profile is chosen, what was measured ---------


def test_no_module_outside_the_guards_package_switches_a_guard_by_name() -> None:
    names = "|".join(re.escape(g.name) for g in GUARDS)
    switching = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "guards" not in path.relative_to(PACKAGE).parts
        and re.search(
            rf"(\.(on|budget|within|text)\(\s*|\[\s*)[\"']({names})[\"']",
            path.read_text(encoding="utf-8"),
        )
    )
    assert switching == []
    text = (DOCS / "guards.md").read_text(encoding="utf-8")
    assert "live in one place" not in text
    assert [g.name for g in GUARDS if f"`{g.name}`" not in text] == []


def test_the_guards_page_says_how_the_profile_is_chosen() -> None:
    text = " ".join(
        section(
            (DOCS / "guards.md").read_text(encoding="utf-8"), "How the profile is chosen"
        ).split()
    )
    assert f"fewer than {SMALL_BELOW_B:g}B parameters" in text
    assert "GET /v1/models" in text
    assert "`guards.profile`" in text and "always wins" in text
    assert choose_profile("qwen2.5-coder:1.5b", provider="openai", base_url=None).guards == "small"
    assert choose_profile(None, provider="openai", base_url=None).guards == "capable"


def demo_right(commit: str) -> int:
    """How many of the 45 demo tasks the hierarchy side got right in a recorded run."""
    runs = json.loads((ROOT / "benchmarks" / "results" / "e2e.json").read_text())["runs"]
    (run,) = [r for key, r in runs.items() if key.startswith(f"qwen2.5-coder-1.5b@{commit}@")]
    side = run["demo"]["sides"]["hierarchy"]
    assert side["tasks"] == 45
    return round(side["accuracy"] * side["tasks"])


def test_the_guard_figures_are_the_recorded_runs_they_name() -> None:
    guards_page = (DOCS / "guards.md").read_text(encoding="utf-8")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    runs = (
        ("6dabdcf", 0),
        ("95f00b3", 31),
        ("047a67d", 39),
        ("755fbd9", 39),
        ("9e0ecc6", 38),
        ("d8ce616", 39),
        ("2166aa0", 39),
        ("1dcfbf3", 39),
    )
    for commit, right in runs:
        assert demo_right(commit) == right
        assert re.search(rf"\| {right}\b[^|]*\| {commit} \|", guards_page), commit
    assert (demo_right("a782b34"), demo_right("4687c1f")) == (26, 39)
    assert "26 was the router of 1 December (a782b34" in " ".join(guards_page.split())
    assert "solves 0 without them" in readme
    assert "and 38 to 39 (run to run) with the profile its name chooses" in readme


# -- the home page, the README's links, the Python page ----------------------------------------


def test_the_home_page_gives_the_install_lines_the_readme_has() -> None:
    readme = section((ROOT / "README.md").read_text(encoding="utf-8"), "Install")
    home = section((DOCS / "index.md").read_text(encoding="utf-8"), "Install")
    lines = [line for line in readme.splitlines() if line.startswith("pip install ")]
    assert any(".whl" in line for line in lines)
    assert [line for line in lines if line.split("  #")[0].strip() not in home] == []


def heading_anchors(text: str) -> set[str]:
    """The anchors mkdocs gives a page's headings (its default slugs)."""
    return {
        re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", title.strip().lower()))
        for title in re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    }


def test_every_link_from_the_readme_into_the_docs_reaches_a_heading() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"docs/([a-z-]+\.md)#([a-z0-9-]+)", readme)
    assert ("configuration.md", "without-a-key") in links
    broken = [
        (page, anchor)
        for page, anchor in links
        if anchor not in heading_anchors((DOCS / page).read_text(encoding="utf-8"))
    ]
    assert broken == []
    assert "Try it without a key" not in readme


def test_the_python_page_opens_with_a_keyless_example_that_defines_what_it_uses() -> None:
    text = (DOCS / "python.md").read_text(encoding="utf-8")
    assert "README's" not in text
    first = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert "def shout(" in first and "ScriptedModel(" in first
    assert text.index("def shout(") < text.index("tools=[shout]")
