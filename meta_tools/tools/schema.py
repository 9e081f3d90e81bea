"""One pipeline from a signature (or a parameter table) to a pydantic model to a JSON schema.

The model that produces a tool's schema is the model that validates every
call, so what the LLM is shown and what is accepted never drift apart.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import re
import types
import typing
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from typing_extensions import Doc

from ..exceptions import ToolArgumentsError, ToolDefinitionError
from ..support.json_text import loads
from ..support.text import clipped

__all__ = [
    "JSON_TYPES",
    "args_model_from_parameters",
    "args_model_from_signature",
    "check_tool_name",
    "format_validation_error",
    "humanize",
    "parse_docstring",
    "schema_from_model",
    "tool_name_slug",
    "type_word",
    "validate_arguments",
]

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
    "null": type(None),
}

_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Return|Yields|Raises|Examples?|Notes?|Attributes):\s*$"
)
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def type_word(schema: Mapping[str, Any]) -> str:
    """The one type word of the default prompt format for a property's JSON schema.

    A list of types or an `anyOf`/`oneOf` gives its first non-null type; an
    `enum` without a type is a string; anything else untyped is an object.
    """
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        return next((t for t in declared if isinstance(t, str) and t != "null"), "string")
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping) and option.get("type") not in (None, "null"):
                    return type_word(option)
    return "string" if "enum" in schema else "object"


def tool_name_slug(name: str) -> str:
    """`name` made a valid tool name: other characters become `_`, cut to 64."""
    if TOOL_NAME.match(name):
        return name
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:64] or "tool"


def check_tool_name(name: str) -> str:
    """Return `name` if it is a valid function name for LLM APIs, else raise."""
    if not TOOL_NAME.match(name):
        raise ToolDefinitionError(
            f"tool name {name!r} is invalid: names must match ^[A-Za-z0-9_-]{{1,64}}$ "
            f"(letters, digits, '_' and '-', at most 64); try {tool_name_slug(name)!r}"
        )
    return name


def humanize(name: str) -> str:
    """`first_number` -> `First Number`: the description of an undocumented parameter."""
    return " ".join(part.capitalize() for part in name.split("_") if part)


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, current, arg_indent = header.group(1), None, None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        arg_indent = indent if arg_indent is None else arg_indent
        match = _ARG_LINE.match(line)
        if match and indent == arg_indent:
            current = match.group(1).lstrip("*")
            params[current] = match.group(3).strip()
        elif current:
            params[current] = f"{params[current]} {line.strip()}".strip()
    return "\n".join(summary).strip(), params


def _unwrap_optional(annotation: Any) -> Any:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrap_optional(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _unwrap_optional(members[0])
    return annotation


def wants_json(annotation: Any) -> bool:
    """True when a JSON *string* from the LLM should be parsed for this annotation."""
    inner = _unwrap_optional(annotation)
    origin = get_origin(inner) or inner
    if origin in (list, dict, set, frozenset, tuple, Mapping, typing.Sequence):
        return True
    return inspect.isclass(inner) and issubclass(inner, BaseModel)


class _Args(BaseModel):
    """Base of every generated argument model: unknown keys are errors the LLM can fix."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class _TableArgs(_Args):
    """Base of a model built from a parameter table: it knows no defaults, so an
    optional argument the LLM left out is not passed (the tool's own default applies)."""


def args_model_from_signature(
    func: Callable[..., Any],
    name: str,
    *,
    skip: Callable[[inspect.Parameter, Any], bool],
) -> tuple[type[BaseModel], list[str]]:
    """Build the argument model of `func`; `skip` marks runtime-injected parameters.

    Returns the model and the names of the skipped (injected) parameters.
    """
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as exc:  # unresolvable forward references
        raise ToolDefinitionError(f"cannot read the type hints of tool {name!r}: {exc}") from exc
    _, doc_args = parse_docstring(func.__doc__)
    fields: dict[str, Any] = {}
    injected: list[str] = []
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name == "self":
            continue
        annotation = hints.get(param.name, Any)
        if skip(param, annotation):
            injected.append(param.name)
            continue
        description = doc_args.get(param.name)
        if get_origin(annotation) is Annotated:
            base, *extras = get_args(annotation)
            for extra in extras:
                if isinstance(extra, Doc):
                    description = extra.documentation
                elif isinstance(extra, FieldInfo) and extra.description:
                    description = extra.description
            kept = [e for e in extras if not isinstance(e, Doc)]
            annotation = Annotated[tuple([base, *kept])] if kept else base
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            annotation,
            Field(default=default, description=description or humanize(param.name)),
        )
    try:
        model = create_model(f"{name}_arguments", __base__=_Args, **fields)
        model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(
            f"tool {name!r} has a parameter with no JSON schema: {exc}"
        ) from exc
    return model, injected


def args_model_from_parameters(name: str, properties: Mapping[str, Any]) -> type[BaseModel]:
    """Build a coarse argument model from JSON-schema properties (BaseTool args, MCP tools).

    Top-level types are checked and coerced; nested structure is left to the tool.
    Property names are arbitrary strings (an MCP server may send `model_config`,
    `_id` or `a b`), so each field gets a safe Python name and the property
    name as its alias.
    """
    fields: dict[str, Any] = {}
    for index, (key, (schema, required)) in enumerate(properties.items()):
        declared = schema.get("type") if isinstance(schema, Mapping) else None
        python = JSON_TYPES.get(declared, Any) if isinstance(declared, str) else Any
        if not required:
            python = python | None if python is not Any else Any
        fields[f"field_{index}"] = (python, Field(... if required else None, alias=key))
    return create_model(f"{name}_arguments", __base__=_TableArgs, **fields)


def _argument_names(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> the argument name the LLM uses (the alias, when there is one)."""
    return {
        key: key if info.alias is None else info.alias for key, info in model.model_fields.items()
    }


@dataclass(frozen=True, slots=True)
class _ArgumentPlan:
    """What `validate_arguments` needs to know about a model, worked out once per model."""

    names: dict[str, str]
    """Field name -> argument name."""
    json_arguments: tuple[str, ...]
    """Arguments whose string value is parsed as JSON first (lists, dicts, models)."""
    given_only: bool
    """Return only the arguments the LLM gave (a `_TableArgs` model knows no defaults)."""


# Weak keys: a model that is gone (a reloaded tool) takes its plan with it.
_PLANS: weakref.WeakKeyDictionary[type[BaseModel], _ArgumentPlan] = weakref.WeakKeyDictionary()


def _plan(model: type[BaseModel]) -> _ArgumentPlan:
    plan = _PLANS.get(model)
    if plan is None:
        names = _argument_names(model)
        plan = _ArgumentPlan(
            names=names,
            json_arguments=tuple(
                names[key]
                for key, info in model.model_fields.items()
                if wants_json(info.annotation)
            ),
            given_only=issubclass(model, _TableArgs),
        )
        _PLANS[model] = plan
    return plan


def schema_from_model(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema the LLM sees: no titles, `$ref`s inlined, `type` first."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    resolved = _inline(raw, defs, ())
    leftover = {k: _clean(v) for k, v in defs.items()} if _has_ref(resolved) else {}
    properties = {k: _clean(v) for k, v in resolved.get("properties", {}).items()}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(resolved.get("required", [])),
    }
    if leftover:
        schema["$defs"] = leftover
    return schema


def _inline(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        key = ref.removeprefix("#/$defs/")
        if key in stack or key not in defs:
            return node  # recursive model: keep the reference and its $defs
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return {**_inline(defs[key], defs, (*stack, key)), **siblings}
    return {k: _inline(v, defs, stack) for k, v in node.items()}


def _has_ref(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_ref(v) for v in node)
    return False


def _clean(node: Any) -> Any:
    """Drop `title`s and put `type` first and `description` last, recursively."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    if "type" in node:
        out["type"] = node["type"]
    for key, value in node.items():
        if key in ("type", "title", "description"):
            continue
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            out[key] = {k: _clean(v) for k, v in value.items()}
        else:
            out[key] = _clean(value)
    if "description" in node:
        out["description"] = node["description"]
    return out


def validate_arguments(
    tool: str, model: type[BaseModel], arguments: Mapping[str, Any] | str | None
) -> dict[str, Any]:
    """Validate and coerce LLM arguments; raise one ToolArgumentsError listing every problem.

    A tool without parameters ignores what it is given: an argument there can only be a
    guess, while an unknown key beside real parameters may be a misspelt one, and is
    reported.
    """
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = loads(arguments)
        except ValueError as exc:
            where = (
                f"{exc.msg} at char {exc.pos}"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            )
            raise ToolArgumentsError(
                tool, [f"arguments are not valid JSON ({where}); send an object"]
            ) from None
    if not isinstance(arguments, Mapping):
        raise ToolArgumentsError(
            tool, [f"arguments must be a JSON object, got {type(arguments).__name__}"]
        )
    plan = _plan(model)
    if not plan.names:
        # Small models give a tool that takes nothing an argument it cannot mean (the
        # 1.5B sent `{"id": "top100"}` to "Get Top 100 Movies"); told so, it gave up.
        return {}
    values = dict(arguments)
    for name in plan.json_arguments:
        value = values.get(name)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):  # validation reports it
                values[name] = loads(value)
    try:
        parsed = model.model_validate(values)
    except ValidationError as exc:
        raise ToolArgumentsError(tool, format_validation_error(exc, model)) from None
    given = parsed.model_fields_set if plan.given_only else plan.names
    return {name: getattr(parsed, key) for key, name in plan.names.items() if key in given}


def format_validation_error(exc: ValidationError, model: type[BaseModel]) -> list[str]:
    """Turn pydantic errors into short sentences an LLM can act on."""
    problems: list[str] = []
    names = _plan(model).names.values()
    allowed = ", ".join(n if n.isprintable() and n.strip() else repr(n) for n in names) or "none"
    for err in exc.errors(include_url=False):
        where = ".".join(str(part) for part in err["loc"]) or "arguments"
        if err["type"] == "missing":
            problems.append(f"{where!r} is required")
        elif err["type"] == "extra_forbidden":
            problems.append(f"{where!r} is not a parameter (allowed: {allowed})")
        else:
            shown = clipped(repr(err.get("input")), 60)
            problems.append(f"{where!r}: {err['msg']} (got {shown})")
    return problems
