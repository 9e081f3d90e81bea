"""`python -m meta_tools.demo [--root DIR] [--http --port N]`: run the demo MCP server.

stdio by default. With `--http` it serves streamable HTTP on 127.0.0.1 at
`/mcp`; `--port 0` picks a free port. Once the socket listens, one line
`listening on http://127.0.0.1:PORT/mcp` is printed to stdout, so a parent
process knows where (and when) to connect.
"""

from __future__ import annotations

import argparse
import socket
import sys

import anyio

from .server import ROOT_ENV, build_server


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m meta_tools.demo", description=__doc__)
    parser.add_argument(
        "--root", help=f"sandbox folder of the file tools (default: ${ROOT_ENV} or the cwd)"
    )
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP instead of stdio"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port; 0 picks a free one")
    return parser.parse_args(argv)


async def _serve_http(args: argparse.Namespace) -> None:
    import uvicorn

    server = build_server(args.root)
    app = server.streamable_http_app(host=args.host)
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    print(f"listening on http://{args.host}:{port}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    try:
        if args.http:
            anyio.run(_serve_http, args)
        else:
            build_server(args.root).run()
    except ValueError as exc:  # a bad --root
        sys.exit(f"meta_tools.demo: {exc}")
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
