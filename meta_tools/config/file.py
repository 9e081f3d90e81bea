"""Reading `Meta_tool_config.json` as JSON, before any schema: syntax errors in words,
duplicate keys, absurd nesting, `${VAR}` expansion, and the JSON path of a problem.

`meta_tools.config` validates the result against its models and re-exports these.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..exceptions import ConfigError
from ..support.text import SURROGATE

__all__ = [
    "MAX_DEPTH",
    "Sections",
    "check_shape",
    "expand_env",
    "json_path",
    "json_syntax_problem",
    "misspelt_sections",
    "parse_json",
    "read_json",
    "read_regular_file",
]

Sections = Collection[str]
"""The top-level keys that are sections (`meta_tools.config.SECTIONS`); any other is a category."""
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def json_syntax_problem(text: str, exc: json.JSONDecodeError) -> str:
    """A JSON syntax error in words a person can act on, with the line and a caret."""
    before = text[: exc.pos].rstrip()
    what = exc.msg
    if exc.pos >= len(text.rstrip()):
        what = "the file ends before the JSON does (a missing closing } or ]?)"
    elif before.endswith(",") and text[exc.pos : exc.pos + 1] in "}]":
        what = "a trailing comma after the last item (JSON allows none); remove it"
    elif exc.msg.startswith("Expecting property name"):
        what = "expected a key in double quotes (JSON has no comments or single quotes)"
    elif exc.msg == "Expecting ',' delimiter":
        what = "expected a comma between two items"
    elif exc.msg == "Extra data":
        what = "more text after the end of the JSON object"
    elif exc.msg == "Expecting value":
        what = "expected a value (a string, number, object, list, true, false or null)"
    # JSON counts lines at "\n" only (splitlines would also split at other separators).
    lines = text.split("\n")
    line = lines[exc.lineno - 1] if exc.lineno <= len(lines) else ""
    caret = " " * (exc.colno - 1) + "^"
    return (
        f"not valid JSON, line {exc.lineno} column {exc.colno}: {what}\n      {line}\n      {caret}"
    )


def json_path(loc: Iterable[int | str]) -> str:
    """`("categories", "Maps", "tools", 2)` -> `$."Maps".tools[2]` (the file's own layout)."""
    parts = list(loc)
    if parts[:1] == ["categories"] and len(parts) > 1:
        parts = parts[1:]
        out = f"$.{json.dumps(parts[0], ensure_ascii=False)}"
        parts = parts[1:]
    else:
        out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}"
        else:
            out += f".{json.dumps(part, ensure_ascii=False)}"
    return out


def expand_env(
    value: Any,
    env: Mapping[str, str],
    problems: list[str],
    secrets: set[str],
    loc: tuple[Any, ...] = (),
    *,
    sections: Sections,
) -> Any:
    """Replace `${VAR}` in every string; an unset variable is a problem naming the field."""
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                problems.append(
                    f"{json_path(_as_loc(loc, sections))}: environment variable {name!r} is not set"
                )
                return ""
            secrets.add(env[name])
            return env[name]

        return _ENV.sub(substitute, value)
    if isinstance(value, Mapping):
        return {
            k: expand_env(v, env, problems, secrets, (*loc, k), sections=sections)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [
            expand_env(v, env, problems, secrets, (*loc, i), sections=sections)
            for i, v in enumerate(value)
        ]
    return value


def _as_loc(loc: tuple[Any, ...], sections: Sections) -> list[Any]:
    """A location in the file as the schema has it: a category's under `categories`."""
    if loc and loc[0] not in sections:
        return ["categories", *loc]
    return list(loc)


#: Deeper nesting than this is no config anyone wrote: refused before it can exhaust the stack.
MAX_DEPTH = 32


#: A config larger than this is no config anyone wrote: refused before it is read.
MAX_CONFIG_BYTES = 16 * 1024 * 1024

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, kind in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def read_regular_file(path: str | os.PathLike[str], *, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of the regular file at `path` (a link is followed), never blocking.

    A FIFO, socket, device or folder is refused before it is opened: opening a FIFO
    for reading waits for a writer, and reading a device may never end. The file is
    opened with `O_NONBLOCK` and checked again through its descriptor, so a FIFO put
    there between the check and the open is refused too.

    Raises:
        OSError: the file cannot be read; `strerror` says why in words (also for a
            file that is not a regular file, or is larger than `limit` bytes).
    """

    def refuse(why: str) -> OSError:
        return OSError(0, why, os.fspath(path))

    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise refuse(f"{_kind(mode)}, not a regular file; point it at a JSON file")
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse(f"{_kind(info.st_mode)}, not a regular file; point it at a JSON file")
        if info.st_size > limit:
            raise refuse(f"{info.st_size:,} bytes, more than the {limit:,} a config may have")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise refuse(f"more than the {limit:,} bytes a config may have")
    return data


def read_json(path: str | os.PathLike[str], *, sections: Sections) -> Any:
    """The JSON in the file at `path` (see `parse_json`).

    Raises:
        ConfigError: naming the file: it cannot be read, is not a regular file (a FIFO,
            a device, a folder), is not UTF-8, or is not valid JSON.
    """
    file = Path(path)
    try:
        # Newlines as text mode reads them, so that a syntax error's line is counted alike.
        text = read_regular_file(file).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except OSError as exc:
        raise ConfigError(str(file), [f"cannot read the file: {exc.strerror}"]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            str(file), [f"not UTF-8 text: {exc.reason} at byte {exc.start}"]
        ) from None
    return parse_json(text, str(file), sections=sections)


def parse_json(text: str, source: str, *, sections: Sections) -> Any:
    """Parse config text; a syntax error, a duplicate key or absurd nesting is a `ConfigError`.

    Raises:
        ConfigError: naming the file, with the line and column or the JSON path.
    """
    duplicates: dict[int, list[str]] = {}

    def keep_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                duplicates.setdefault(id(found), []).append(key)
            found[key] = value
        return found

    try:
        raw = json.loads(text, object_pairs_hook=keep_pairs)
    except json.JSONDecodeError as exc:
        raise ConfigError(source, [json_syntax_problem(text, exc)]) from None
    except RecursionError:
        raise ConfigError(source, [f"$: nested more than {MAX_DEPTH} levels deep"]) from None
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise ConfigError(source, [f"not valid JSON: {exc}"]) from None
    if duplicates:
        problems = [
            f"{json_path(_as_loc((*loc, key), sections))}: duplicate key (only one may be given)"
            for loc, node in _objects(raw)
            for key in dict.fromkeys(duplicates.get(id(node), []))
        ]
        raise ConfigError(source, problems)
    return raw


def check_shape(raw: Any, *, sections: Sections) -> list[str]:
    """Problems no schema can see: nesting past `MAX_DEPTH`, NUL characters and unpaired
    surrogates (a JSON `\\ud800` escape: not text, it cannot be sent on) in strings.

    Walked without recursion, so no input can exhaust the stack; a NUL would
    otherwise surface later as a `ValueError` from the OS (paths, commands).
    """
    problems: list[str] = []
    for loc, value in _nodes(raw):
        if len(loc) > MAX_DEPTH:
            return [
                f"{json_path(_as_loc(loc[:MAX_DEPTH], sections))}: nested more than {MAX_DEPTH} levels deep"
            ]
        if isinstance(value, Mapping):
            problems.extend(
                f"{json_path(_as_loc(loc, sections))}: a key contains a NUL or an unpaired surrogate"
                for key in value
                if "\0" in str(key) or SURROGATE.search(str(key))
            )
        elif isinstance(value, str) and "\0" in value:
            problems.append(f"{json_path(_as_loc(loc, sections))}: contains a NUL character")
        elif isinstance(value, str) and SURROGATE.search(value):
            problems.append(
                f"{json_path(_as_loc(loc, sections))}: contains an unpaired surrogate (\\ud800-\\udfff)"
            )
    return sorted(problems)


def _objects(raw: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every JSON object in `raw` with its location, in the order of their paths."""
    found = [(loc, value) for loc, value in _nodes(raw) if isinstance(value, dict)]
    return sorted(found, key=lambda item: [str(p) for p in item[0]])


def _nodes(raw: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every value in `raw` with its location, walked without recursion (any depth is safe)."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), raw)]
    while stack:
        loc, value = stack.pop()
        yield loc, value
        if isinstance(value, Mapping):
            stack.extend(((*loc, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*loc, i), v) for i, v in enumerate(value))


def misspelt_sections(raw: Mapping[str, Any], *, sections: Sections) -> dict[str, str]:
    """Top-level keys that look like a misspelt section name, each with that section.

    Any key that is not a section is read as a category, so `"mcp_server"` would
    otherwise be reported as a category without a description or tools, and
    every tool its servers provide as missing. A key counts when it is close to
    a section name and its value is not shaped like a category (no
    `description` or `tools`): a category named like a section stays a category.
    """
    found: dict[str, str] = {}
    for key, value in raw.items():
        if key in sections or key.startswith("$"):
            continue
        if isinstance(value, Mapping) and ("description" in value or "tools" in value):
            continue
        close = difflib.get_close_matches(key.lower(), list(sections), n=1, cutoff=0.8)
        if close:
            found[key] = close[0]
    return found
