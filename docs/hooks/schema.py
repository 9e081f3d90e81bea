"""An mkdocs hook: the configuration page shows the config's JSON Schema of the code it is built from."""

from __future__ import annotations

import json
from typing import Any

MARKER = "<!-- config-schema -->"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from meta_tools.cli.checks import editor_schema

    schema = json.dumps(editor_schema(), indent=2)
    return markdown.replace(
        MARKER, f'??? note "The JSON Schema"\n\n    ```json\n{_indent(schema)}\n    ```\n'
    )


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
