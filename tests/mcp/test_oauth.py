"""OAuth 2.1 to an MCP server over HTTP: log in, run a category, refresh, and keep the tokens to the file.

The server is the MCP SDK's own authorization server and resource server on
127.0.0.1 (`tests.servers.oauth`); the browser is an HTTP client that follows
the authorization page's redirect to the loopback callback.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest

from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ConfigError, LoginRequiredError, ToolUnavailableError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools.mcp import HttpTransportFactory, McpToolSource
from meta_tools.tools.mcp.oauth import OAuthLogin, ServerLogin, TokenStore, log_in
from meta_tools.tools.mcp.oauth.store import DATA_DIR_ENV
from meta_tools.tracing import Tracer
from tests.cli_process import meta_tools_command
from tests.mcp.conftest import ROOT
from tests.servers.oauth import ProtectedServer, follow_in_place_of_a_browser, protected_server

pytestmark = pytest.mark.anyio


def config_data(url: str) -> dict[str, Any]:
    return {
        "Arithmetic": {"description": "Adds numbers.", "tools": ["add"]},
        "mcp_servers": {"protected": {"transport": "streamable_http", "url": url, "auth": "oauth"}},
    }


def config_for(url: str) -> MetaToolsConfig:
    return MetaToolsConfig.from_data(config_data(url), source="test.json")


def adds(request: ChatRequest) -> AssistantTurn:
    """Call `add` once, then report its result."""
    if len(request.messages) == 2:
        return AssistantTurn(tool_calls=[ToolCall(name="add", arguments={"a": 2, "b": 3})])
    return AssistantTurn(text="2 + 3 = 5.")


def stored(folder: Path) -> ServerLogin:
    login = TokenStore(folder / "tokens").load("protected")
    assert login is not None and login.tokens is not None
    return login


def secrets_of(login: ServerLogin) -> list[str]:
    assert login.tokens is not None and login.tokens.refresh_token is not None
    return [login.tokens.access_token, login.tokens.refresh_token]


async def logged_in(served: ProtectedServer, folder: Path) -> ServerLogin:
    login = OAuthLogin("protected", served.url, TokenStore(folder / "tokens"))
    with anyio.fail_after(30):
        outcome = await log_in(login, follow_in_place_of_a_browser)
    assert (outcome.stored, outcome.tools) == (folder / "tokens" / "protected.json", 1)
    return stored(folder)


async def add_in_a_category(config: MetaToolsConfig, trace: Path | None = None) -> Any:
    async with MetaManager.from_config(config, model=ScriptedModel.from_function(adds)) as meta:
        if trace is not None:
            meta.tracer = Tracer(jsonl=trace, otel=False)
        with anyio.fail_after(30):
            return await meta.call_tool("Arithmetic", {"objective": "Add", "exact_input": "2, 3"})


async def test_a_login_stores_the_tokens_in_a_file_that_only_its_owner_can_read(
    tmp_path: Path,
) -> None:
    async with protected_server() as served:
        login = await logged_in(served, tmp_path)
        # the server knows the stored access token: the flow really ran against it
        assert login.tokens is not None and login.tokens.access_token in served.provider.access
        assert login.url == served.url
        assert login.client is not None and list(served.provider.clients) == [
            login.client.client_id
        ]
    path = tmp_path / "tokens" / "protected.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["protected.json"]  # no temporary left


async def test_a_category_runs_on_a_server_after_logging_in_and_no_token_reaches_trace_or_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    caplog.set_level(logging.DEBUG)
    trace = tmp_path / "trace.jsonl"
    async with protected_server() as served:
        login = await logged_in(served, tmp_path)
        result = await add_in_a_category(config_for(served.url), trace)
    assert (result.status, result.summary) == ("success", "2 + 3 = 5.")
    assert [(e.tool, e.result) for e in result.executions] == [("add", '{"result": 5}')]
    written = trace.read_text() + caplog.text + result.model_dump_json()
    assert '"tool": "add"' in trace.read_text()  # the trace did record the call
    for secret in secrets_of(login):
        assert secret not in written


async def test_an_expired_access_token_is_refreshed_and_the_new_tokens_replace_it_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    async with protected_server() as served:
        before = await logged_in(served, tmp_path)
        # The access token expires on both sides, as after a night: the server refuses it,
        # and the file says it is past its time (a new process must refresh, not send it).
        served.provider.expire_access_tokens()
        path = tmp_path / "tokens" / "protected.json"
        aged = json.loads(path.read_text())
        aged["expires_at"] = 0
        path.write_text(json.dumps(aged))
        result = await add_in_a_category(config_for(served.url))
        after = stored(tmp_path)
        assert result.status == "success"
        assert served.provider.refreshed == 1
        assert after.tokens is not None and after.tokens.access_token in served.provider.access
    assert before.tokens is not None and after.tokens.access_token != before.tokens.access_token
    assert after.expires_at is not None and after.expires_at > aged["expires_at"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert all(secret not in path.read_text() for secret in secrets_of(before))


async def test_a_server_nobody_logged_in_to_fails_its_category_at_once_naming_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    async with protected_server() as served:
        with anyio.fail_after(10):  # no browser, no waiting for a person
            result = await add_in_a_category(config_for(served.url))
        assert served.provider.clients == {}  # nothing registered on a headless attempt
    assert result.status == "failed"
    assert result.executions == []
    assert result.summary == (
        "No tool of this category can run now. MCP server 'protected' is unavailable: needs a"
        f" login (no stored token for {served.url}): run `meta-tools login protected`"
    )
    assert not (tmp_path / "tokens").exists()


async def test_a_login_made_for_another_url_is_never_sent(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens")
    async with protected_server() as served:
        await logged_in(served, tmp_path)
        elsewhere = OAuthLogin("protected", "http://127.0.0.1:9/mcp", store)
        source = McpToolSource(
            "protected", HttpTransportFactory("streamable_http", elsewhere.url, auth=elsewhere)
        )
        async with source:
            with anyio.fail_after(10), pytest.raises(ToolUnavailableError) as caught:
                await source.connect()
    assert "needs a login (no stored token for http://127.0.0.1:9/mcp)" in str(caught.value)


async def test_a_refused_token_that_cannot_be_refreshed_asks_for_a_login_without_a_browser(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with protected_server() as served:
        await logged_in(served, tmp_path)
        served.provider.access.clear()  # revoked: refused, and the file does not know
        served.provider.refresh.clear()
        login = OAuthLogin("protected", served.url, TokenStore(tmp_path / "tokens"))
        source = McpToolSource(
            "protected", HttpTransportFactory("streamable_http", served.url, auth=login)
        )
        async with source:
            with anyio.fail_after(10), pytest.raises(ToolUnavailableError) as caught:
                await source.connect()
    assert str(caught.value) == (
        "MCP server 'protected' is unavailable: needs a login (the server refused the stored"
        " token (HTTP 401) and it could not be refreshed): run `meta-tools login protected`"
    )
    # said once, in that line: no traceback from the SDK's flow
    assert [r for r in caplog.records if r.exc_info] == []


async def test_an_authorization_header_beside_oauth_is_refused_with_the_way_out() -> None:
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(
            {
                "Arithmetic": {"description": "Adds.", "tools": ["add"]},
                "mcp_servers": {
                    "protected": {
                        "url": "http://127.0.0.1:1/mcp",
                        "auth": "oauth",
                        "headers": {"Authorization": "Bearer x", "X-Team": "a"},
                    }
                },
            },
            source="test.json",
        )
    assert caught.value.problems == [
        '$.mcp_servers.protected: both "auth": "oauth" and an Authorization header set the'
        " Authorization header; keep one: remove the header to use the stored login, or remove"
        ' "auth"'
    ]


async def test_static_headers_are_sent_beside_the_stored_login(tmp_path: Path) -> None:
    seen: list[str] = []
    async with protected_server(
        on_request=lambda headers: seen.append(headers.get("x-team", ""))
    ) as served:
        await logged_in(served, tmp_path)
        login = OAuthLogin("protected", served.url, TokenStore(tmp_path / "tokens"))
        target = HttpTransportFactory("streamable_http", served.url, {"X-Team": "blue"}, auth=login)
        async with McpToolSource("protected", target) as source:
            with anyio.fail_after(10):
                assert await source.call_tool("add", {"a": 1, "b": 1}) == {"result": 2}
    assert "blue" in seen


def browser_script(folder: Path) -> Path:
    """An executable that `webbrowser` runs with the URL (via BROWSER), following its redirects."""
    script = folder / "browser"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import anyio\n"
        "from tests.servers.oauth import follow_in_place_of_a_browser\n"
        "anyio.run(follow_in_place_of_a_browser, sys.argv[1])\n"
    )
    script.chmod(0o700)
    return script


async def run_command(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [*meta_tools_command(), *args], env={**os.environ, **env}, check=False, cwd=ROOT
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_the_login_command_follows_the_browser_stores_the_login_and_list_shows_no_token(
    tmp_path: Path,
) -> None:
    env = {DATA_DIR_ENV: str(tmp_path), "BROWSER": str(browser_script(tmp_path))}
    async with protected_server() as served:
        config = tmp_path / "config.json"
        config.write_text(json.dumps(config_data(served.url)))
        code, out, err = await run_command("login", "protected", "-c", str(config), env=env)
        assert code == 0, err
        login = stored(tmp_path)
        assert "If the browser did not open, visit:" in err
        assert f"Logged in to 'protected' (1 tool). The login is in {tmp_path}" in err.replace(
            "\n", " "
        )
        code, listed, list_err = await run_command("list", "-c", str(config), env=env)
        assert code == 0, list_err
        assert "add" in listed
    for secret in secrets_of(login):
        assert secret not in out + err + listed + list_err + config.read_text()
    code, _, forgot = await run_command(
        "login", "protected", "-c", str(config), "--forget", env=env
    )
    assert code == 0, forgot
    assert not (tmp_path / "tokens" / "protected.json").exists()


async def test_login_without_a_browser_prints_the_url_and_ends_after_the_wait_in_one_line(
    tmp_path: Path,
) -> None:
    env = {DATA_DIR_ENV: str(tmp_path)}
    async with protected_server() as served:
        config = tmp_path / "config.json"
        config.write_text(json.dumps(config_data(served.url)))
        args = ("login", "protected", "-c", str(config), "--no-browser", "--wait", "1")
        code, _, err = await run_command(*args, env=env)
    assert code == 1
    assert "Open this URL to log in:\n  http://127.0.0.1:" in err
    assert err.splitlines()[-2:] == [
        "error: could not log in to 'protected': no answer from the browser within 1 s",
        "hint: run `meta-tools login protected` again; --wait SECONDS gives the browser more time",
    ]
    assert stored_tokens(tmp_path) is None


async def test_a_token_folder_made_wider_is_narrowed_when_a_login_is_saved(tmp_path: Path) -> None:
    folder = tmp_path / "tokens"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    TokenStore(folder).save(ServerLogin(server="a/b", url="http://127.0.0.1:1/mcp"))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [p.name for p in folder.iterdir()] == ["a%2Fb.json"]  # a name is never a path


async def test_a_login_refused_in_the_browser_ends_with_the_authorization_servers_words(
    tmp_path: Path,
) -> None:
    async def refuse(url: str) -> None:
        query = parse_qs(urlsplit(url).query)
        back = f"{query['redirect_uri'][0]}?error=access_denied&error_description=Not+today"
        async with httpx2.AsyncClient() as http:
            assert (await http.get(back)).status_code == 200

    async with protected_server() as served:
        login = OAuthLogin("protected", served.url, TokenStore(tmp_path / "tokens"))
        with anyio.fail_after(30), pytest.raises(LoginRequiredError) as caught:
            await log_in(login, refuse)
    assert str(caught.value) == (
        "MCP server 'protected' needs a login (the authorization server refused: Not today):"
        " run `meta-tools login protected`"
    )
    assert stored_tokens(tmp_path) is None


async def test_a_login_nobody_finishes_in_the_browser_ends_after_the_wait(tmp_path: Path) -> None:
    shown: list[str] = []

    async def ignore(url: str) -> None:
        shown.append(url)

    async with protected_server() as served:
        login = OAuthLogin("protected", served.url, TokenStore(tmp_path / "tokens"))
        with anyio.fail_after(30), pytest.raises(LoginRequiredError) as caught:
            await log_in(login, ignore, wait_s=0.2)
    assert "(no answer from the browser within 0.2 s)" in str(caught.value)
    (url,) = shown
    query = parse_qs(urlsplit(url).query)
    assert (query["code_challenge_method"], query["response_type"]) == (["S256"], ["code"])
    assert query["resource"] == [served.url]
    assert stored_tokens(tmp_path) is None


def stored_tokens(folder: Path) -> object:
    login = TokenStore(folder / "tokens").load("protected")
    return None if login is None else login.tokens
