"""Router replicas as real processes: `meta-tools serve --transport http`, Redis, nginx.

`cluster(...)` starts one redis-server (or uses the session's), N replicas on
127.0.0.1 free ports sharing it and one state key, and nginx in front of them
with the repository's `deploy/nginx/meta-tools.conf` (its replica addresses and
port replaced). `Rotating` is an HTTP transport that sends every request to the
next replica in turn, so that no two consecutive requests meet the same one.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from benchmarks.services import Replica, deploy_nginx_site, replica
from tests.services import Drain, nginx, require

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "replica-test-token"
PREFIX = "/meta-tools"
TOOLS = "tests.servers.replica_tools"


def write_config(folder: Path, redis_url: str, **serve: Any) -> Path:
    """A sampling router: `Text` (shout, hold), its memory in Redis."""
    config = {
        "model": {"provider": "sampling"},
        "memory": {"redis_url": redis_url, "ttl_s": 600},
        "serve": serve,
        "Text": {"description": "Shout texts.", "tools": ["shout", "hold"]},
    }
    path = folder / "Meta_tool_config.json"
    path.write_text(json.dumps(config), "utf-8")
    return path


@dataclass
class Cluster:
    replicas: list[Replica]
    nginx_port: int | None
    nginx_log: Drain | None
    nginx_folder: Path
    state_key: str

    @property
    def url(self) -> str:
        """The router's public URL through nginx (with the deploy config's path prefix)."""
        assert self.nginx_port is not None
        return f"http://127.0.0.1:{self.nginx_port}{PREFIX}/mcp"


@contextmanager
def cluster(
    folder: Path,
    redis_url: str,
    *,
    replicas: int = 2,
    with_nginx: bool = True,
    state_key: str | None = None,
    **serve: Any,
) -> Iterator[Cluster]:
    """`replicas` router processes on one Redis (and nginx in front); all stopped on exit."""
    if with_nginx:
        require("nginx")  # skip before starting anything
    key = state_key or secrets.token_hex(32)
    config = write_config(folder, redis_url, **serve)
    with ExitStack() as stack:
        started = [
            stack.enter_context(
                replica(
                    f"replica{n}",
                    config,
                    env={"META_TOOLS_TOKEN": TOKEN, "META_TOOLS_STATE_KEY": key},
                    args=[f"--tools={TOOLS}"],
                )
            )
            for n in range(1, replicas + 1)
        ]
        port, log = None, None
        nginx_folder = folder / "nginx"
        if with_nginx:
            nginx_folder.mkdir()
            port, log = stack.enter_context(
                nginx(nginx_folder, deploy_nginx_site([r.port for r in started]))
            )
        yield Cluster(started, port, log, nginx_folder, key)


class Rotating(httpx2.AsyncBaseTransport):
    """Sends each request to the next of `ports` in turn (127.0.0.1), and records which."""

    def __init__(self, ports: Sequence[int]) -> None:
        self._ports = list(ports)
        self._inner = httpx2.AsyncHTTPTransport()
        self.sent_to: list[int] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self._ports[len(self.sent_to) % len(self._ports)]
        self.sent_to.append(port)
        request.url = request.url.copy_with(port=port)
        request.headers["host"] = f"127.0.0.1:{port}"
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def auth_headers(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
