"""Where a client finds its API key, and when it needs none (a server on this machine)."""

from __future__ import annotations

import os
from ipaddress import ip_address
from urllib.parse import urlsplit

from ..exceptions import ModelError
from .defaults import KEY_ENV

__all__ = ["KEY_ENV", "NO_KEY", "is_local_url", "resolve_api_key"]


def is_local_url(url: str | None) -> bool:
    """Whether `url` points at this machine (a local model server needs no key)."""
    host = urlsplit(url).hostname if url else None
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


#: What is sent as the key to a local server when none is set: the SDKs insist on one.
NO_KEY = "no-key"


def resolve_api_key(
    api_key: str | None, api_key_env: str, owner: str, *, base_url: str | None = None
) -> str:
    """Return `api_key`, else the value of the environment variable `api_key_env`.

    A `base_url` on this machine (Ollama, vLLM, llama.cpp) needs no key: without
    one, a placeholder is sent.

    Raises:
        ModelError: neither is set, and `base_url` is not on this machine.
    """
    key = api_key or os.environ.get(api_key_env)
    if not key and is_local_url(base_url):
        return NO_KEY
    if not key:
        raise ModelError(
            f"{owner} has no API key: pass api_key=... or set the environment"
            f" variable {api_key_env!r} (a base_url on this machine needs none)"
        )
    return key
