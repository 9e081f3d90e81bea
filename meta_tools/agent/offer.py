"""What a main agent's model is offered: its instructions, and the category tools
without the parameter notes those instructions already give."""

from __future__ import annotations

from ..llm.types import ToolDefinition

__all__ = ["INSTRUCTIONS", "without_parameter_notes"]

INSTRUCTIONS = """You are {name}, a helpful assistant.
Your tools are categories; each runs its own tools.
Call a category with `objective` (the goal) and `exact_input` (every value it needs, copied from the user).
A request with parts for different categories: call each category with its own part, in one turn.
Do not work out yourself what a category can do: call it.
A category may send a question back: ask the user that question.
No category fits: say that it cannot be done.
Once the results answer the user, reply briefly in plain text with the values they found."""


def without_parameter_notes(tools: list[ToolDefinition]) -> list[ToolDefinition]:
    """`tools` with no description on their parameters.

    Every category tool has the same two parameters; the instructions explain
    them once instead of once per category (24 tokens a category with the
    Qwen2.5 tokenizer: over 1,000 of every main-agent call with 48 categories).
    """
    bare = []
    for tool in tools:
        parameters = tool.parameters
        properties = {
            name: {k: v for k, v in spec.items() if k != "description"}
            for name, spec in parameters["properties"].items()
        }
        bare.append(tool.model_copy(update={"parameters": parameters | {"properties": properties}}))
    return bare
