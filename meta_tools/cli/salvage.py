"""The usable part of a broken config, so that `validate` finds every problem in one pass.

A file with a wrong type in one category and a misspelt tool name in another
should report both at once. The schema problems are reported first; then the
parts they sit in are cut away (a bad field, or the object missing a required
field) and what is left is checked against the tool sources like a valid file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..config import (
    SECTIONS,
    MetaToolsConfig,
    check_shape,
    expand_env,
    field_loc,
    misspelt_sections,
    read_json,
)
from ..exceptions import ConfigError

__all__ = ["salvage"]

_MAX_PASSES = 100


def salvage(path: str | os.PathLike[str]) -> MetaToolsConfig | None:
    """The config at `path` with every invalid part removed; None if nothing usable is left."""
    file = Path(path)
    try:
        raw = read_json(file, sections=SECTIONS)
    except ConfigError:
        return None
    if not isinstance(raw, Mapping) or check_shape(
        raw, sections=SECTIONS
    ):  # too deep or not text: nothing to save
        return None
    if misspelt_sections(
        raw, sections=SECTIONS
    ):  # tool names are checked once the section is named right
        return None
    data: Any = expand_env(raw, os.environ, [], set(), sections=SECTIONS)
    for _ in range(_MAX_PASSES):
        try:
            MetaToolsConfig.model_validate(data)
        except ValidationError as exc:
            if not any(_cut(data, error) for error in exc.errors(include_url=False)):
                return None
            continue
        try:
            return MetaToolsConfig.from_data(
                data, source=str(file), base_dir=str(file.parent), env={}
            )
        except ConfigError:
            return None
    return None


def _cut(data: dict[str, Any], error: Any) -> bool:
    """Remove the part of `data` an error points at; False when nothing could be removed."""
    loc = field_loc(error["loc"])
    if loc[:1] == ["categories"]:
        loc = loc[1:]  # categories are top-level keys of the file
        if not loc:
            return False  # no category at all: nothing to check
    if error["type"] == "missing":
        loc = loc[:-1]  # a required field is absent: drop the object that lacks it
    if not loc:
        return False
    parent: Any = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return False
    key = loc[-1]
    if isinstance(parent, dict) and key in parent:
        del parent[key]
        return True
    if isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        del parent[key]
        return True
    return False
