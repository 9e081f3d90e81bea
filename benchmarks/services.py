"""Real services started by the benchmarks and the tests: redis-server and nginx on 127.0.0.1.

Each on a free port, in the foreground, its output drained by a thread; a
missing binary raises `MissingService` (the tests turn it into a skip;
`.ci/run` installs both).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEPLOY_NGINX = REPO / "deploy" / "nginx" / "meta-tools.conf"

__all__ = [
    "Drain",
    "MissingService",
    "Replica",
    "binary",
    "deploy_nginx_site",
    "free_port",
    "nginx",
    "redis_server",
    "replica",
    "stop",
]


class MissingService(RuntimeError):
    """A service's binary is not installed."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def binary(name: str) -> str:
    """The path of `name` (also looked for in the sbin folders).

    Raises:
        MissingService: it is not installed (the message says how to get it).
    """
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None:
        raise MissingService(f"{name} is not installed (apt-get install {name}; CI installs it)")
    return found


class Drain:
    """Reads a process's output in a thread (so a full pipe never blocks it), keeping the text."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self._stream = process.stdout
        self._text = b""
        self._changed = threading.Condition()
        self._ended = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while chunk := self._stream.read1(65536):
            with self._changed:
                self._text += chunk
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    @property
    def text(self) -> str:
        with self._changed:
            return self._text.decode(errors="replace")

    def wait_for(self, needle: str, timeout: float = 20.0) -> bool:
        """True once `needle` was printed; False when the output ended or `timeout` passed."""
        wanted = needle.encode()
        with self._changed:
            return self._changed.wait_for(
                lambda: wanted in self._text or self._ended, timeout=timeout
            ) and (wanted in self._text)

    def join(self) -> None:
        self._thread.join(timeout=10)


def stop(process: subprocess.Popen[bytes], *, kill: bool = False) -> None:
    """Stop a process (SIGTERM, or SIGKILL) and wait until it is gone."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextmanager
def redis_server(folder: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real redis-server (no persistence) on a free port; yields its URL and process."""
    command = binary("redis-server")
    port = free_port()
    process = subprocess.Popen(
        [command, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = Drain(process)
    try:
        if not output.wait_for("Ready to accept connections"):
            raise RuntimeError(f"redis-server did not start: {output.text[-2000:]}")
        yield f"redis://127.0.0.1:{port}/0", process
    finally:
        stop(process)
        output.join()


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log stderr notice;
events {{ worker_connections 4096; }}
http {{
    log_format upstream '$upstream_addr $request_method $status';
    access_log {folder}/access.log upstream;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
{site}
}}
"""


@contextmanager
def nginx(folder: Path, site: Callable[[int], str]) -> Iterator[tuple[int, Drain]]:
    """A real nginx (one worker, in the foreground) serving `site(port)` on a free port.

    `site(port)` is the body of its `http` block (upstreams, maps, a `server`
    listening on 127.0.0.1:port). Yields the port and nginx's log.
    """
    command = binary("nginx")
    port = free_port()
    conf = folder / "nginx.conf"
    conf.write_text(NGINX_CONF.format(folder=folder, site=site(port)), "utf-8")
    checked = subprocess.run(
        [command, "-t", "-c", str(conf), "-p", str(folder), "-e", str(folder / "error.log")],
        capture_output=True,
        check=False,
    )
    if checked.returncode != 0:
        raise RuntimeError(f"nginx refused the config: {checked.stderr.decode(errors='replace')}")
    process = subprocess.Popen(
        [command, "-c", str(conf), "-p", str(folder), "-e", str(folder / "error.log")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = Drain(process)
    try:
        if not output.wait_for("start worker process"):  # printed once it listens
            raise RuntimeError(f"nginx did not start: {output.text[-2000:]}")
        yield port, output
    finally:
        stop(process)
        output.join()


@dataclass
class Replica:
    """One `meta-tools serve --transport http` process on 127.0.0.1."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    output: Drain

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def kill(self) -> None:
        """SIGKILL: the process dies at once, as in a crash."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)


@contextmanager
def replica(
    name: str, config: Path, *, env: dict[str, str], args: Sequence[str] = ()
) -> Iterator[Replica]:
    """Start `meta-tools serve --transport http --replica NAME` on a free port; stop it after.

    `env` is added to this process's environment (the token, the state key).
    """
    port = free_port()
    script = Path(sys.executable).with_name("meta-tools")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "meta_tools.cli"]
    command += [
        "serve",
        "--transport=http",
        f"--port={port}",
        f"--config={config}",
        f"--replica={name}",
        "--no-reload",
        *args,
    ]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = Drain(process)
    try:
        if not output.wait_for(f"on http://127.0.0.1:{port}/mcp", timeout=60):
            raise RuntimeError(f"replica {name} did not start: {output.text[-3000:]}")
        yield Replica(name, port, process, output)
    finally:
        stop(process)
        output.join()


def deploy_nginx_site(ports: Sequence[int], *, serving: int | None = None) -> Callable[[int], str]:
    """`deploy/nginx/meta-tools.conf` for replicas on these 127.0.0.1 ports, for `nginx(...)`.

    `serving`: only the first this many replicas get new requests (the others are
    marked `down`), to measure fewer replicas with the same processes running.
    """
    text = DEPLOY_NGINX.read_text("utf-8")
    active = len(ports) if serving is None else serving

    def site(port: int) -> str:
        local = text.replace("listen 80;", f"listen 127.0.0.1:{port};")
        for index, replica_port in enumerate(ports, start=1):
            if index > active:
                local = local.replace(
                    f"server replica{index}:8000 max_fails=1 fail_timeout=5s;",
                    f"server replica{index}:8000 down;",
                )
            local = local.replace(f"replica{index}:8000", f"127.0.0.1:{replica_port}")
        return local

    return site
