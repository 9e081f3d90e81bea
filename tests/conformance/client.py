"""The MCP client under the conformance suite's client scenarios: our level-1 side, as a category uses it.

The suite runs `python tests/conformance/client.py URL` once per scenario, its name in
`MCP_CONFORMANCE_SCENARIO`. Like a category over an `mcp_servers` entry, this builds the
server's source from a config entry, connects (initialize, then every page of
`tools/list`) and calls the listed tools through the same `BaseTool.call` a category's
round uses, with the arguments a model would fill in from the schema the category's
model is shown. Two scenarios ask for something else, as the suite's own reference client
does: `json-schema-ref-no-deref` only lists (its server answers no call), and
`json-schema-2020-12-preservation` sends the schema our model would see of
`json_schema_2020_12_tool` to `json_schema_echo`.

A server's question to the user (`elicitation/create`) gets the library's handler
accepting with no content, so the requested schema's defaults fill the answer. In the
`auth/` scenarios the entry has `"auth": "oauth"`: the script first logs in as
`meta-tools login` does, with the suite's authorization page followed instead of shown
in a browser and the login stored in a temporary data folder, then connects with it.
Exit 0 when every step worked, else 1 with the reasons on stderr; the suite's own checks
decide each scenario.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import anyio
import httpx2
import mcp_types

from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import MetaToolsError
from meta_tools.router.from_config import mcp_source
from meta_tools.tools.base import ToolContext
from meta_tools.tools.mcp import McpServerTool, McpToolSource
from meta_tools.tools.mcp.asks import ElicitationRequest
from meta_tools.tools.mcp.oauth import OAuthLogin, log_in
from meta_tools.tools.mcp.oauth.store import DATA_DIR_ENV

SERVER = "conformance"
MAX_TOOLS = 8
"""A scenario's server offers a few tools; more would be a suite change worth seeing."""
TIMEOUT_S = 20.0
"""Below the suite's per-scenario timeout, so a hanging call ends as our failure, not the suite's."""
LIST_ONLY = {"json-schema-ref-no-deref"}
ECHO_SCENARIO = "json-schema-2020-12-preservation"
ECHO_TOOL, ECHOED_TOOL = "json_schema_echo", "json_schema_2020_12_tool"

_EXAMPLES: dict[str, Any] = {
    "number": 1,
    "integer": 1,
    # Not plain ASCII, as a model's text often is (and SEP-2243 headers must then be base64).
    "string": "conformance ✓",
    "boolean": True,
    "array": [],
    "object": {},
}


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A value for each required property of `schema`: its default, else one of its JSON type."""
    properties: dict[str, Any] = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        spec = properties.get(name) or {}
        kind = spec.get("type", "string")
        kind = kind[0] if isinstance(kind, list) and kind else kind
        arguments[name] = spec.get("default", _EXAMPLES.get(kind, _EXAMPLES["string"]))
    return arguments


async def accept_defaults(request: ElicitationRequest) -> mcp_types.ElicitResult:
    """Accept with no content of our own: the requested schema's defaults fill the answer."""
    return mcp_types.ElicitResult(action="accept", content={})


async def follow(url: str) -> None:
    """Instead of a browser: follow the authorization page's redirects to our loopback callback."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=TIMEOUT_S) as http:
        await http.get(url)


async def call(tool: McpServerTool, arguments: dict[str, Any], problems: list[str]) -> None:
    """Call `tool` as a category's round does; a failure is added to `problems`."""
    try:
        result = await tool.call(arguments, context=ToolContext(tool_call_id=f"call_{tool.name}"))
    except MetaToolsError as exc:
        problems.append(f"{tool.name}({arguments}): {exc}")
    else:
        print(f"{tool.name}({arguments}) -> {result!r}")


async def exercise(source: McpToolSource, scenario: str, problems: list[str]) -> None:
    """What the scenario asks of a client, once connected."""
    tools = {tool.remote.name: tool for tool in source.tools()}
    if scenario in LIST_ONLY:
        return
    if scenario == ECHO_SCENARIO and ECHO_TOOL in tools and ECHOED_TOOL in tools:
        await call(tools[ECHO_TOOL], {"schema": tools[ECHOED_TOOL].parameters_schema}, problems)
        return
    for tool in list(tools.values())[:MAX_TOOLS]:
        await call(tool, example_arguments(tool.parameters_schema), problems)


async def run(url: str, scenario: str) -> list[str]:
    """Connect to `url` as a category's source would and do what `scenario` asks; the problems met."""
    entry: dict[str, Any] = {"transport": "streamable_http", "url": url}
    if scenario.startswith("auth/"):
        entry["auth"] = "oauth"
    config = MetaToolsConfig.from_data(
        {
            "mcp_servers": {SERVER: entry},
            "Conformance": {"description": "The suite's scenario server.", "tools": ["*"]},
        }
    )
    problems: list[str] = []
    if "auth" in entry:
        try:
            with anyio.fail_after(TIMEOUT_S):
                await log_in(OAuthLogin(SERVER, url), follow, timeout_s=TIMEOUT_S, wait_s=TIMEOUT_S)
        except MetaToolsError as exc:
            return [f"login: {exc}"]
    server = config.mcp_servers[SERVER]
    async with mcp_source(SERVER, server, elicitation=accept_defaults) as source:
        with anyio.fail_after(TIMEOUT_S):
            try:
                await source.connect()
            except MetaToolsError as exc:
                return [f"connect: {exc}"]
            await exercise(source, scenario, problems)
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python tests/conformance/client.py SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    with tempfile.TemporaryDirectory(prefix="conformance-client-") as data:
        os.environ[DATA_DIR_ENV] = data  # logins stored here, never in the user's folder
        problems = anyio.run(run, sys.argv[1], scenario)
    for problem in problems:
        print(f"{scenario}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
