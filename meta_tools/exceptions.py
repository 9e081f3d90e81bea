"""The one exception family of meta-tools.

Two planes of errors: problems the *model* can correct (bad arguments, an
unknown tool, a tool that raised) travel back to it as error results built
from `ToolError`; problems the *developer* must fix (a bad config, a function
that cannot become a tool) are raised at load time.

    MetaToolsError
    ├── ConfigError                  bad Meta_tool_config.json / template; lists every problem
    ├── ToolDefinitionError          a function or schema cannot become a tool
    ├── ToolError                    one tool call failed; its message goes to the LLM
    │   ├── ToolNotFoundError        the LLM named a tool that is not offered
    │   ├── ToolArgumentsError       arguments failed validation; lists every bad field
    │   ├── ToolTimeoutError         the call ran past its timeout
    │   ├── ToolExecutionError       the tool itself raised or reported an error
    │   └── ToolUnavailableError     the tool's source (an MCP server) is down
    │       └── LoginRequiredError   an MCP server needs an OAuth login (`meta-tools login`)
    ├── ModelError                   the LLM failed after its retries
    │   ├── ScriptExhaustedError     a ScriptedModel was called after its last step
    │   └── SamplingUnsupportedError the MCP host cannot sample with tools
    ├── CategoryNotFoundError        the main agent called a category that does not exist
    └── ClosedError                  a closed resource (session, manager) was used
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CategoryNotFoundError",
    "ClosedError",
    "ConfigError",
    "LoginRequiredError",
    "MetaToolsError",
    "ModelError",
    "SamplingUnsupportedError",
    "ScriptExhaustedError",
    "ToolArgumentsError",
    "ToolDefinitionError",
    "ToolError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "ToolUnavailableError",
]


class MetaToolsError(Exception):
    """Base class of every error meta-tools raises on purpose."""


class ConfigError(MetaToolsError):
    """The configuration (or a prompt template) is invalid.

    Every problem found is collected in `problems`, each a line that names the
    file, the JSON path of the field and what would be valid.
    """

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        count = len(self.problems)
        super().__init__(f"{source}: {count} problem{'s' if count != 1 else ''}:\n{lines}")


class ToolDefinitionError(MetaToolsError):
    """A function, class or schema cannot become a tool (raised at registration)."""


class ToolError(MetaToolsError):
    """One tool call failed; the message is written for the LLM to act on."""

    kind: str = "error"


class ToolNotFoundError(ToolError):
    kind = "unknown_tool"


class ToolArgumentsError(ToolError):
    kind = "invalid_arguments"

    def __init__(self, tool: str, problems: Sequence[str]) -> None:
        self.tool = tool
        self.problems = list(problems)
        listed = "; ".join(self.problems)
        super().__init__(f"invalid arguments for tool {tool!r}: {listed}")


class ToolTimeoutError(ToolError):
    kind = "timeout"


class ToolExecutionError(ToolError):
    kind = "raised"


class ToolUnavailableError(ToolError):
    kind = "unavailable"


class LoginRequiredError(ToolUnavailableError):
    """An MCP server asks for an OAuth login that nobody did, or that can no longer be refreshed.

    Raised without opening a browser or waiting for input, so a headless `serve`
    never blocks on it; the message names the server, why, and the command to run.
    """

    kind = "login_required"

    def __init__(self, server: str, reason: str) -> None:
        self.server = server
        self.reason = reason
        super().__init__(f"MCP server {server!r} {self.why}")

    @property
    def why(self) -> str:
        """The message without the server's name: what is missing and the command to run."""
        return f"needs a login ({self.reason}): run `meta-tools login {self.server}`"


class ModelError(MetaToolsError):
    """The chat model failed: retries exhausted, bad response, or misuse."""


class ScriptExhaustedError(ModelError):
    """A ScriptedModel was asked for more turns than its script holds."""


class SamplingUnsupportedError(ModelError):
    """The MCP host does not offer sampling with tools."""


class CategoryNotFoundError(MetaToolsError):
    """The main agent named a category the router does not have."""


class ClosedError(MetaToolsError):
    """A resource was used after it was closed."""
