"""The provider-neutral chat types refuse what no provider can send."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from meta_tools.llm import Message


def test_a_tool_message_without_the_id_of_its_call_is_refused() -> None:
    with pytest.raises(ValidationError, match="role 'tool' needs tool_call_id"):
        Message(role="tool", content="3")
    assert Message(role="tool", tool_call_id="call_1", content="3").tool_call_id == "call_1"
