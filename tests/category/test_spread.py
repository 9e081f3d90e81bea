"""A call that gives lists where its tool takes single values runs once per position."""

from typing import Any

import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from tests.guard_profiles import SMALL_EVERY_TURN

pytestmark = pytest.mark.anyio

ran: list[str] = []


@tool
def protein_sequence(gene: str, species: str = "Homo sapiens", note: str | None = None) -> str:
    """Get the protein sequence of a gene in a species."""
    ran.append(f"{gene}/{species}/{note}")
    return f"sequence of {gene} in {species}"


@tool
def find_restaurants(location: str, dietary: list[str]) -> str:
    """Find restaurants that meet every dietary requirement."""
    ran.append(f"{location}:{'+'.join(dietary)}")
    return f"restaurants in {location}"


def run_one_call(
    arguments: dict[str, object], **options: int
) -> tuple[CategoryManager, ScriptedModel]:
    name = "find_restaurants" if "dietary" in arguments else "protein_sequence"
    model = ScriptedModel(
        [AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)]), _answer]
    )
    tools: list[Any] = [protein_sequence, find_restaurants]
    # Spreading lists is a small-model guard (`spread_lists`).
    manager = CategoryManager(
        "Biology", "Genes and food.", tools, model, guards=SMALL_EVERY_TURN, **options
    )
    return manager, model


def _answer(request: ChatRequest) -> AssistantTurn:
    return AssistantTurn(text="done")


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    ran.clear()


async def test_lists_of_one_length_at_single_valued_parameters_run_once_per_position() -> None:
    manager, model = run_one_call(
        {"gene": ["BRCA1", "BRCA2"], "species": ["Homo sapiens", "Pan troglodytes"], "note": "x"}
    )
    result = await manager.run("Protein sequences", "BRCA1 in humans, BRCA2 in chimps")

    assert result.status == "success"
    assert sorted(ran) == ["BRCA1/Homo sapiens/x", "BRCA2/Pan troglodytes/x"]  # they run at once
    assert [e.arguments for e in result.executions] == [
        {"gene": "BRCA1", "species": "Homo sapiens", "note": "x"},
        {"gene": "BRCA2", "species": "Pan troglodytes", "note": "x"},
    ]
    # The model reads back the calls that ran, each answered under its own id.
    sent = model.requests[1].messages
    spread = next(m for m in sent if m.role == "assistant").tool_calls
    answered = [m.tool_call_id for m in sent if m.role == "tool"]
    assert [c.arguments["gene"] for c in spread] == ["BRCA1", "BRCA2"]  # type: ignore[index]
    assert answered == [c.id for c in spread] and len(set(answered)) == 2


async def test_a_list_beside_single_values_spreads_and_an_optional_parameter_counts_as_single() -> (
    None
):
    manager, _ = run_one_call({"gene": "TP53", "note": ["a", "b", "c"]})
    result = await manager.run("Sequences", "TP53 three times")
    assert sorted(ran) == ["TP53/Homo sapiens/a", "TP53/Homo sapiens/b", "TP53/Homo sapiens/c"]
    assert result.status == "success"


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ({"gene": ["BRCA1", "BRCA2"], "species": ["Homo sapiens"]}, "lengths differ"),
        ({"gene": [["BRCA1"], ["BRCA2"]]}, "items are lists"),
        ({"gene": [{"name": "BRCA1"}, {"name": "BRCA2"}]}, "items are objects"),
        ({"gene": ["G1", "G2", "G3"]}, "more than a round runs"),
        ({"gene": []}, "no value"),
    ],
)
async def test_a_call_with_no_single_reading_is_left_as_written(
    arguments: dict[str, object], why: str
) -> None:
    manager, _ = run_one_call(arguments, max_calls_per_round=2)
    result = await manager.run("Sequences", "some genes")

    assert ran == [], why
    assert [e.ok for e in result.executions] == [False]
    assert "gene" in (result.executions[0].error or "")


async def test_a_one_item_list_for_a_single_value_is_that_value() -> None:
    manager, _ = run_one_call({"gene": ["BRCA1"]})
    result = await manager.run("Sequence", "BRCA1")
    assert ran == ["BRCA1/Homo sapiens/None"]
    assert [e.arguments for e in result.executions] == [{"gene": "BRCA1"}]


async def test_a_list_at_a_list_parameter_is_one_call() -> None:
    manager, _ = run_one_call({"location": "New York", "dietary": ["vegan", "gluten-free"]})
    result = await manager.run("Restaurants", "vegan and gluten-free in New York")
    assert ran == ["New York:vegan+gluten-free"]
    assert len(result.executions) == 1
