"""The installed version: a leaf module, so that asking for it loads nothing else."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("meta-tools")
except PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"
