"""Names written by a model: a few bounded calls; drafts kept wherever the model fails."""

import json

import pytest

from meta_tools.exceptions import ModelError
from meta_tools.grouping.model_names import name_with_model
from meta_tools.grouping.name import Draft
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from tests.grouping.helpers import MUSIC, WEATHER

TOOLS = {t.name: t for t in [*WEATHER, *MUSIC]}
DRAFTS = [
    Draft(
        "City & Weather", "City, weather and rain.", "Inputs: city.", tuple(t.name for t in WEATHER)
    ),
    Draft(
        "Artist & Music",
        "Artist, music and songs.",
        "Inputs: artist.",
        tuple(t.name for t in MUSIC),
    ),
]


def naming(*entries: dict[str, object]) -> AssistantTurn:
    return AssistantTurn(
        tool_calls=[ToolCall(name="name_categories", arguments={"categories": list(entries)})]
    )


@pytest.mark.anyio
async def test_the_model_names_every_group_in_one_call_from_its_tools() -> None:
    model = ScriptedModel(
        [
            naming(
                {
                    "id": 0,
                    "name": "Weather",
                    "description": "Forecasts by city.",
                    "usage_notes": "Give a city.",
                },
                {"id": 1, "name": "Music", "description": "Songs and artists."},
            )
        ]
    )
    named, notes = await name_with_model(model, DRAFTS, TOOLS)
    assert [(d.name, d.description, d.tool_usage_notes) for d in named] == [
        ("Weather", "Forecasts by city.", "Give a city."),
        ("Music", "Songs and artists.", "Inputs: artist."),
    ]
    assert [d.tools for d in named] == [d.tools for d in DRAFTS]
    assert notes == []
    (request,) = model.requests
    assert request.tools[0].name == "name_categories"
    shown = json.loads(request.messages[1].content)
    assert shown["groups"][0] == {
        "id": 0,
        "draft_name": "City & Weather",
        "size": 4,
        "tools": [f"{t.name}: {t.description}" for t in WEATHER],
    }


@pytest.mark.anyio
async def test_calls_are_bounded_and_groups_left_over_keep_their_drafts() -> None:
    def answer(request: ChatRequest) -> AssistantTurn:
        ids = [g["id"] for g in json.loads(request.messages[1].content)["groups"]]
        return naming(*({"id": i, "name": f"Named {i}", "description": "d"} for i in ids))

    model = ScriptedModel.from_function(answer)
    drafts = [DRAFTS[i % 2] for i in range(5)]
    named, notes = await name_with_model(model, drafts, TOOLS, batch=2, max_calls=2)
    assert len(model.requests) == 2
    assert [d.name for d in named] == ["Named 0", "Named 1", "Named 2", "Named 3", "City & Weather"]
    assert notes == [
        "the model named 4 of 5 categories (2 calls); the rest keep names from the tools' words"
    ]


@pytest.mark.anyio
async def test_a_failed_or_malformed_answer_keeps_the_drafts() -> None:
    def fail(request: ChatRequest) -> AssistantTurn:
        raise ModelError("endpoint down")

    named, notes = await name_with_model(ScriptedModel.from_function(fail), DRAFTS, TOOLS)
    assert named == DRAFTS
    assert notes == ["the model failed (endpoint down); 2 categories keep their drafts"]
    # Prose, and JSON nested deeper than the decoder can follow: no names, no crash.
    for text in ("Weather and Music, I think.", "[" * 5000):
        garbled = ScriptedModel([AssistantTurn(text=text)])
        named, notes = await name_with_model(garbled, DRAFTS, TOOLS)
        assert named == DRAFTS
        assert notes == ["the model gave no usable name for 2 categories; they keep their drafts"]


@pytest.mark.anyio
async def test_json_in_the_text_is_accepted_and_equal_names_are_made_distinct() -> None:
    text = json.dumps(
        {
            "categories": [
                {"id": 0, "name": "Media", "description": "a"},
                {"id": 1, "name": "media", "description": "b"},
            ]
        }
    )
    named, _ = await name_with_model(
        ScriptedModel([AssistantTurn(text=f"```json\n{text}\n```")]), DRAFTS, TOOLS
    )
    assert [d.name for d in named] == ["Media", "media 2"]
