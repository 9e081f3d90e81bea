"""Every example of the DB-GPT tool-resource seed, with `from meta_tools import ...`."""

import os
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field
from typing_extensions import Doc

from meta_tools import BaseTool, FunctionTool, ToolPack, ToolParameter, tool

pytestmark = pytest.mark.anyio

CALC_DEFAULT = (
    "simple_calculator: Call this tool to interact with the simple_calculator API. "
    "What is the simple_calculator API useful for? Simple calculator tool. Just support +, -, *, /. "
    'Parameters: [{"name": "first_number", "type": "integer", "description": "First Number", '
    '"required": true}, {"name": "second_number", "type": "integer", "description": '
    '"Second Number", "required": true}, {"name": "operator", "type": "string", "description": '
    '"Operator", "required": true}]'
)
CALC_OPENAI = (
    "simple_calculator: Call this tool to interact with the simple_calculator API. "
    "What is the simple_calculator API useful for? Simple calculator tool. Just support +, -, *, /. "
    'Parameters: {"type": "object", "properties": {"first_number": {"type": "integer", '
    '"description": "First Number"}, "second_number": {"type": "integer", "description": '
    '"Second Number"}, "operator": {"type": "string", "description": "Operator"}}, "required": '
    '["first_number", "second_number", "operator"]}'
)
COUNT_DEFAULT = (
    "count_directory_files: Call this tool to interact with the count_directory_files API. "
    "What is the count_directory_files API useful for? Count the number of files in a directory. "
    'Parameters: [{"name": "path", "type": "string", "description": "The directory path", '
    '"required": true}]'
)


def two_sum_prompt(name: str, first: str, second: str) -> str:
    return (
        f"{name}: Call this tool to interact with the {name} API. What is the {name} API useful "
        "for? Add two numbers and return the sum. Parameters: "
        f'[{{"name": "a", "type": "integer", "description": "{first}", "required": true}}, '
        f'{{"name": "b", "type": "integer", "description": "{second}", "required": true}}]'
    )


@tool
def simple_calculator(first_number: int, second_number: int, operator: str) -> float:
    """Simple calculator tool. Just support +, -, *, /."""
    if operator == "+":
        return first_number + second_number
    if operator == "-":
        return first_number - second_number
    if operator == "*":
        return first_number * second_number
    if operator == "/":
        return first_number / second_number
    raise ValueError(f"Invalid operator: {operator}")


@tool
def count_directory_files(path: Annotated[str, Doc("The directory path")]) -> int:
    """Count the number of files in a directory."""
    if not os.path.isdir(path):
        raise ValueError(f"Invalid directory path: {path}")
    return len(os.listdir(path))


def test_decorated_function_keeps_a_function_tool_that_prints_its_name_and_description() -> None:
    assert type(simple_calculator._tool) is FunctionTool  # type: ignore[attr-defined]
    assert str(simple_calculator._tool) == (  # type: ignore[attr-defined]
        "Tool: simple_calculator (Simple calculator tool. Just support +, -, *, /.)"
    )


async def test_default_and_openai_prompts_match_the_seed() -> None:
    calc: BaseTool = simple_calculator._tool  # type: ignore[attr-defined]
    assert await calc.get_prompt() == CALC_DEFAULT
    assert await calc.get_prompt(prompt_type="openai") == CALC_OPENAI


async def test_tool_pack_prompt_matches_the_seed() -> None:
    tools = ToolPack([simple_calculator, count_directory_files])
    expected = f"You have access to the following APIs:\n{CALC_DEFAULT}\n{COUNT_DEFAULT}"
    assert await tools.get_prompt() == expected


async def test_custom_name_and_description() -> None:
    @tool("my_two_sum", description="Add two numbers and return the sum.")
    def two_sum(a: int, b: int) -> int:
        return a + b

    assert await two_sum._tool.get_prompt() == two_sum_prompt("my_two_sum", "A", "B")  # type: ignore[attr-defined]


async def test_custom_args_dict() -> None:
    @tool(
        args={
            "a": {"type": "integer", "description": "First number to add", "required": True},
            "b": {"type": "integer", "description": "Second number to add", "required": True},
        }
    )
    def two_sum(a: int, b: int) -> int:
        """Add two numbers and return the sum."""
        return a + b

    assert await two_sum._tool.get_prompt() == two_sum_prompt(  # type: ignore[attr-defined]
        "two_sum", "First number to add", "Second number to add"
    )


async def test_args_schema_pydantic_model() -> None:
    class ArgsSchema(BaseModel):
        a: int = Field(description="The first number.")
        b: int = Field(description="The second number.")

    @tool(args_schema=ArgsSchema)
    def two_sum(a: int, b: int) -> int:
        """Add two numbers and return the sum."""
        return a + b

    assert await two_sum._tool.get_prompt() == two_sum_prompt(  # type: ignore[attr-defined]
        "two_sum", "The first number.", "The second number."
    )
    assert await two_sum._tool.call({"a": "2", "b": 3}) == 5  # type: ignore[attr-defined]


async def test_annotated_doc_and_calling_the_function_directly() -> None:
    @tool
    def two_sum(
        a: Annotated[int, Doc("The first number.")],
        b: Annotated[int, Doc("The second number.")],
    ) -> int:
        """Add two numbers and return the sum."""
        return a + b

    assert two_sum(1, 2) == 3
    assert await two_sum._tool.get_prompt() == two_sum_prompt(  # type: ignore[attr-defined]
        "two_sum", "The first number.", "The second number."
    )


async def test_function_tool_class() -> None:
    def two_sum(a: int, b: int) -> int:
        """Add two numbers and return the sum."""
        return a + b

    made = FunctionTool("two_sum", two_sum)
    assert await made.get_prompt() == two_sum_prompt("two_sum", "A", "B")


_TWO_SUM_ARGS = {
    "a": ToolParameter(name="a", type="integer", required=True, description="First number to add"),
    "b": ToolParameter(name="b", type="integer", required=True, description="Second number to add"),
}


class MyTwoSumTool(BaseTool):
    def __init__(self, name: str | None = None) -> None:
        self._name = name or "two_sum"
        self._args = _TWO_SUM_ARGS

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return "Add two numbers and return the sum."

    @property
    def args(self) -> dict[str, ToolParameter]:
        return self._args

    @property
    def is_async(self) -> bool:
        return False

    def execute(self, *args: Any, resource_name: str | None = None, **kwargs: Any) -> Any:
        return kwargs["a"] + kwargs["b"]

    async def async_execute(
        self, *args: Any, resource_name: str | None = None, **kwargs: Any
    ) -> Any:
        raise ValueError("The function is not asynchronous")


async def test_base_tool_subclass_with_tool_parameters() -> None:
    made = MyTwoSumTool()
    assert await made.get_prompt() == two_sum_prompt(
        "two_sum", "First number to add", "Second number to add"
    )
    assert await made.call({"a": "10", "b": 5}) == 15


async def test_seed_calculator_runs_through_a_pack() -> None:
    pack = ToolPack([simple_calculator, count_directory_files])
    product = await pack.call_tool(
        "simple_calculator", {"first_number": 10, "second_number": 99, "operator": "*"}
    )
    assert product == 990
