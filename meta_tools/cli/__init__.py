"""The `meta-tools` command: run, list, validate, serve and the demo."""

from .app import main

__all__ = ["main"]
