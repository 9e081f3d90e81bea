"""Where OAuth logins to MCP servers are kept: one file per server, readable by its owner only.

The folder is the user's data folder (`META_TOOLS_DATA_DIR` when set), then
`meta-tools/tokens/`: on Linux `~/.local/share/meta-tools/tokens` (or under
`$XDG_DATA_HOME`), on macOS `~/Library/Application Support/meta-tools/tokens`, on
Windows `%LOCALAPPDATA%\\meta-tools\\tokens`. The folder is made mode 0700 and each
file 0600, written whole to a temporary file and renamed over the old one, so a
reader never sees half a file. A file records the server's URL: a login is only
ever sent to the URL it was made for.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from urllib.parse import quote

import anyio.to_thread
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import BaseModel, ValidationError

__all__ = ["ServerLogin", "ServerTokenStorage", "TokenStore", "user_data_dir"]

DATA_DIR_ENV = "META_TOOLS_DATA_DIR"
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")


def user_data_dir() -> Path:
    """The user's data folder for meta-tools (`META_TOOLS_DATA_DIR` overrides it)."""
    chosen = os.environ.get(DATA_DIR_ENV)
    if chosen:
        return Path(chosen).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "meta-tools"


class ServerLogin(BaseModel):
    """What a login to one MCP server left behind (the file's content).

    Attributes:
        server: the server's name in the config.
        url: the server's URL; the login is used for this URL only.
        tokens: the access and refresh tokens.
        expires_at: when the access token expires (Unix time), so that a new process
            refreshes it instead of sending a stale one.
        client: the client registration (dynamic registration's answer).
        redirect_uri: the loopback address the registration names, reused by the next login.
        authorization_server: the server's discovered metadata (its token endpoint).
        resource: the protected resource's metadata.
    """

    server: str
    url: str
    tokens: OAuthToken | None = None
    expires_at: float | None = None
    client: OAuthClientInformationFull | None = None
    redirect_uri: str | None = None
    authorization_server: OAuthMetadata | None = None
    resource: ProtectedResourceMetadata | None = None

    def __repr__(self) -> str:  # never the tokens, whatever prints it
        held = "with tokens" if self.tokens is not None else "without tokens"
        return f"<ServerLogin {self.server!r} {self.url!r} {held}>"

    __str__ = __repr__


class TokenStore:
    """The folder of login files, one per server name.

    Args:
        folder: where the files live; `TokenStore.default()` is the user's data folder.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def default(cls) -> TokenStore:
        """The store in the user's data folder (see the module docstring)."""
        return cls(user_data_dir() / "tokens")

    def __repr__(self) -> str:
        return f"TokenStore({str(self.folder)!r})"

    def path(self, server: str) -> Path:
        """The file of `server` (a name that is not a safe file name is percent-encoded)."""
        name = (
            server if _SAFE_NAME.fullmatch(server) else quote(server, safe="").replace(".", "%2E")
        )
        return self.folder / f"{name}.json"

    def load(self, server: str) -> ServerLogin | None:
        """The stored login of `server`; None when there is none or the file cannot be read."""
        try:
            text = self.path(server).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            login = ServerLogin.model_validate_json(text)
        except ValidationError:
            return None  # a damaged file is a missing login: the next login rewrites it
        return login if login.server == server else None

    def save(self, login: ServerLogin) -> Path:
        """Write `login` to its file (mode 0600, in a 0700 folder), replacing the old one whole."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.folder.stat().st_mode & 0o077 and os.name == "posix":
            self.folder.chmod(0o700)  # our own folder, made wider by hand or an old version
        path = self.path(login.server)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}")
        data = json.dumps(login.model_dump(mode="json", exclude_none=True), indent=2)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        return path

    def forget(self, server: str) -> bool:
        """Delete the login of `server`; whether there was one."""
        try:
            self.path(server).unlink()
        except FileNotFoundError:
            return False
        return True


class ServerTokenStorage:
    """The MCP SDK's `TokenStorage` over one server's file, read and written off the event loop.

    A file made for another URL is ignored (and replaced on the next write), so a
    server entry pointed at a new URL never sends the old server's tokens.
    """

    def __init__(self, store: TokenStore, server: str, url: str) -> None:
        self.store = store
        self.server = server
        self.url = url
        self.login = ServerLogin(server=server, url=url)
        self._loaded = False

    async def load(self) -> ServerLogin:
        """The stored login for this server and URL (an empty one when there is none)."""
        if not self._loaded:
            found = await anyio.to_thread.run_sync(self.store.load, self.server)
            if found is not None and found.url == self.url:
                self.login = found
            self._loaded = True
        return self.login

    async def start_over(self, redirect_uri: str) -> None:
        """Forget the tokens before a new login; keep the registration if it names `redirect_uri`.

        An authorization server matches the redirect URI exactly, so a registration
        made for another loopback port cannot be used: the login registers anew.
        """
        login = await self.load()
        client = login.client
        keep = client is not None and any(
            str(u) == redirect_uri for u in client.redirect_uris or []
        )
        self.login = ServerLogin(
            server=self.server,
            url=self.url,
            client=client if keep else None,
            redirect_uri=redirect_uri,
        )

    async def save(self) -> None:
        await anyio.to_thread.run_sync(self.store.save, self.login)

    async def get_tokens(self) -> OAuthToken | None:
        return (await self.load()).tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self.load()
        expires_at = None if tokens.expires_in is None else time.time() + int(tokens.expires_in)
        self.login = self.login.model_copy(update={"tokens": tokens, "expires_at": expires_at})
        await self.save()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return (await self.load()).client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self.load()
        self.login = self.login.model_copy(update={"client": client_info})
        await self.save()
