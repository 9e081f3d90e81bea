"""An OAuth-protected MCP server on 127.0.0.1, built from the MCP SDK's own server-side auth.

One app is both the authorization server (metadata, dynamic client registration,
authorize, token, with PKCE checked by the SDK) and the resource server (bearer
tokens verified on `/mcp`, protected-resource metadata). Authorization is granted
at once, so a test plays the browser by following the redirect with an HTTP
client. `python -m tests.servers.oauth` prints its URL and serves until killed.
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import httpx2
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.types import ASGIApp, Receive, Scope, Send

SCOPE = "tools"


@dataclass
class MemoryAuthorizationServer:
    """The SDK's `OAuthAuthorizationServerProvider`, in memory, approving every request."""

    access_lifetime_s: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    refreshed: int = 0
    """How many refresh-token grants were answered."""

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.refreshed += 1
        return self._issue(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def expire_access_tokens(self) -> None:
        """Every access token issued so far stops working (refresh tokens still do)."""
        for token in self.access.values():
            token.expires_at = int(time.time()) - 1

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires_at = int(time.time()) + self.access_lifetime_s
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=expires_at,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=self.access_lifetime_s,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


def build(base_url: str, provider: MemoryAuthorizationServer) -> MCPServer:
    """The protected MCP server at `{base_url}/mcp`, its own authorization server at `base_url`."""
    server = MCPServer(
        "protected",
        log_level="WARNING",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base_url,
            resource_server_url=f"{base_url}/mcp",
            validate_token_resource=True,
            required_scopes=[SCOPE],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
        ),
    )

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


@dataclass
class ProtectedServer:
    url: str
    provider: MemoryAuthorizationServer


def _watched(app: ASGIApp, on_request: Callable[[dict[str, str]], None]) -> ASGIApp:
    """`app`, telling `on_request` the headers of every HTTP request."""

    async def watched(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            on_request({k.decode(): v.decode() for k, v in scope["headers"]})
        await app(scope, receive, send)

    return watched


@asynccontextmanager
async def protected_server(
    *,
    access_lifetime_s: int = 3600,
    on_request: Callable[[dict[str, str]], None] | None = None,
) -> AsyncIterator[ProtectedServer]:
    """Serve the protected MCP server with uvicorn on a free 127.0.0.1 port.

    `on_request` gets the headers of each HTTP request the server receives.
    """
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = MemoryAuthorizationServer(access_lifetime_s=access_lifetime_s)
    app: ASGIApp = build(base, provider).streamable_http_app()
    if on_request is not None:
        app = _watched(app, on_request)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    )
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[sock]))
            try:
                yield ProtectedServer(f"{base}/mcp", provider)
            finally:
                server.should_exit = True
    finally:
        sock.close()


async def follow_in_place_of_a_browser(url: str) -> None:
    """Do what a browser does with the authorization URL: follow its redirects to the callback."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as http:
        response = await http.get(url)
        response.raise_for_status()


if __name__ == "__main__":

    async def _main() -> None:
        async with protected_server() as served:
            print(f"listening on {served.url}", flush=True)
            await anyio.sleep_forever()

    anyio.run(_main)
