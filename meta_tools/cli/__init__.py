"""The `meta-tools` command: run, list, validate, serve, group and the demo."""

from . import group as _group  # noqa: F401  (registers `meta-tools group` on the app)
from .app import main

__all__ = ["main"]
