"""What the served router declares it does: the change notifications it really sends.

The router announces a changed tool list after every reload (`tools/list_changed`
to legacy connections, `ToolsListChanged` on 2026-07-28 `subscriptions/listen`
streams). The SDK's server derives the 2026-07-28 flag from the listen handler,
but a 2025-11-25 handshake declares `listChanged` only from the notification
options its caller passes, and the streamable-HTTP session manager and the
in-memory transport pass none. `RouterServer` makes those options the default,
so every transport and era declares what is sent, and nothing else.
"""

from __future__ import annotations

from typing import Any

from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions

__all__ = ["ANNOUNCED", "RouterServer"]

ANNOUNCED = NotificationOptions(tools_changed=True)
"""The change notifications the router sends: its tool list's, and no prompts or resources."""


class RouterServer(Server[dict[str, Any]]):
    """The SDK's low-level server, whose handshake declares `ANNOUNCED` unless told otherwise."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or ANNOUNCED, experimental_capabilities, extensions
        )
