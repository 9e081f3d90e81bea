"""The command, run in this process by `CliRunner`, sets up the `meta_tools` log; undo it after."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def restore_the_meta_tools_log() -> Iterator[None]:
    """Put back the `meta_tools` logger's handlers, level and propagation after each test.

    A command sends that log to stderr and stops it propagating; left so, the
    tests run after this folder's would see no record in `caplog`.
    """
    package = logging.getLogger("meta_tools")
    handlers, level, propagate = list(package.handlers), package.level, package.propagate
    yield
    package.handlers[:] = handlers
    package.setLevel(level)
    package.propagate = propagate
