"""OAuth 2.1 for an MCP server over HTTP: the MCP SDK's own client flow over a stored login.

`OAuthClientProvider` (an `httpx2.Auth`) does the protocol: discovery of the
protected resource's and the authorization server's metadata, dynamic client
registration where offered, PKCE, the token exchange and refresh. This module
adds what a router that runs headless needs around it:

- the login is read from and written to a `TokenStore` file, with the access
  token's expiry and the discovered token endpoint, so a new process refreshes
  an expired token at the right place instead of sending a stale one (the SDK
  keeps neither across a restart);
- without a browser step (`serve`, `chat`, the library) a server that needs a
  login nobody did fails at once with `LoginRequiredError`, before any request:
  no browser opens, nothing waits for input, no client is registered;
- with one (`meta-tools login`), the flow runs in full.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from ....exceptions import LoginRequiredError
from .store import ServerTokenStorage, TokenStore

__all__ = ["BrowserStep", "OAuthLogin", "StoredLoginAuth"]

CLIENT_NAME = "meta-tools"
_EXPIRY_MARGIN_S = 30.0
"""A restored token is refreshed this long before it expires (clocks and transit)."""
_UNUSED_REDIRECT = "http://127.0.0.1/callback"
"""The redirect URI of a provider that never redirects (it only uses and refreshes a login)."""


class _ReportedByUs(logging.Filter):
    """Drops the SDK's traceback for a `LoginRequiredError`: the session reports it in one line.

    The SDK logs every error of its 401 branch with `logger.exception`; a headless
    `serve` whose stored login was refused would print a traceback per attempt.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        raised = record.exc_info[1] if record.exc_info else None
        return not isinstance(raised, LoginRequiredError)


_SDK_LOG = logging.getLogger("mcp.client.auth.oauth2")
if not any(isinstance(f, _ReportedByUs) for f in _SDK_LOG.filters):
    _SDK_LOG.addFilter(_ReportedByUs())


@dataclass(frozen=True)
class BrowserStep:
    """The person's part of a login: show the authorization page, then wait for its redirect.

    Attributes:
        redirect_uri: the loopback address the authorization server redirects to.
        show: opens (or prints) the authorization URL.
        wait: returns the code and state that reached `redirect_uri`.
    """

    redirect_uri: str
    show: Callable[[str], Awaitable[None]]
    wait: Callable[[], Awaitable[AuthorizationCodeResult]]


class StoredLoginAuth(OAuthClientProvider):
    """The SDK's OAuth provider over one server's stored login.

    Args:
        storage: the server's login file.
        browser: the person's part; None (headless) raises `LoginRequiredError` where a
            login would be needed.
        scope: scopes to ask for; None lets the server's challenge and metadata decide.
    """

    def __init__(
        self,
        storage: ServerTokenStorage,
        *,
        browser: BrowserStep | None = None,
        scope: str | None = None,
    ) -> None:
        self.storage = storage
        self.browser = browser
        redirect = browser.redirect_uri if browser is not None else _UNUSED_REDIRECT
        metadata = OAuthClientMetadata.model_validate(
            {
                "client_name": CLIENT_NAME,
                "redirect_uris": [redirect],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "scope": scope,
            }
        )
        super().__init__(
            storage.url,
            metadata,
            storage,
            redirect_handler=self._show,
            callback_handler=self._wait,
        )

    def __repr__(self) -> str:
        mode = "interactive" if self.browser is not None else "headless"
        return f"<StoredLoginAuth {self.storage.server!r} {mode}>"

    @property
    def server(self) -> str:
        return self.storage.server

    async def _initialize(self) -> None:
        await super()._initialize()
        login = self.storage.login
        context = self.context
        if login.tokens is not None and login.expires_at is not None:
            context.token_expiry_time = login.expires_at - _EXPIRY_MARGIN_S
        if context.oauth_metadata is None and login.authorization_server is not None:
            context.oauth_metadata = login.authorization_server
        if context.protected_resource_metadata is None and login.resource is not None:
            context.protected_resource_metadata = login.resource
            if login.resource.authorization_servers:
                context.auth_server_url = str(login.resource.authorization_servers[0])
        if self.browser is None and context.current_tokens is None:
            raise LoginRequiredError(self.server, f"no stored token for {self.storage.url}")

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        # The metadata discovered on the way is kept with the tokens (one write).
        self._remember_metadata()
        await super()._handle_token_response(response)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        self._remember_metadata()
        return await super()._handle_refresh_response(response)

    def _remember_metadata(self) -> None:
        update: dict[str, object] = {
            "authorization_server": self.context.oauth_metadata,
            "resource": self.context.protected_resource_metadata,
        }
        if self.browser is not None:
            update["redirect_uri"] = self.browser.redirect_uri
        kept = {k: v for k, v in update.items() if v is not None}
        self.storage.login = self.storage.login.model_copy(update=kept)

    async def _show(self, url: str) -> None:
        if self.browser is None:
            raise LoginRequiredError(
                self.server,
                "the server refused the stored token (HTTP 401) and it could not be refreshed",
            )
        await self.browser.show(url)

    async def _wait(self) -> AuthorizationCodeResult:
        if self.browser is None:  # `_show` raised first; kept for a flow that calls this alone
            raise LoginRequiredError(self.server, "a login needs the browser step")
        return await self.browser.wait()


@dataclass(frozen=True)
class OAuthLogin:
    """How an `mcp_servers` entry with `"auth": "oauth"` authenticates: its stored login.

    Calling it gives a fresh headless `StoredLoginAuth` per session, which reads the
    file again, so a `meta-tools login` run meanwhile is used on the next connection.

    Attributes:
        server: the server's name in the config (names its file).
        url: the server's URL.
        store: where logins live (default: the user's data folder).
        scope: scopes to ask for (None: as the server says).
    """

    server: str
    url: str
    store: TokenStore = field(default_factory=TokenStore.default)
    scope: str | None = None

    def __call__(self) -> StoredLoginAuth:
        return self.auth()

    def auth(self, browser: BrowserStep | None = None) -> StoredLoginAuth:
        """A provider over this server's stored login; with `browser`, one that can log in."""
        storage = ServerTokenStorage(self.store, self.server, self.url)
        return StoredLoginAuth(storage, browser=browser, scope=self.scope)
