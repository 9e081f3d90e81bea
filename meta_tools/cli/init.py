"""`meta-tools init`: a commented starter config (and, on request, the prompt templates to edit).

The starter works at once, offline and without a key: its categories group the
tools of the demo MCP server that ships with the package, so `list`,
`validate` and `serve` (with a host that samples) run straight after `init`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ..category.prompts import default_templates_dir
from ..exceptions import MetaToolsError
from .demo import DEMO_CATEGORIES

__all__ = ["STARTER_COMMENT", "InitExistsError", "starter_config", "write_starter"]

PROMPTS_DIR = "meta_tool_prompts"

STARTER_COMMENT = [
    "Every top-level key that is not a section (model, mcp_servers, python_tools, builtins,"
    " defaults, prompts_dir) is a category: description, tool_usage_notes, tools (names or"
    " globs such as 'maps_*').",
    "Check this file: meta-tools validate. See what the main agent gets: meta-tools list.",
    "The model: with no 'model' section and no OPENAI_API_KEY, 'meta-tools serve' uses the"
    " MCP host's own model (sampling). To choose one, add for example:",
    '  "model": {"provider": "openai", "name": "gpt-4o-mini"}  (with OPENAI_API_KEY set)',
    '  "model": {"provider": "openai", "name": "llama3.2", "base_url":'
    ' "http://127.0.0.1:11434/v1"}  (a local server: no key)',
    '  "model": {"provider": "dashscope", "name": "qwen-plus"}  (with DASHSCOPE_API_KEY set)',
    "Your own Python tools (functions decorated with @tool from meta_tools):"
    ' "python_tools": ["my_tools.py"], relative to this file; then list their names in a'
    " category.",
    "The 'demo' server below ships with meta-tools: replace it with your own MCP servers.",
]


class InitExistsError(MetaToolsError):
    """`init` would overwrite a file or folder that is already there."""


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
    return {**data, **DEMO_CATEGORIES}


def write_starter(folder: Path, *, name: str, prompts: bool, force: bool) -> list[Path]:
    """Write the starter config (and the templates) into `folder`; returns what was written.

    Raises:
        InitExistsError: a file to write exists already and `force` is False.
    """
    config = folder / name
    templates = folder / PROMPTS_DIR
    taken = [p for p in (config, *([templates] if prompts else [])) if p.exists()]
    if taken and not force:
        shown = ", ".join(repr(str(p)) for p in taken)
        raise InitExistsError(f"{shown} already exists; nothing was written")
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(starter_config(prompts=prompts), indent=2, ensure_ascii=False)
    config.write_text(text + "\n", encoding="utf-8")
    written = [config]
    if prompts:
        source = default_templates_dir()
        templates.mkdir(exist_ok=True)
        for template in sorted(source.iterdir()):
            if template.suffix in (".j2", ".md"):
                shutil.copyfile(template, templates / template.name)
        written.append(templates)
    return written
