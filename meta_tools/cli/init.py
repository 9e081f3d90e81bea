"""`meta-tools init`: a commented starter config (and, on request, the prompt templates to edit).

The starter works at once, offline and without a key: its categories group the
tools of the demo MCP server that ships with the package, so `list`,
`validate` and `serve` (with a host that samples) run straight after `init`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..category.prompts import default_templates_dir
from ..config import SECTIONS
from ..demo.categories import CATEGORIES
from ..exceptions import MetaToolsError
from .files import make_folder, taken, write_file

__all__ = ["STARTER_COMMENT", "InitExistsError", "starter_config", "write_starter"]

PROMPTS_DIR = "meta_tool_prompts"

STARTER_COMMENT = [
    f"Every top-level key that is not a section ({', '.join(SECTIONS)}) is a category:"
    " description, tool_usage_notes, tools (names or globs such as 'maps_*').",
    "Check this file: meta-tools validate. See what the main agent gets: meta-tools list.",
    "The model: with no 'model' section and no OPENAI_API_KEY, 'meta-tools serve' uses the"
    " MCP host's own model (sampling). To choose one, add for example:",
    '  "model": {"provider": "openai", "name": "gpt-4o-mini"}  (with OPENAI_API_KEY set)',
    '  "model": {"provider": "openai", "name": "llama3.2", "base_url":'
    ' "http://127.0.0.1:11434/v1"}  (a local server: no key)',
    '  "model": {"provider": "dashscope", "name": "qwen-plus"}  (with DASHSCOPE_API_KEY set)',
    "A small local model (a 1.5B to 8B behind Ollama or llama.cpp, one that writes tool calls"
    ' as text) needs the small-model guards: add  "guards": {"profile": "small"}.'
    " Capable models (GPT-4o, Claude, Qwen-Max, a 70B) need nothing: the default runs none.",
    "Your own Python tools (functions decorated with @tool from meta_tools):"
    ' "python_tools": ["my_tools.py"], relative to this file; then list their names in a'
    " category.",
    "The 'demo' server below ships with meta-tools: replace it with your own MCP servers.",
]


class InitExistsError(MetaToolsError):
    """Something (a file, a folder, a symbolic link) is already where `init` writes."""


def starter_config(*, prompts: bool = False) -> dict[str, Any]:
    """The starter config as data (the demo server's tools in four categories)."""
    data: dict[str, Any] = {
        "$comment": STARTER_COMMENT,
        "mcp_servers": {
            # Its file tools see this folder, wherever the host starts the router.
            "demo": {
                "command": "python",
                "args": ["-m", "meta_tools.demo", "--root", "."],
                "cwd": ".",
            }
        },
    }
    if prompts:
        data["prompts_dir"] = PROMPTS_DIR
    return {**data, **CATEGORIES}


def write_starter(folder: Path, *, name: str, prompts: bool, force: bool) -> list[Path]:
    """Write the starter config (and the templates) into `folder`; returns what was written.

    Nothing is written through a symbolic link (see `files`): without `force` a
    link is taken like a file, even one that points nowhere; with `force` it is
    replaced by the file (or, for the templates, the folder) itself.

    Raises:
        InitExistsError: a path to write is taken and `force` is False, or it
            holds what `force` does not replace (a folder where a file goes).
        WriteRefusedError: something was put at a path while writing.
    """
    config = folder / name
    templates = folder / PROMPTS_DIR
    sources = sorted(p for p in default_templates_dir().iterdir() if p.suffix in (".j2", ".md"))
    # Asked for the templates beside a config of one's own: that config is kept as it is.
    keep = prompts and not force and taken(config) is not None
    _check_free(
        None if keep else config,
        templates if prompts else None,
        [p.name for p in sources],
        force=force,
    )
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    if not keep:
        text = json.dumps(starter_config(prompts=prompts), indent=2, ensure_ascii=False)
        write_file(config, text + "\n", force=force)
        written.append(config)
    if prompts:
        make_folder(templates, force=force)
        for source in sources:
            write_file(templates / source.name, source.read_bytes(), force=force)
        written.append(templates)
    return written


def _check_free(
    config: Path | None, templates: Path | None, names: list[str], *, force: bool
) -> None:
    """Refuse, before anything is written, a taken path (with `force`: one holding what
    `force` does not replace, such as a folder where the config goes)."""
    paths = [p for p in (config, templates) if p is not None]
    found = [t for t in map(taken, paths) if t is not None]
    if found and not force:
        shown = ", ".join(
            t.describe() if t.kind == "link" else f"{str(t.path)!r} already exists" for t in found
        )
        links = any(t.kind == "link" for t in found)
        raise InitExistsError(
            f"{shown}; nothing was written: pass --force to overwrite"
            + (" (a symbolic link is replaced, never written through)" if links else "")
        )
    # --force writes the config over a file or a link, and the templates' folder over a
    # link; it keeps that folder if it is one, and writes over the files and links in it.
    replaced: dict[Path | None, tuple[str, ...]] = {
        config: ("file", "link"),
        templates: ("folder", "link"),
    }
    wrong = [t for t in found if t.kind not in replaced[t.path]]
    if not wrong and templates is not None and any(t.kind == "folder" for t in found):
        inside = (taken(templates / name) for name in names)
        wrong = [t for t in inside if t is not None and not t.replaceable]
    if wrong:
        shown = ", ".join(t.describe() for t in wrong)
        raise InitExistsError(f"{shown}; nothing was written: --force does not replace this")
