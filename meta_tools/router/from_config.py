"""Turning a config into objects, in one place: the levels below take plain arguments.

- the model: `model_from_config` (the `model` section, and the environment);
- the tool sources: `mcp_source` (an `mcp_servers` entry), `builtin_tools`
  (the `builtins` section), `cache_from_config` (a `cache` entry);
- a category: `category_from_config`, its limits from `category_limits` (its
  overrides over the `defaults` section).

Nothing under `meta_tools.tools` or `meta_tools.llm` reads the config.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, TypedDict

from mcp import StdioServerParameters

from ..category.limits import Limits
from ..category.manager import CategoryManager
from ..category.memory import MemoryStore
from ..category.prompts import PromptSet
from ..config import (
    CacheConfig,
    CategoryConfig,
    DefaultsConfig,
    FileBuiltinConfig,
    HttpServerConfig,
    McpServerConfig,
    MetaToolsConfig,
    ModelConfig,
    StdioServerConfig,
)
from ..exceptions import ConfigError
from ..guards import Guards
from ..llm.base import ChatModel, GenerationOptions
from ..llm.defaults import LOCAL_TIMEOUT_S, SAMPLING_MAX_TOKENS
from ..llm.keys import is_local_url
from ..llm.profile import ProfileChoice, choice_for_model, choose_profile
from ..llm.sampling import SamplingChatModel
from ..support.redaction import Redactor
from ..tools.base import BaseTool
from ..tools.builtins import list_directory_tool, python_tool, read_file_tool, shell_tool
from ..tools.cache import MemoryCache, RedisCache, ResultCache
from ..tools.mcp import HttpTransportFactory, McpTarget, McpToolSource
from ..tools.mcp.asks import ElicitationHandler, SamplingHandler
from ..tools.mcp.oauth import OAuthLogin
from ..tools.pack import ToolPack
from .ways_out import ALTERNATIVES, has_model_section

__all__ = [
    "TIMEOUT_ENV",
    "base_url_of",
    "builtin_tools",
    "cache_from_config",
    "category_from_config",
    "category_limits",
    "mcp_source",
    "missing_model",
    "model_from_config",
    "name_given",
    "profile_choice",
    "serving_fallback",
    "stdio_parameters",
    "timeout_reason",
    "with_environment",
]

#: Seconds per model request when the config does not say (`model.timeout_s`).
TIMEOUT_ENV = "META_TOOLS_TIMEOUT_S"


class _ClientSettings(TypedDict, total=False):
    """The keyword arguments both SDK clients take from the config."""

    base_url: str | None
    api_key_env: str
    api_key: str
    timeout: float
    max_retries: int
    backoff_s: float
    options: GenerationOptions
    recover_text_calls: bool


# -- the model ---------------------------------------------------------------------------
def with_environment(config: ModelConfig, env: Mapping[str, str] | None = None) -> ModelConfig:
    """`config` with the fields it leaves out read from the environment.

    ``OPENAI_MODEL`` and ``OPENAI_BASE_URL`` (OpenAI provider only) and
    ``META_TOOLS_TIMEOUT_S``, like the OpenAI SDK and `example.py` read them.

    Raises:
        ConfigError: ``META_TOOLS_TIMEOUT_S`` is not a positive number.
    """
    env = os.environ if env is None else env
    given = config.model_fields_set
    update: dict[str, Any] = {}
    if config.provider == "openai":
        if "name" not in given and env.get("OPENAI_MODEL"):
            update["name"] = env["OPENAI_MODEL"]
        if base_url_of(config, env) != config.base_url:
            update["base_url"] = base_url_of(config, env)
    raw = env.get(TIMEOUT_ENV)
    if (
        "timeout_s" not in given
        and not raw
        and is_local_url(update.get("base_url", config.base_url))
    ):
        update["timeout_s"] = LOCAL_TIMEOUT_S
    if "timeout_s" not in given and raw:
        try:
            timeout = float(raw)
        except ValueError:
            timeout = 0.0
        if not timeout > 0:
            raise ConfigError(
                TIMEOUT_ENV, [f"${TIMEOUT_ENV}: expected a positive number of seconds, got {raw!r}"]
            )
        update["timeout_s"] = timeout
    return config.model_copy(update=update) if update else config


def name_given(config: ModelConfig, env: Mapping[str, str] | None = None) -> str | None:
    """The model's name as somebody gave it (the config, or ``OPENAI_MODEL``); None when
    the client sends its default name, which a local server may ignore."""
    env = os.environ if env is None else env
    if "name" in config.model_fields_set:
        return config.name
    if config.provider == "openai" and env.get("OPENAI_MODEL"):
        return env["OPENAI_MODEL"]
    return None


def timeout_reason(config: ModelConfig, env: Mapping[str, str] | None = None) -> str:
    """Where `config`'s request timeout comes from, for a banner: `` (set)``, or why."""
    env = os.environ if env is None else env
    if "timeout_s" in config.model_fields_set or env.get(TIMEOUT_ENV):
        return ""
    if config.provider != "sampling" and is_local_url(base_url_of(config, env)):
        return ", for a model on this machine"
    return ""


def base_url_of(config: ModelConfig, env: Mapping[str, str] | None = None) -> str | None:
    """Where `config`'s requests go: its `base_url`, else (OpenAI provider) ``OPENAI_BASE_URL``."""
    env = os.environ if env is None else env
    if config.provider == "openai" and "base_url" not in config.model_fields_set:
        return env.get("OPENAI_BASE_URL") or config.base_url
    return config.base_url


def model_from_config(config: ModelConfig) -> ChatModel:
    """An OpenAI-compatible or DashScope client, or the MCP host's model (`sampling`).

    A `sampling` model answers only inside a call served over MCP (`meta-tools serve`);
    elsewhere each call fails with a message naming the alternatives.

    Fields the config leaves out come from the environment (`with_environment`).

    Raises:
        ConfigError: a bad ``META_TOOLS_TIMEOUT_S``.
        ModelError: the API key's environment variable is not set.
    """
    if config.provider == "sampling":
        return SamplingChatModel(
            max_tokens=config.max_tokens or SAMPLING_MAX_TOKENS,
            temperature=config.temperature,
            timeout_s=config.timeout_s,
            ways_out=ALTERNATIVES,
        )
    config = with_environment(config)
    settings: _ClientSettings = {
        "base_url": config.base_url,
        "timeout": config.timeout_s,
        "max_retries": config.max_retries,
        "backoff_s": config.backoff_s,
        "options": GenerationOptions(
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            seed=config.seed,
            extra_body=config.extra_body,
        ),
    }
    # Left out, the loop reads text calls when the guard profile says so (`text_calls`).
    settings["recover_text_calls"] = bool(config.recover_text_calls)
    if config.api_key_env:  # otherwise the client's own default variable
        settings["api_key_env"] = config.api_key_env
    if config.provider == "dashscope":
        from ..llm.dashscope import DashScopeChatModel

        return DashScopeChatModel(config.name, **settings)
    from ..llm.openai import OpenAIChatModel

    return OpenAIChatModel(config.name, **settings)


def serving_fallback(config: MetaToolsConfig) -> str | None:
    """Why a served router uses the host's model (sampling), or None when the config decides.

    Only a file with no `model` section falls back: one that names a provider
    whose key is unset is a mistake to report, not to paper over.
    """
    if has_model_section(config):
        return None
    return missing_model(config, serving=True)


def missing_model(config: MetaToolsConfig, *, serving: bool) -> str | None:
    """Why `config` has no model that can run a category now, or None when it has one.

    Args:
        config: the loaded config.
        serving: True under `meta-tools serve` (where `sampling` works).
    """
    model = config.model
    if model.provider == "sampling":
        if serving:
            return None
        return (
            "model.provider 'sampling' uses the model of the MCP host, which exists only"
            " under `meta-tools serve`"
        )
    env = model.key_env
    if env is None or os.environ.get(env) or is_local_url(base_url_of(model)):
        return None
    if not has_model_section(config):
        return (
            f"there is no `model` section, and the default model ({model.provider}"
            f" {model.name!r}) needs the environment variable {env!r}, which is not set"
        )
    return f"the `model` section's key variable {env!r} is not set"


# -- categories --------------------------------------------------------------------------
def category_limits(spec: CategoryConfig, defaults: DefaultsConfig) -> Limits:
    """A category's limits: each one it sets, else the config's `defaults`."""
    merged = {name: getattr(defaults, name) for name in _LIMIT_NAMES}
    merged.update(
        (name, getattr(spec, name))
        for name in _LIMIT_NAMES
        if name in CategoryConfig.model_fields and getattr(spec, name) is not None
    )
    return Limits(**merged)


_LIMIT_NAMES = [f.name for f in fields(Limits)]


def category_from_config(
    name: str,
    config: MetaToolsConfig,
    tools: Sequence[BaseTool],
    model: ChatModel,
    *,
    prompts: PromptSet,
    redactor: Redactor,
    cache: ResultCache | None,
    memory: MemoryStore | None = None,
    guards: Guards | None = None,
) -> CategoryManager:
    """The category `name` of `config`, its limits falling back on the config's `defaults`;
    `guards` default to the config's own (`guards_from_config`)."""
    guards = guards if guards is not None else guards_from_config(config)
    spec = config.categories[name]
    limits = category_limits(spec, config.defaults)
    return CategoryManager(
        name,
        redactor.text(spec.description),  # shown to MCP clients and the LLM
        ToolPack(tools, name=name),
        model,
        tool_usage_notes=redactor.text(spec.tool_usage_notes),
        max_iterations=limits.max_iterations,
        tool_timeout_s=limits.tool_timeout_s,
        max_calls_per_round=limits.max_calls_per_round,
        max_result_chars=limits.max_result_chars,
        memory_size=limits.category_memory,
        prompts=prompts,
        secrets=redactor,
        max_tools_per_prompt=limits.max_tools_per_prompt,
        max_tool_chars_per_prompt=limits.max_tool_chars_per_prompt,
        pinned=spec.pinned,
        abstain_below=limits.abstain_below,
        cache=cache,
        memory=memory,
        guards=guards,
    )


def profile_choice(
    config: MetaToolsConfig, *, served: str | None = None, model: ChatModel | None = None
) -> ProfileChoice:
    """The guard profile in force and why: the `guards` section's `profile` when it gives
    one, else the one the model calls for (`choose_profile`).

    Args:
        config: the loaded config.
        served: the name the model's server reported, when nobody gave one.
        model: a model passed in code instead of the `model` section: its own name counts.
    """
    section = config.guards
    if "profile" in section.model_fields_set:
        where = f"{config.source}: guards.profile" if config.source else "guards.profile"
        return ProfileChoice(section.profile, f"set in {where}")
    if model is not None:
        return choice_for_model(model)
    spec = with_environment(config.model)
    name = name_given(config.model) or served
    return choose_profile(name, provider=spec.provider, base_url=spec.base_url)


def guards_from_config(config: MetaToolsConfig, choice: ProfileChoice | None = None) -> Guards:
    """The guards the config's `guards` section chooses, on the profile of `choice` (default:
    the section's own); their texts may be overridden in the prompts folder
    (`guards/<name>.j2`)."""
    section = config.guards
    return Guards(
        section.profile if choice is None else choice.guards,
        enable=section.enable,
        disable=section.disable,
        budgets=section.budgets,
        prompts_dir=config.prompts_path(),
    )


# -- tool sources ------------------------------------------------------------------------
def mcp_source(
    name: str,
    config: McpServerConfig,
    *,
    base_dir: str = ".",
    elicitation: ElicitationHandler | None = None,
    sampling: SamplingHandler | None = None,
) -> McpToolSource:
    """The source of an `mcp_servers` entry; `elicitation` and `sampling` answer its questions.

    `command: "python"` (or `"python3"`) runs the router's own interpreter
    (`sys.executable`), so a server module installed next to meta-tools is
    found; a relative `cwd` is relative to the config file's folder. An HTTP entry
    with `"auth": "oauth"` sends the server's stored login (see `meta-tools login`).
    """
    target: McpTarget
    if isinstance(config, HttpServerConfig):
        login = None if config.auth is None else OAuthLogin(name, config.url, scope=config.scope)
        target = HttpTransportFactory(
            config.transport, config.url, dict(config.headers), config.timeout_s, auth=login
        )
    else:
        target = stdio_parameters(config, base_dir)
    return McpToolSource(
        name,
        target,
        prefix=config.prefix,
        connect=config.connect,
        timeout_s=config.timeout_s,
        elicitation=elicitation,
        sampling=sampling,
    )


def stdio_parameters(config: StdioServerConfig, base_dir: str) -> StdioServerParameters:
    """`command: "python"` (or `"python3"`) is the router's own interpreter; `cwd` is config-relative."""
    command = sys.executable if config.command in ("python", "python3") else config.command
    cwd = None if config.cwd is None else str((Path(base_dir) / config.cwd).resolve())
    env = dict(config.env) or None
    return StdioServerParameters(command=command, args=list(config.args), env=env, cwd=cwd)


def cache_from_config(config: CacheConfig, *, scope: str) -> ResultCache:
    """The cache a `CacheConfig` describes; `scope` (category or server name) names its keys."""
    if config.redis_url:
        return RedisCache(
            config.redis_url,
            namespace=f"meta_tools:{scope}",
            ttl_s=config.ttl_s,
            max_entries=config.max_entries,
        )
    return MemoryCache(ttl_s=config.ttl_s, max_entries=config.max_entries)


def _roots(
    config: MetaToolsConfig, name: str, settings: FileBuiltinConfig, problems: list[str]
) -> list[Path]:
    """The roots of a file tool, relative to the config file; each must be a folder."""
    roots: list[Path] = []
    for index, root in enumerate(settings.roots):
        folder = (Path(config.base_dir) / root).resolve()
        if not folder.is_dir():
            problems.append(f"$.builtins.{name}.roots[{index}]: {root!r} is not an existing folder")
        roots.append(folder)
    return roots


def builtin_tools(config: MetaToolsConfig) -> list[BaseTool]:
    """The built-ins the config enables, configured; none when the section is empty.

    The shell runs in the config file's folder; file tools resolve relative
    roots against it too.

    Raises:
        ConfigError: a file tool's root is not an existing folder (every one is listed).
    """
    section = config.builtins
    tools: list[BaseTool] = []
    problems: list[str] = []
    if section.execute_python_code is not None:
        tools.append(python_tool(section.execute_python_code))
    if section.execute_shell_command is not None:
        # The shell's paths are confined where the file tools are (else to the config's folder).
        files = [f for f in (section.read_file, section.list_directory) if f is not None]
        shell_roots = list(
            dict.fromkeys((Path(config.base_dir) / r).resolve() for f in files for r in f.roots)
        ) or [Path(config.base_dir).resolve()]
        tools.append(
            shell_tool(section.execute_shell_command, cwd=shell_roots[0], roots=shell_roots)
        )
    if section.read_file is not None:
        roots = _roots(config, "read_file", section.read_file, problems)
        tools.append(read_file_tool(roots, max_bytes=section.read_file.max_bytes))
    if section.list_directory is not None:
        roots = _roots(config, "list_directory", section.list_directory, problems)
        tools.append(list_directory_tool(roots))
    if problems:
        raise ConfigError(config.source, problems)
    return tools
