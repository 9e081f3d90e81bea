"""The `meta-tools` command: run, list, validate, serve, group and the demo."""

from .app import main
from .group import group as _group  # noqa: F401  (registers `meta-tools group`, listed last)

__all__ = ["main"]
