"""Level 3: the router the main agent talks to, built from a config and reloaded in place."""

from .manager import MetaManager

__all__ = ["MetaManager"]
