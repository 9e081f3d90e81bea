"""A server's input schema as the category model gets it: its meaning kept, in a form it accepts.

OpenAI-style function calling takes any JSON schema for a function's
parameters, except at the top: the root must be `type: "object"` and may not
carry `allOf`, `anyOf`, `oneOf`, `not`, `enum` or `const` (the API answers 400
"schema must have type 'object' and not have ... at the top level"), and
conditionals there (`if`/`then`/`else`) are lost on most models. Nested
schemas are kept as the server wrote them: `$schema`, `$defs`, `$ref`,
`prefixItems`, nested combinators and the rest.

What the top cannot hold is rewritten:

- `allOf`: its object branches are merged into the one object (properties,
  `required`, other keywords), as are nested `allOf`s;
- `anyOf`/`oneOf` whose every branch constrains one and the same property: the
  alternatives move under that property;
- other `anyOf`/`oneOf`: every branch's properties are offered (as optional
  unless all branches require them), and which sets of arguments go together
  is said in words;
- `if`/`then`/`else`, `not`, `enum`, `const`: said in words (with the
  properties a branch declares offered as optional).

The top's `title` (the name of the server's argument model, `addArguments`) is
left out: the function's own name stands there. Nothing else is dropped silently: each sentence in words is a `note`, which the
tool adds to its description. Arguments are still validated against the
server's own schema (`McpServerTool.validate_arguments`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...support.text import clipped

__all__ = ["OfferedSchema", "offered_schema"]

_COMBINED = ("allOf", "anyOf", "oneOf")
_IN_WORDS = ("if", "then", "else", "not", "enum", "const")
_NOT_AT_TOP = (*_COMBINED, *_IN_WORDS)
_MAX_DEPTH = 8
"""How deep `allOf` branches are merged into each other; deeper ones are said in words."""
_MAX_JSON_CHARS = 300
"""The longest schema quoted as JSON in a note."""


@dataclass(frozen=True)
class OfferedSchema:
    """The function-parameters schema the model gets, and what it says only in words."""

    parameters: dict[str, Any]
    notes: tuple[str, ...] = ()


@dataclass
class _Object:
    """An object schema being assembled from the top of a schema and its merged branches."""

    properties: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    keywords: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_property(self, name: str, schema: Any) -> None:
        known = self.properties.get(name)
        if known is None or known == schema or schema in ({}, True):
            self.properties.setdefault(name, schema)
        elif known in ({}, True):
            self.properties[name] = schema
        else:  # both constrain it: both apply
            self.properties[name] = {"allOf": [known, schema]}

    def require(self, names: list[str]) -> None:
        self.required += [n for n in names if n not in self.required]


def offered_schema(schema: Mapping[str, Any]) -> OfferedSchema:
    """The schema the category model gets for a tool whose input schema is `schema`."""
    top = _Object()
    _merge(top, schema, schema, 0)
    parameters: dict[str, Any] = {"type": "object", **top.keywords}
    parameters["type"] = "object"
    parameters["properties"] = top.properties
    parameters["required"] = top.required
    parameters = _without_dangling_refs(parameters, schema, top.notes)
    return OfferedSchema(parameters, tuple(dict.fromkeys(top.notes)))


def _merge(into: _Object, node: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> None:
    """Merge one object schema (the top, or an `allOf` branch) into `into`."""
    node = _resolved(node, root)
    for key, value in node.items():
        if key in ("properties", "required", "type", "title", "$ref", *_NOT_AT_TOP):
            continue
        if key not in into.keywords:
            into.keywords[key] = value
        elif key == "additionalProperties" and value is False:
            into.keywords[key] = False  # the strictest branch wins
    for name, prop in _properties(node).items():
        into.add_property(name, prop)
    into.require(_required(node))
    for branch in _branches(node, "allOf"):
        branch = _resolved(branch, root)
        if depth < _MAX_DEPTH and _is_object_schema(branch):
            _merge(into, branch, root, depth + 1)
        else:
            into.notes.append(f"The arguments must also match {_json(branch)}.")
    for keyword in ("anyOf", "oneOf"):
        branches = [_resolved(b, root) for b in _branches(node, keyword)]
        if branches:
            _alternatives(into, keyword, branches, root, depth)
    _conditions(into, node, root, depth)


def _alternatives(
    into: _Object,
    keyword: str,
    branches: list[Mapping[str, Any]],
    root: Mapping[str, Any],
    depth: int,
) -> None:
    """A top-level `anyOf`/`oneOf`: under the one property it is about, or in words."""
    only = {name for b in branches for name in _properties(b)}
    if len(only) == 1 and all(set(b) == {"properties"} for b in branches):
        (name,) = only
        choices = [_properties(b).get(name, {}) for b in branches]
        into.add_property(name, {keyword: choices})
        return
    sets: list[_Object] = []
    for branch in branches:
        part = _Object()
        if _is_object_schema(branch) and depth < _MAX_DEPTH:
            _merge(part, branch, root, depth + 1)
        sets.append(part)
        for name, prop in part.properties.items():
            into.add_property(name, prop)
    common = [n for n in sets[0].required if all(n in s.required for s in sets)]
    into.require(common)
    how = "exactly one" if keyword == "oneOf" else "at least one"
    described = "; ".join(
        f"({number}) {_set_words(part, branch)}"
        for number, (part, branch) in enumerate(zip(sets, branches, strict=True), 1)
    )
    into.notes.append(f"The arguments must match {how} of these: {described}.")
    for part in sets:
        into.notes += part.notes


def _conditions(
    into: _Object, node: Mapping[str, Any], root: Mapping[str, Any], depth: int
) -> None:
    """`if`/`then`/`else`, `not`, `enum` and `const` at the top, in words."""
    condition = node.get("if")
    if isinstance(condition, Mapping):
        then, otherwise = node.get("then"), node.get("else")
        words = f"If {_condition_words(_resolved(condition, root))}"
        for branch, lead in ((then, ", "), (otherwise, "; otherwise, ")):
            if isinstance(branch, Mapping):
                part = _Object()
                _merge(part, _resolved(branch, root), root, depth + 1)
                for name, prop in part.properties.items():
                    into.add_property(name, prop)
                words += f"{lead}{_consequence_words(part, branch)}"
        into.notes.append(words + ".")
    excluded = node.get("not")
    if isinstance(excluded, Mapping):
        required = _required(excluded)
        if set(excluded) == {"required"} and required:
            into.notes.append(f"Do not give {_names(required, 'and')} together.")
        else:
            into.notes.append(f"The arguments must not match {_json(excluded)}.")
    if "enum" in node:
        into.notes.append(f"The arguments must be one of {_json(node['enum'])}.")
    if "const" in node:
        into.notes.append(f"The arguments must be exactly {_json(node['const'])}.")


def _set_words(part: _Object, branch: Mapping[str, Any]) -> str:
    """One alternative set of arguments, in words."""
    said = _fixed_values(part)
    if part.required:
        said.insert(0, _names(part.required, "and"))
    return ", ".join(said) if said else f"arguments matching {_json(branch)}"


def _condition_words(condition: Mapping[str, Any]) -> str:
    part = _Object()
    for name, prop in _properties(condition).items():
        part.add_property(name, prop)
    said = _fixed_values(part)
    said += [f"`{name}` is given" for name in _required(condition)]
    if said and set(condition) <= {"properties", "required", "type"}:
        return " and ".join(said)
    return f"the arguments match {_json(condition)}"


def _consequence_words(part: _Object, branch: Mapping[str, Any]) -> str:
    said = _fixed_values(part, must=True)
    if part.required:
        verb = "is" if len(part.required) == 1 else "are"
        said.insert(0, f"{_names(part.required, 'and')} {verb} required")
    return ", ".join(said) if said else f"the arguments must match {_json(branch)}"


def _fixed_values(part: _Object, *, must: bool = False) -> list[str]:
    """What each property a schema pins with `const` or `enum` is (or must be)."""
    said: list[str] = []
    for name, prop in part.properties.items():
        if isinstance(prop, Mapping) and "const" in prop:
            said.append(f"`{name}` {'must be' if must else '='} {_json(prop['const'])}")
        elif isinstance(prop, Mapping) and isinstance(prop.get("enum"), list):
            verb = "must be one of" if must else "is one of"
            said.append(f"`{name}` {verb} {_json(prop['enum'])}")
    return said


def _names(names: list[str], joiner: str) -> str:
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} {joiner} {quoted[-1]}"


def _json(value: Any) -> str:
    return clipped(json.dumps(value, ensure_ascii=False, separators=(",", ":")), _MAX_JSON_CHARS)


def _properties(node: Mapping[str, Any]) -> dict[str, Any]:
    properties = node.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {str(k): v if isinstance(v, Mapping | bool) else {} for k, v in properties.items()}


def _required(node: Mapping[str, Any]) -> list[str]:
    required = node.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def _branches(node: Mapping[str, Any], keyword: str) -> list[Mapping[str, Any]]:
    branches = node.get(keyword)
    if not isinstance(branches, list):
        return []
    return [b for b in branches if isinstance(b, Mapping)]


def _is_object_schema(node: Mapping[str, Any]) -> bool:
    """Whether a branch says something about an object (not `not`, a string type, ...)."""
    declared = node.get("type", "object")
    types = declared if isinstance(declared, list) else [declared]
    return "object" in types and "not" not in node


def _pointed(pointer: str, root: Any) -> Any:
    """The value a local `$ref` (`#/a/b`) names in `root`; None when it names nothing."""
    if not pointer.startswith("#"):
        return None
    node = root
    for raw in [p for p in pointer[1:].split("/") if p]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _resolved(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """A branch whose local `$ref` is followed (one step; its siblings win)."""
    ref = node.get("$ref")
    target = _pointed(ref, root) if isinstance(ref, str) else None
    if not isinstance(target, Mapping) or target is node:
        return node
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def _without_dangling_refs(
    parameters: dict[str, Any], original: Mapping[str, Any], notes: list[str]
) -> dict[str, Any]:
    """Inline each `$ref` that pointed into a part of the top that was rewritten."""

    def fix(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [fix(item, seen) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and _pointed(ref, parameters) is None:
            target = _pointed(ref, original)
            if isinstance(target, Mapping) and ref not in seen:
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                return fix({**target, **siblings}, (*seen, ref))
            if ref.startswith("#"):
                notes.append(f"The schema refers to {ref!r}, which it does not define.")
        return {k: fix(v, seen) for k, v in node.items()}

    fixed: dict[str, Any] = fix(parameters, ())
    return fixed
