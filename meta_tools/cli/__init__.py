"""The `meta-tools` command: run, list, validate, serve, group and the demo.

`main` answers `--version` before it imports the commands (and the MCP SDK and
model clients they load).
"""

from __future__ import annotations

import sys

from .._version import __version__

__all__ = ["main", "version_line"]


def version_line() -> str:
    """What `meta-tools --version` prints."""
    return f"meta-tools {__version__}"


def main() -> None:
    """The console script's entry point."""
    if sys.argv[1:] in (["--version"], ["-V"]):
        sys.stdout.write(version_line() + "\n")
        return
    from .app import main as run

    run()
