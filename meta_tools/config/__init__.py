"""`Meta_tool_config.json`: its schema, loading and the wording of schema errors.

Reading the file as JSON (syntax, duplicate keys, nesting, `${VAR}`) is in `_config_file`.

The seed's format stays valid: every top-level key that is not a section name
is a category (`description`, `tool_usage_notes`, `tools`). The optional sections
are the fields of `MetaToolsConfig` (`SECTIONS` lists them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from ..category.limits import LIMITS
from ..exceptions import ConfigError
from ..guards import GUARDS
from ..llm import defaults as llm_defaults
from ..llm.types import ANY_CATEGORY
from ..support.redaction import Redactor
from ..support.suggest import did_you_mean
from ..support.text import clipped, slugify
from .errors import (
    HTTP_URL,
    PROGRAM_NAME,
    REDIS_URL,
    SERVER_PREFIX,
    error_text,
    shown_value,
    tag_key,
)
from .file import (
    check_shape,
    expand_env,
    json_path,
    json_syntax_problem,
    misspelt_sections,
    parse_json,
    read_json,
)

__all__ = [
    "ANY_CATEGORY",
    "READ_ONCE",
    "SECTIONS",
    "BuiltinsConfig",
    "CacheConfig",
    "CategoryConfig",
    "DefaultsConfig",
    "HttpServerConfig",
    "McpServerConfig",
    "MemoryConfig",
    "MetaToolsConfig",
    "ModelConfig",
    "ReadOnce",
    "ResumeConfig",
    "RoutingConfig",
    "ServeConfig",
    "StdioServerConfig",
    "categories_as_written",
    "category_name_problems",
    "check_shape",
    "expand_env",
    "field_loc",
    "json_path",
    "json_syntax_problem",
    "misspelt_sections",
    "parse_json",
    "read_json",
    "short_state_key",
]


_IGNORED = ("$schema", "$comment")
_SECRET_FIELDS = frozenset({"state_keys", "redis_url"})
"""Fields whose values a config error never quotes (keys; URLs may hold a password)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CacheConfig(_Strict):
    """Memoise tool results by (tool, canonical arguments); errors are never cached."""

    ttl_s: float = Field(300.0, gt=0)
    max_entries: int = Field(1024, ge=1)
    redis_url: str | None = None


class MemoryConfig(_Strict):
    """Where categories keep each client's past runs: in the process, or in Redis.

    With `redis_url`, every router replica pointed at the same Redis shares the
    memory; a client unseen for `ttl_s` seconds is forgotten.
    """

    redis_url: str | None = Field(None, pattern=REDIS_URL)
    ttl_s: float = Field(86_400.0, gt=0)


class ResumeConfig(_Strict):
    """Resumable streams of `meta-tools serve --transport http` (2025-11-25 sessions).

    Each response stream's events (the priming event, progress, the result) are
    kept in the process, or in `memory.redis_url` when set, so that a host whose
    connection drops sends `Last-Event-ID` and gets what it missed. `max_streams`
    streams are kept (the least recently used go first), each with its last
    `max_events` events, for `ttl_s` seconds after its last event. A call whose
    stream dropped runs on for `grace_s` seconds awaiting a resumption, and is
    cancelled if none comes. `retry_ms` is the reconnection delay the priming
    event suggests. `enabled: false` keeps nothing (a drop cancels the call).
    """

    enabled: bool = True
    max_streams: int = Field(1024, ge=1, le=1_000_000)
    max_events: int = Field(256, ge=2, le=65_536)
    ttl_s: float = Field(300.0, gt=0, le=86_400)
    grace_s: float = Field(30.0, gt=0, le=3600)
    retry_ms: int = Field(1000, ge=0, le=600_000)


class ServeConfig(_Strict):
    """`meta-tools serve`: behind a proxy, and with several replicas.

    `allowed_hosts` / `allowed_origins`: the public names the proxy forwards
    (`Host` and `Origin` headers), added to the DNS-rebinding allow-list.
    `trusted_proxies`: addresses whose `X-Forwarded-For` / `X-Forwarded-Proto`
    are believed. `state_keys`: secrets (>= 32 bytes; the first seals, all
    open) that every replica shares, so that any replica can continue a
    2026-07-28 sampling call; `META_TOOLS_STATE_KEY` is used when empty.
    `resume`: what is kept so that a host can resume a dropped stream.
    """

    allowed_hosts: list[str] = Field(default_factory=list)
    allowed_origins: list[str] = Field(default_factory=list)
    trusted_proxies: list[str] = Field(default_factory=list)
    state_keys: list[str] = Field(default_factory=list)
    state_ttl_s: float = Field(300.0, gt=0, le=86_400)
    max_state_bytes: int = Field(262_144, ge=4096, le=16_777_216)
    resume: ResumeConfig = ResumeConfig()

    @field_validator("state_keys")
    @classmethod
    def _long_enough(cls, keys: list[str]) -> list[str]:
        for index, key in enumerate(keys):
            if why := short_state_key(key):
                raise ValueError(f"state_keys[{index}] is {why}")
        return keys


def short_state_key(key: str) -> str | None:
    """Why `key` is too weak to seal a `request_state` (under 32 bytes), or None."""
    if len(key.encode()) >= 32:
        return None
    return (
        "shorter than 32 bytes; generate one with"
        ' python -c "import secrets; print(secrets.token_hex(32))"'
    )


class RoutingConfig(_Strict):
    """How the router chooses among many categories (see `MetaManager.rank`).

    `max_categories`: with more categories than this, a main agent is offered
    only the best-ranked ones for each message (plus `any_category`, which
    reaches the rest); of those, only the ones scoring at least `min_score_ratio`
    of the best one's score. `retry_categories`: when a category declines, the call
    is run in at most this many next-ranked categories (0: never); left out, the
    guard profile decides (guard `retry_declined`: one under `small`, none under
    `capable`, whose main agent reads the decline and chooses itself).
    """

    max_categories: int = Field(8, ge=1, le=256)
    min_score_ratio: float = Field(0.9, ge=0, le=1)
    retry_categories: int | None = Field(None, ge=0, le=8)


class GuardsConfig(_Strict):
    """Which guards run: the rules that second-guess the model (`meta_tools.guards`).

    `profile`: `capable` (the default: none, for GPT-4o, Claude, Qwen-Max, a 70B) or
    `small` (all of them, for small local models such as Qwen2.5-Coder-1.5B).
    `enable` / `disable`: guards to add to or take from the profile. `budgets`: how
    often a guard may act per run or question, where the default does not fit.
    """

    profile: Literal["capable", "small"] = "capable"
    enable: list[str] = Field(default_factory=list)
    disable: list[str] = Field(default_factory=list)
    budgets: dict[str, Annotated[int, Field(ge=0, le=100)]] = Field(default_factory=dict)

    @field_validator("enable", "disable")
    @classmethod
    def _known_guards(cls, names: list[str]) -> list[str]:
        for name in names:
            _check_guard(name)
        return names

    @field_validator("budgets")
    @classmethod
    def _known_budgets(cls, budgets: dict[str, int]) -> dict[str, int]:
        for name in budgets:
            _check_guard(name)
        return budgets


def _check_guard(name: str) -> None:
    known = [guard.name for guard in GUARDS]
    if name not in known:
        hint = did_you_mean(name, known)
        raise ValueError(
            f"{name!r} is no guard; {hint + ' ' if hint else ''}known: {', '.join(known)}"
        )


class DefaultsConfig(_Strict):
    """Limits that apply to every category unless the category overrides them."""

    max_iterations: int = Field(LIMITS.max_iterations, ge=1, le=50)
    tool_timeout_s: float = Field(LIMITS.tool_timeout_s, gt=0)
    max_tools_per_prompt: int = Field(LIMITS.max_tools_per_prompt, ge=1)
    max_calls_per_round: int = Field(LIMITS.max_calls_per_round, ge=1, le=256)
    max_tool_chars_per_prompt: int | None = Field(LIMITS.max_tool_chars_per_prompt, ge=500)
    abstain_below: float | None = Field(LIMITS.abstain_below, ge=0, le=1)
    max_result_chars: int = Field(LIMITS.max_result_chars, ge=200)
    category_memory: int = Field(LIMITS.category_memory, ge=0, le=1000)


class CategoryConfig(_Strict):
    """One category: what it is for, how to use its tools, and which tools (names or globs)."""

    description: str = Field(min_length=1)
    tool_usage_notes: str = ""
    tools: list[str] = Field(min_length=1)
    pinned: list[str] = Field(default_factory=list)
    max_iterations: int | None = Field(None, ge=1, le=50)
    tool_timeout_s: float | None = Field(None, gt=0)
    max_tools_per_prompt: int | None = Field(None, ge=1)
    max_calls_per_round: int | None = Field(None, ge=1, le=256)
    max_tool_chars_per_prompt: int | None = Field(None, ge=500)
    abstain_below: float | None = Field(None, ge=0, le=1)
    cache: CacheConfig | None = None


class ModelConfig(_Strict):
    """The LLM that runs the category loops.

    For the OpenAI provider, `name`, `base_url` and `timeout_s` left out are read
    from ``OPENAI_MODEL``, ``OPENAI_BASE_URL`` and ``META_TOOLS_TIMEOUT_S``.
    `recover_text_calls` (reading tool calls written as text) in the client: left
    out, the loop does it when the guard profile says so (guard `text_calls`).
    """

    provider: Literal["openai", "dashscope", "sampling"] = "openai"
    name: str = "gpt-4o-mini"
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(llm_defaults.TIMEOUT_S, gt=0)
    max_retries: int = Field(llm_defaults.MAX_RETRIES, ge=0, le=10)
    backoff_s: float = Field(llm_defaults.BACKOFF_S, ge=0, le=30)
    max_tokens: int | None = Field(None, gt=0)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    seed: int | None = None
    extra_body: dict[str, Any] | None = None
    recover_text_calls: bool | None = None

    @property
    def key_env(self) -> str | None:
        """The environment variable holding the API key (None: the host's model needs none)."""
        return self.api_key_env or llm_defaults.KEY_ENV.get(self.provider)


class _ServerBase(_Strict):
    prefix: str | None = Field(None, pattern=SERVER_PREFIX)
    connect: Literal["start", "first_use"] = "start"
    timeout_s: float = Field(30.0, gt=0)
    cache: CacheConfig | None = None


class StdioServerConfig(_ServerBase):
    transport: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class HttpServerConfig(_ServerBase):
    """An MCP server over HTTP.

    `auth: "oauth"` sends the OAuth login that `meta-tools login NAME` stored for it
    (refreshed when it expires); `headers` are sent beside it, except `Authorization`,
    which the login sets.
    """

    transport: Literal["streamable_http", "sse"] = "streamable_http"
    url: str = Field(pattern=HTTP_URL)
    headers: dict[str, str] = Field(default_factory=dict)
    auth: Literal["oauth"] | None = None
    scope: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_authorization(self) -> Self:
        if self.auth == "oauth" and any(k.lower() == "authorization" for k in self.headers):
            raise ValueError(
                'both "auth": "oauth" and an Authorization header set the Authorization header;'
                ' keep one: remove the header to use the stored login, or remove "auth"'
            )
        if self.scope is not None and self.auth != "oauth":
            raise ValueError('"scope" is the OAuth scope to ask for: it needs "auth": "oauth"')
        return self


McpServerConfig = Annotated[StdioServerConfig | HttpServerConfig, Field(discriminator="transport")]
_SERVER_MODELS: dict[str, type[_ServerBase]] = {
    "stdio": StdioServerConfig,
    "streamable_http": HttpServerConfig,
    "sse": HttpServerConfig,
}
"""The server model of each `transport`: the union's tags, which pydantic puts in error locations."""


class PythonBuiltinConfig(_Strict):
    timeout_s: float = Field(10.0, gt=0)
    max_output_chars: int = Field(10_000, ge=100)


class ShellBuiltinConfig(_Strict):
    timeout_s: float = Field(10.0, gt=0)
    max_output_chars: int = Field(10_000, ge=100)
    # No default: every program is named by the operator (see SECURITY.md for what to avoid).
    allowed_commands: list[Annotated[str, Field(pattern=PROGRAM_NAME)]] = Field(min_length=1)


class FileBuiltinConfig(_Strict):
    roots: list[str] = Field(min_length=1)
    max_bytes: int = Field(200_000, ge=100)


class BuiltinsConfig(_Strict):
    """Built-in tools; each is off unless named here."""

    execute_python_code: PythonBuiltinConfig | None = None
    execute_shell_command: ShellBuiltinConfig | None = None
    read_file: FileBuiltinConfig | None = None
    list_directory: FileBuiltinConfig | None = None


@dataclass(frozen=True)
class ReadOnce:
    """Marks a section that a running router reads once: an edit applies on the next start."""

    why: str


_TOOL_SOURCE = ReadOnce("tool sources are not reloaded")
_AT_START = ReadOnce("it is read only at start")
"""Where category memory lives and how the server listens: fixed while serving."""


class MetaToolsConfig(_Strict):
    """The whole configuration file."""

    categories: dict[str, CategoryConfig] = Field(min_length=1)
    model: ModelConfig = ModelConfig()
    mcp_servers: Annotated[dict[str, McpServerConfig], _TOOL_SOURCE] = Field(default_factory=dict)
    python_tools: Annotated[list[str], _TOOL_SOURCE] = Field(default_factory=list)
    """Modules or `path/to/file.py`, optionally `:attribute`, relative to the config file."""
    builtins: Annotated[BuiltinsConfig, _TOOL_SOURCE] = BuiltinsConfig()
    defaults: DefaultsConfig = DefaultsConfig()
    prompts_dir: str | None = None
    memory: Annotated[MemoryConfig, _AT_START] = MemoryConfig()
    serve: Annotated[ServeConfig, _AT_START] = ServeConfig()
    routing: RoutingConfig = RoutingConfig()
    guards: GuardsConfig = GuardsConfig()
    _source: str = PrivateAttr(default="<memory>")
    _base_dir: str = PrivateAttr(default=".")
    _secrets: frozenset[str] = PrivateAttr(default=frozenset())

    @model_validator(mode="before")
    @classmethod
    def _gather_categories(cls, data: Any) -> Any:
        """The seed's format: every non-section top-level key is a category.

        A `categories` key holds the categories, unless it is shaped like one category
        (a `description` or `tools`): then it is a category of that name.
        `$schema` (an editor's pointer to the JSON Schema) and `$comment` (notes for
        people: a string or a list of lines) are accepted and ignored.
        """
        return _gathered(data)

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _transport_by_default(cls, servers: Any) -> Any:
        """A server entry with no `transport` is a stdio server when it has a `command`,
        and a streamable HTTP one (today's MCP transport) when it has a `url`."""
        if not isinstance(servers, Mapping):
            return servers
        return {name: _with_transport(entry) for name, entry in servers.items()}

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, env: Mapping[str, str] | None = None
    ) -> MetaToolsConfig:
        """Read, expand `${VAR}` and validate a config file.

        Raises:
            ConfigError: listing every problem, each naming the file and the field.
        """
        file = Path(path)
        raw = read_json(file, sections=SECTIONS)
        return cls.from_data(raw, source=str(file), base_dir=str(file.parent), env=env)

    @classmethod
    def from_data(
        cls,
        raw: Any,
        *,
        source: str = "<memory>",
        base_dir: str = ".",
        env: Mapping[str, str] | None = None,
    ) -> MetaToolsConfig:
        """Validate already-parsed JSON data (see `load`)."""
        if not isinstance(raw, Mapping):
            raise ConfigError(
                source, [f"$: the top level must be a JSON object, got {type(raw).__name__}"]
            )
        problems: list[str] = []
        secrets: set[str] = set()
        shape_problems = check_shape(raw, sections=SECTIONS)
        if shape_problems:
            raise ConfigError(source, shape_problems)
        expanded = expand_env(
            raw, os.environ if env is None else env, problems, secrets, sections=SECTIONS
        )
        # A problem quotes the bad value, which may have come from a secret.
        redactor = Redactor(secrets)
        misspelt = misspelt_sections(raw, sections=SECTIONS)
        # The root cause first; what follows from it (a "category" without a description,
        # its servers' tools missing) is held back until it is fixed.
        problems[:0] = [
            f"{json_path([key])}: not a section name; did you mean the section {section!r}?"
            " (any other top-level key is read as a category; what follows from it is"
            " checked once it is renamed)"
            for key, section in misspelt.items()
        ]
        try:
            config = cls.model_validate(expanded)
        except ValidationError as exc:
            problems.extend(_describe(exc, redactor, skip=set(misspelt)))
        categories = _gathered(expanded).get("categories")
        if isinstance(categories, Mapping):
            problems.extend(category_name_problems(k for k in categories if k not in misspelt))
        if problems:
            raise ConfigError(source, [redactor.text(p) for p in problems])
        config._source, config._base_dir = source, base_dir
        config._secrets = frozenset(s for s in secrets if s)
        return config

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The schema of the *file*: sections by name, every other key a category."""
        schema = super().model_json_schema(*args, **kwargs)
        categories = schema["properties"].pop("categories")
        schema["required"] = [r for r in schema.get("required", []) if r != "categories"]
        if not schema["required"]:
            del schema["required"]
        schema["properties"]["$schema"] = {"type": "string"}
        schema["properties"]["$comment"] = {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
        }
        schema["additionalProperties"] = categories["additionalProperties"]
        schema["minProperties"] = 1
        schema["title"] = "Meta_tool_config.json"
        return schema

    @property
    def source(self) -> str:
        """The file this config was read from (for error messages)."""
        return self._source

    @property
    def base_dir(self) -> str:
        return self._base_dir

    def prompts_path(self) -> Path | None:
        if self.prompts_dir is None:
            return None
        return (Path(self.base_dir) / self.prompts_dir).resolve()

    @property
    def secrets(self) -> frozenset[str]:
        """Values that came from `${VAR}` references: never to be printed."""
        return self._secrets


SECTIONS = tuple(name for name in MetaToolsConfig.model_fields if name != "categories")
"""The top-level keys of the file that are sections; every other key is a category."""
READ_ONCE = {
    name: mark.why
    for name, field in MetaToolsConfig.model_fields.items()
    for mark in field.metadata
    if isinstance(mark, ReadOnce)
}
"""The sections a reload leaves as they are, each with why."""


def field_loc(loc: Iterable[int | str]) -> list[int | str]:
    """A pydantic error location as the file has it: without the server union's tag step.

    `("mcp_servers", "search", "sse", "url")` -> `["mcp_servers", "search", "url"]`; a
    server, category or key that happens to be named like a tag (`"sse"`) is kept.
    """
    parts = list(loc)
    if parts[:1] == ["mcp_servers"] and len(parts) > 2 and parts[2] in _SERVER_MODELS:
        del parts[2]
    return parts


def category_name_problems(names: Iterable[str]) -> list[str]:
    """One line per category name that cannot be the function name the main agent calls.

    A name needs a letter or digit (`"!!!"` has none); it may not become
    `any_category`, nor the function name of an earlier category (`Web Search`
    and `web_search` both become `web_search`).
    """
    problems: list[str] = []
    taken: dict[str, str] = {}
    for name in names:
        where = json_path(["categories", name])
        slug = slugify(name)
        if slugify(f"{name} x") == "x":  # nothing of the name is left in a function name
            problems.append(
                f"{where}: category name {name!r} leaves nothing for its function name (the"
                " name the main agent calls it by, made of its letters and digits); rename it"
            )
        elif slug == ANY_CATEGORY:
            problems.append(
                f"{where}: category {name!r} has the function name {ANY_CATEGORY!r}, which is"
                " the router's own tool for reaching any category; rename it"
            )
        elif slug in taken:
            problems.append(
                f"{where}: categories {taken[slug]!r} and {name!r} have the same function"
                f" name {slug!r} (names are compared in lower case, words joined by '_');"
                " rename one"
            )
        else:
            taken[slug] = name
    return problems


def _with_transport(entry: Any) -> Any:
    if not isinstance(entry, Mapping) or "transport" in entry:
        return entry
    if "command" in entry:
        return {"transport": "stdio", **entry}
    if "url" in entry:
        return {"transport": "streamable_http", **entry}
    return entry


def _gathered(data: Any) -> Any:
    """`data` with its categories under `categories` (see `MetaToolsConfig._gather_categories`)."""
    if not isinstance(data, Mapping):
        return data
    if "categories" in data and not _category_shaped(data["categories"]):
        return {k: v for k, v in data.items() if k not in _IGNORED}
    sections = {k: v for k, v in data.items() if k in SECTIONS}
    return {**sections, "categories": categories_as_written(data)[0]}


def categories_as_written(data: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """A config file's categories as its JSON has them, and whether they are nested under
    `categories` (rather than each a top-level key that is no section)."""
    inner = data.get("categories")
    if isinstance(inner, Mapping) and not _category_shaped(inner):
        return dict(inner), True
    return {k: v for k, v in data.items() if k not in SECTIONS and k not in _IGNORED}, False


def _category_shaped(value: Any) -> bool:
    """Whether `value` looks like one category rather than a section of them."""
    return isinstance(value, Mapping) and ("description" in value or "tools" in value)


def _describe(
    exc: ValidationError, redactor: Redactor, *, skip: set[str] | frozenset[str] = frozenset()
) -> list[str]:
    """One line per validation error, in our words (`_config_errors`); errors inside the
    categories named in `skip` left out."""
    problems: list[str] = []
    for err in exc.errors(include_url=False):
        loc = field_loc(err["loc"])
        if loc[:1] == ["categories"] and len(loc) > 1 and loc[1] in skip:
            continue
        where = json_path(loc)
        if err["type"] == "extra_forbidden":
            problems.append(f"{where}: {_unknown_key(list(err['loc']))}")
        elif err["type"] == "missing":
            hint = ""
            if len(loc) == 3 and loc[0] == "categories":
                hint = _did_you_mean(str(loc[1]), list(SECTIONS), what="the section ")
            problems.append(f"{where}: field required{hint}")
        else:
            field = next((str(p) for p in reversed(loc) if isinstance(p, str)), "")
            text, with_value = error_text(err, field=field)
            if err["type"] == "union_tag_invalid":  # the tag's own key is what is wrong
                where = json_path([*loc, tag_key(err)])
            if _SECRET_FIELDS & {p for p in loc if isinstance(p, str)}:
                problems.append(f"{where}: {text} (the value is not shown)")
            elif with_value:
                # Redacted before cutting: whole secrets only.
                shown = clipped(redactor.text(shown_value(err.get("input"))), 60)
                problems.append(f"{where}: {text} (got {shown})")
            else:
                problems.append(f"{where}: {text}")
    return problems


def _unknown_key(loc: list[Any]) -> str:
    """An unknown key, with the valid keys and a close one; a server's key of the other kind
    (`url` beside `command`) says that a server is one or the other."""
    parent = _model_at(loc[:-1])
    key = str(loc[-1])
    if parent in (StdioServerConfig, HttpServerConfig):
        other = HttpServerConfig if parent is StdioServerConfig else StdioServerConfig
        if key in other.model_fields and key not in parent.model_fields:
            has, kind = ("command", "stdio") if parent is StdioServerConfig else ("url", "HTTP")
            return (
                f"unknown key for this {kind} server (it has {has!r}): a server has either"
                ' "command" (stdio) or "url" (HTTP); keep one'
            )
    known = f" (valid keys: {', '.join(parent.model_fields)})" if parent else ""
    guess = _did_you_mean(key, list(parent.model_fields) if parent else [])
    return f"unknown key{guess}{known}"


def _did_you_mean(name: str, known: list[str], *, what: str = "") -> str:
    """`; did you mean 'tools'?` when `name` is close to one of `known`, else ''."""
    hint = did_you_mean(name, known, n=1, what=what)
    return f"; {hint}" if hint else ""


def _model_at(loc: list[Any]) -> type[BaseModel] | None:
    """The config model that owns the field at `loc`, a pydantic location (for listing valid keys).

    A server's model is the one its `transport` chose: the tag step pydantic puts in `loc`.
    """
    model: type[BaseModel] = MetaToolsConfig
    index = 0
    while index < len(loc):
        key = loc[index]
        if key == "categories":
            if index + 1 >= len(loc):
                return None
            model = CategoryConfig
            index += 2
            continue
        if key == "mcp_servers":
            tag = loc[index + 2] if index + 2 < len(loc) else None
            if tag not in _SERVER_MODELS:
                return None
            model = _SERVER_MODELS[tag]
            index += 3
            continue
        field = model.model_fields.get(str(key))
        annotation = getattr(field, "annotation", None)
        inner = [a for a in getattr(annotation, "__args__", (annotation,)) if isinstance(a, type)]
        nested = [a for a in inner if issubclass(a, BaseModel)]
        if not nested:
            return None
        model = nested[0]
        index += 1
    return model
