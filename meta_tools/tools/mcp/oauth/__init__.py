"""OAuth 2.1 logins to MCP servers over HTTP: the SDK's client flow, a token file per server, the loopback redirect."""

from .auth import BrowserStep, OAuthLogin, StoredLoginAuth
from .login import LoginOutcome, log_in
from .loopback import LoopbackCallback
from .store import ServerLogin, ServerTokenStorage, TokenStore, user_data_dir

__all__ = [
    "BrowserStep",
    "LoginOutcome",
    "LoopbackCallback",
    "OAuthLogin",
    "ServerLogin",
    "ServerTokenStorage",
    "StoredLoginAuth",
    "TokenStore",
    "log_in",
    "user_data_dir",
]
