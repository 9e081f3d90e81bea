"""`meta-tools login SERVER`: log in to an MCP server that asks for OAuth, and store the login.

The server is an `mcp_servers` entry over HTTP with `"auth": "oauth"`. The
browser opens on the server's authorization page (the URL is printed too, for a
machine without one); the page redirects to a listener on 127.0.0.1, and the
tokens are stored in the user's data folder, readable by the user only. `serve`,
`chat`, `run` and the library then use them and refresh them.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import anyio
import anyio.to_thread
import typer

from ..config import HttpServerConfig
from ..exceptions import LoginRequiredError, ToolUnavailableError
from ..tools.mcp.oauth import OAuthLogin, TokenStore, log_in
from .common import (
    DEFAULT_CONFIG,
    ConfigArgument,
    ConfigOption,
    app,
    fail,
    load_config,
    one_config,
    report_errors,
    stderr_console,
)
from .terminal import printable

__all__ = ["login"]


@app.command()
def login(
    ctx: typer.Context,
    server: Annotated[
        str, typer.Argument(help="The server's name under mcp_servers.", metavar="SERVER")
    ],
    file: ConfigArgument = None,
    config: ConfigOption = DEFAULT_CONFIG,
    browser: Annotated[
        bool,
        typer.Option("--browser/--no-browser", help="Open the authorization page in a browser."),
    ] = True,
    wait: Annotated[
        float,
        typer.Option("--wait", help="Seconds to wait for the browser to come back.", min=1),
    ] = 300.0,
    forget: Annotated[
        bool, typer.Option("--forget", help="Delete the stored login instead.")
    ] = False,
) -> None:
    """Log in to an MCP server that asks for OAuth; store its tokens for serve, chat and run.

    The entry needs "auth": "oauth". The tokens are kept in your data folder
    (one file per server, readable by you only), never in the config or a trace.
    """
    config = one_config(file, config)
    err = stderr_console()
    with report_errors(ctx):
        loaded = load_config(config)
        entry = loaded.mcp_servers.get(server)
        if entry is None:
            known = ", ".join(sorted(loaded.mcp_servers)) or "none"
            fail(f"no MCP server {server!r} in {config}", f"servers in the config: {known}")
        if not isinstance(entry, HttpServerConfig) or entry.auth != "oauth":
            fail(
                f"MCP server {server!r} does not log in with OAuth",
                'an HTTP entry (a "url") opts in with "auth": "oauth"',
            )
        store = TokenStore.default()
        if forget:
            gone = store.forget(server)
            said = "deleted" if gone else "there was none at"
            err.print(f"the login of {server!r}: {said} {store.path(server)}", markup=False)
            return

        async def show(url: str) -> None:
            opened = browser and await anyio.to_thread.run_sync(webbrowser.open, url)
            lead = "If the browser did not open, visit" if opened else "Open this URL to log in"
            err.print(f"{lead}:\n  {printable(url)}", markup=False, soft_wrap=True)

        target = OAuthLogin(server, entry.url, store, scope=entry.scope)
        err.print(f"Logging in to {server!r} at {printable(entry.url)} ...", markup=False)
        try:
            outcome = anyio.run(
                lambda: log_in(
                    target,
                    show,
                    transport=entry.transport,
                    headers=entry.headers,
                    timeout_s=entry.timeout_s,
                    wait_s=wait,
                )
            )
        except LoginRequiredError as exc:
            fail(
                f"could not log in to {server!r}: {exc.reason}",
                f"run `meta-tools login {server}` again; --wait SECONDS gives the browser more time",
            )
        except ToolUnavailableError as exc:
            fail(str(exc), f"check the url of {server!r} in the config and that the server is up")
        tools = f"{outcome.tools} tool{'s' if outcome.tools != 1 else ''}"
        if outcome.stored is None:
            err.print(
                f"MCP server {server!r} asked for no login ({tools}); nothing was stored",
                markup=False,
            )
            return
        err.print(
            f"Logged in to {server!r} ({tools}). The login is in {_shown_path(outcome.stored)}"
            " (readable by you only); serve, chat and run use it and refresh it.",
            markup=False,
            soft_wrap=True,
        )


def _shown_path(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
