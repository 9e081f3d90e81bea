"""Python tools for the router replicas the tests start (`meta-tools serve --tools` this module)."""

from __future__ import annotations

import anyio

from meta_tools import tool


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
async def hold(reason: str) -> str:
    """Wait until the call is cancelled (or the process dies)."""
    await anyio.sleep_forever()
    return reason  # pragma: no cover
