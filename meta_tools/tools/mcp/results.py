"""An MCP tool result as the value a tool returns."""

from __future__ import annotations

from typing import Any

import mcp_types

__all__ = ["result_value"]


def _describe_block(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {len(block.data)} base64 characters]"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        return f"[resource {resource.uri} ({resource.mime_type or 'binary'})]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link {block.uri}]"
    return f"[{type(block).__name__}]"


def result_value(result: mcp_types.CallToolResult, *, text_only: bool = False) -> Any:
    """The structured content when present (and wanted), else the content as text."""
    if not text_only and result.structured_content is not None:
        return result.structured_content
    return "\n".join(_describe_block(block) for block in result.content)
