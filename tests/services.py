"""The real services of `benchmarks/services.py` for the tests: a missing binary skips the test."""

from __future__ import annotations

import pytest

from benchmarks.services import Drain, MissingService, free_port, nginx, redis_server, stop
from benchmarks.services import binary as _binary

__all__ = ["Drain", "free_port", "nginx", "redis_server", "require", "stop"]


def require(name: str) -> str:
    """The binary's path, or skip the test saying how to install it (CI installs it)."""
    try:
        return _binary(name)
    except MissingService as exc:
        pytest.skip(str(exc))
