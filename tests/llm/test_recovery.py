"""Tool calls written as text, as small local models write them, read back into calls."""

from __future__ import annotations

import json

import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.guards import Guards
from meta_tools.llm import (
    AssistantTurn,
    ChatRequest,
    Message,
    ScriptedModel,
    ToolCall,
    ToolDefinition,
)
from meta_tools.llm.recovery import (
    RecoveringModel,
    looks_like_call,
    meant_tool,
    nudge,
    recover_calls,
    recover_turn,
    repetition,
)
from meta_tools.support.text import sentence
from tests.llm.chat_requests import ADD_TOOL, ask

OFFERED = {"describe_date", "calculate"}
DATE = {"date": "2025-12-25"}
SUM = {"expression": "2 + 3"}


def calls(text: str) -> list[tuple[str, object]]:
    recovery = recover_calls(text, OFFERED)
    assert recovery.problem is None
    return [(c.name, c.arguments) for c in recovery.calls]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "describe_date", "arguments": {"date": "2025-12-25"}}',
        '```json\n{"name": "describe_date", "arguments": {"date": "2025-12-25"}}\n```',
        '<tool_call>\n{"name": "describe_date", "arguments": {"date": "2025-12-25"}}\n</tool_call>',
        '<tool_result>\n{"name": "describe_date", "arguments": {"date": "2025-12-25"}}\n</tool_result>',
        '{"name": "describe_date", "arguments": {"date": "2025-12-25"}',
        '```json\n{"name": "describe_date", "arguments": {"date": "2025-12-25"}\n```',
        '{"name": "describe_date", "arguments": "{\\"date\\": \\"2025-12-25\\"}"}',
        '{"type": "function", "function": {"name": "describe_date", "arguments": {"date": "2025-12-25"}}}',
        '{"name": "describe_date", "parameters": {"date": "2025-12-25"}}',
        '{"tool": "describe_date", "tool_input": {"date": "2025-12-25"}}',
        '{"function": "describe_date", "args": {"date": "2025-12-25"}}',
        '{"action": "describe_date", "action_input": {"date": "2025-12-25"}}',
    ],
    ids=[
        "bare",
        "json-fence",
        "tool-call-tag",
        "tool-result-tag",
        "missing-brace",
        "fence-missing-brace",
        "arguments-as-string",
        "openai-shape",
        "parameters-key",
        "tool-and-tool-input",
        "function-and-args",
        "action-and-action-input",
    ],
)
def test_one_call_written_as_text_is_recovered_whatever_wraps_it(text: str) -> None:
    recovery = recover_calls(text, OFFERED)
    assert [(c.name, c.arguments) for c in recovery.calls] == [("describe_date", DATE)]
    assert (recovery.text, recovery.problem) == ("", None)


def test_several_calls_in_a_row_or_in_a_list_are_all_recovered_in_order() -> None:
    row = (
        '{"name": "calculate", "arguments": {"expression": "2 + 3"}}\n'
        '{"name": "describe_date", "arguments": {"date": "2025-12-25"}}'
    )
    listed = (
        '```json\n[{"name": "calculate", "arguments": {"expression": "2 + 3"}},'
        ' {"name": "describe_date", "arguments": {"date": "2025-12-25"}}]\n```'
    )
    expected = [("calculate", SUM), ("describe_date", DATE)]
    assert calls(row) == expected
    assert calls(listed) == expected


def test_prose_around_a_call_is_kept_as_the_turn_text() -> None:
    recovery = recover_calls(
        'Let me look it up.\n{"name": "calculate", "arguments": {"expression": "2 + 3"}}', OFFERED
    )
    assert [(c.name, c.arguments) for c in recovery.calls] == [("calculate", SUM)]
    assert recovery.text == "Let me look it up."


def test_plain_answers_and_json_data_are_not_calls() -> None:
    named = recover_calls(
        '{"name": "notes.txt", "input": "a"}', OFFERED
    )  # "input" only with "tool"
    assert (named.calls, named.problem) == ([], None)
    for text in ("The answer is 5.", '{"mean": 2.5, "median": 2}', "[1, 2, 3]"):
        assert recover_calls(text, OFFERED).calls == []
        assert recover_calls(text, OFFERED).problem is None
        assert not looks_like_call(text)


def test_a_call_to_a_tool_not_offered_is_not_recovered_and_says_why() -> None:
    recovery = recover_calls('{"name": "weather", "arguments": {"city": "Paris"}}', OFFERED)
    assert recovery.calls == []
    assert recovery.problem == (
        "'weather' is not one of the offered tools (calculate, describe_date)"
    )


def test_a_name_one_slip_from_an_offered_tool_is_answered_with_that_tool_s_name() -> None:
    offered = ["Quotes__GET_quote_by_Year", "Quotes__GET_quotes_by_actor", "calculate"]
    text = '{"name": "Quotes__GET_quote_by_Yaer", "arguments": {"year": 1939}}'
    recovery = recover_calls(text, offered)
    assert recovery.calls == []
    assert recovery.problem is not None
    assert recovery.problem.endswith("; did you mean 'Quotes__GET_quote_by_Year'?")
    # A name that is merely alike names no other tool: calc_add is another operation, and
    # so is a tool that shares all but the last word of a long name (seen with the 1.5B).
    far = recover_calls('{"name": "calc_mul", "arguments": {"a": 1}}', ["calc_add"])
    assert far.problem == "'calc_mul' is not one of the offered tools (calc_add)"
    text = '{"name": "Quotes_API__get_quotes_by_year", "arguments": {"year": 1939}}'
    other = recover_calls(text, ["Quotes_API__get_quotes_by_keyword"])
    assert other.problem is not None and "did you mean" not in other.problem


def test_a_call_that_does_not_parse_is_flagged_not_recovered() -> None:
    broken = '<tool_call>{"name": "calculate", "arguments": {"expression": "2 +'
    recovery = recover_calls(broken, OFFERED)
    assert (recovery.calls, recovery.text) == ([], broken)
    assert recovery.problem == "it is not valid JSON"
    bad_arguments = recover_calls('{"name": "calculate", "arguments": [1, 2]}', OFFERED)
    assert bad_arguments.problem == "the arguments of 'calculate' are not a JSON object"


def test_recover_turn_moves_the_calls_out_of_the_text_and_counts_them() -> None:
    turn = AssistantTurn(text='```json\n{"name": "calc_add", "arguments": {"a": 1, "b": 2}}\n```')
    recovered = recover_turn(turn, ask("1+2?"))
    assert recovered.text is None
    assert [(c.name, c.arguments) for c in recovered.tool_calls] == [("calc_add", {"a": 1, "b": 2})]
    assert (recovered.recovered, recovered.unread_call) == (1, None)


def test_recover_turn_leaves_real_calls_and_requests_without_tools_alone() -> None:
    text = '{"name": "calc_add", "arguments": {"a": 1, "b": 2}}'
    real = AssistantTurn(text=text, tool_calls=[ToolCall(name="calc_add", arguments={"a": 1})])
    assert recover_turn(real, ask("1+2?")) is real
    plain = AssistantTurn(text=text)
    assert recover_turn(plain, ask("1+2?", tools=False)) is plain


@pytest.mark.parametrize("text", ["<tools></tools>", "<tools/>", "<tool_call>\n</tool_call>"])
def test_a_reply_of_tags_alone_is_flagged_so_the_model_is_asked_again(text: str) -> None:
    """Seen with the 1.5B main agent, offered a category named "tools": `<tools></tools>`,
    which the user would have read as its answer."""
    turn = recover_turn(AssistantTurn(text=text), ask("Make me a QR code"))
    assert turn.tool_calls == [] and turn.unread_call is not None
    note = Guards("small").text("unread_call", problem=sentence(turn.unread_call))
    assert nudge(turn, note) == [turn.as_message(), Message(role="user", content=note)]
    # An empty list, text beside a tag, or no tools offered: taken as they are.
    for kept in ("[]", "Done. <br>"):
        assert recover_turn(AssistantTurn(text=kept), ask("x")).unread_call is None
    assert recover_turn(AssistantTurn(text=text), ask("x", tools=False)).unread_call is None


def test_a_result_the_model_wrote_itself_is_no_answer() -> None:
    """Seen with the 1.5B in a category: after one call it replied with a fenced result
    of a tool that never ran, and that stood as the run's answer."""
    made_up = '<tool_response>\n<tool_result tool="Calc_Add" status="ok">\n3\n</tool_result>'
    turn = recover_turn(AssistantTurn(text=made_up + "\n</tool_response>"), ask("1+2?"))
    assert (turn.text, turn.tool_calls, turn.unread_call) == (None, [], None)
    beside = recover_turn(AssistantTurn(text=f"It is 3. {made_up}"), ask("1+2?"))
    assert beside.text == "It is 3."
    unclosed = recover_turn(AssistantTurn(text='Sure. <tool_result tool="calc_add">3'), ask("x"))
    assert unclosed.text == "Sure."


def test_an_echo_of_a_real_result_or_a_fence_of_no_offered_tool_is_text() -> None:
    fence = '<tool_result tool="calc_add" status="ok">\n3\n</tool_result>'
    call = ToolCall(name="calc_add", arguments={"a": 1, "b": 2})
    answered = ask("1+2?").model_copy(deep=True)
    answered.messages += [
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id=call.id, name="calc_add", content=fence),
    ]
    assert recover_turn(AssistantTurn(text=fence), answered).text == fence
    quoted = recover_turn(AssistantTurn(text=fence), ask(f"What does {fence} mean?"))
    assert quoted.text == fence
    other = fence.replace("calc_add", "weather")
    assert recover_turn(AssistantTurn(text=other), ask("1+2?")).text == other
    for kept in (fence, other):
        assert recover_turn(AssistantTurn(text=kept), answered).unread_call is None


def test_recover_turn_flags_a_call_it_cannot_read() -> None:
    turn = AssistantTurn(text='{"name": "calc_mul", "arguments": {"a": 1, "b": 2}}')
    flagged = recover_turn(turn, ask("1*2?"))
    assert flagged.tool_calls == []
    assert flagged.unread_call == "'calc_mul' is not one of the offered tools (calc_add)"


@pytest.mark.anyio
async def test_recovering_model_recovers_the_wrapped_models_text_calls() -> None:
    scripted = ScriptedModel(
        [AssistantTurn(text='<tool_call>{"name": "calc_add", "arguments": {"a": 2, "b": 2}}')]
    )
    request = ChatRequest(messages=[Message(role="user", content="2+2")], tools=[ADD_TOOL])
    turn = await RecoveringModel(scripted).complete(request)
    assert [(c.name, c.arguments, turn.recovered) for c in turn.tool_calls] == [
        ("calc_add", {"a": 2, "b": 2}, 1)
    ]


def test_an_answer_quoting_json_data_is_neither_a_call_nor_flagged() -> None:
    quoted = (
        'Result: {"category": "Math", "status": "success", "executions": [{"tool": "calculate",'
        ' "arguments": {"expression": "17 * 23"}, "result": "391"}]}'
    )
    person = 'The record is {"name": "Bob", "age": 3}.'
    for text in (quoted, person):
        assert (recover_calls(text, OFFERED).calls, recover_calls(text, OFFERED).problem) == (
            [],
            None,
        )


# Written by Qwen2.5-Coder 1.5B as the main agent (the exact_input tag was never closed).
QWEN_XML = """<tools>
  <function name="describe_date">
    <arguments>
      <date>2025-12-25</date>
      <note>
        {
          "about": "unclosed"
        }
      </arguments>
    </function>
  </function>
</tools>"""


@pytest.mark.parametrize(
    "text",
    [
        QWEN_XML,
        '<function=describe_date>{"date": "2025-12-25"}</function>',
        "<tool_call>\n<function=describe_date>\n<parameter=date>\n2025-12-25\n</parameter>\n"
        "</function>\n</tool_call>",
        '<function name="describe_date"><parameter name="date">2025-12-25</parameter></function>',
        # The 1.5B main agent on demo q1, with the name as a child element.
        "<tools>\n  <function>\n    <name>describe_date</name>\n    <arguments>\n"
        "      <date>2025-12-25</date>\n    </arguments>\n  </function>\n</tools>",
    ],
    ids=[
        "qwen-arguments-tags",
        "function-equals-json",
        "parameter-equals",
        "parameter-name",
        "name-element",
    ],
)
def test_a_call_written_in_xml_form_is_recovered(text: str) -> None:
    assert calls(text) == [("describe_date", DATE)]


def test_an_xml_call_to_a_tool_not_offered_says_why_and_prose_about_functions_is_no_call() -> None:
    unknown = recover_calls('<function name="send_email"><to>Bob</to></function>', OFFERED)
    assert unknown.calls == [] and unknown.problem is not None
    assert unknown.problem.startswith("'send_email' is not one of the offered tools")
    prose = "In JavaScript, write a <function> keyword before the name."
    assert recover_calls(prose, OFFERED) == recover_calls(prose, set()) and not looks_like_call(
        prose
    )


def test_text_values_are_typed_from_the_schema_of_the_tool() -> None:
    text = '<function name="calc_add"><a>2</a><b>3.5</b></function>'
    recovered = recover_turn(AssistantTurn(text=text), ask("2+3.5?"))
    assert [c.arguments for c in recovered.tool_calls] == [{"a": 2, "b": 3.5}]
    named = ChatRequest(
        messages=[Message(role="user", content="x")],
        tools=[ToolDefinition(name="say", parameters={
            "type": "object", "properties": {"text": {"type": "string"}}})],
    )  # fmt: skip
    said = recover_turn(
        AssistantTurn(text='<function name="say"><text>42</text></function>'), named
    )
    assert said.tool_calls[0].arguments == {"text": "42"}  # a string parameter stays text


def category_tools(*names: str) -> ChatRequest:
    """A request offering category tools: all share the schema {objective, exact_input}."""
    schema = {
        "type": "object",
        "properties": {"objective": {"type": "string"}, "exact_input": {"type": "string"}},
        "required": ["objective", "exact_input"],
    }
    return ChatRequest(
        messages=[Message(role="user", content="x")],
        tools=[ToolDefinition(name=n, parameters=schema) for n in names],
    )


# Written by Qwen2.5-Coder 1.5B as the main agent, asked for line 2 of notes.txt.
ARGUMENTS_BESIDE_A_NAME = """To find line 2 of notes.txt, you can use the `files` function \
with the following exact input:

```json
{
  "objective": "Find line 2 of notes.txt",
  "exact_input": "notes.txt"
}
```

This will return the content of the notes.txt file."""


def test_arguments_written_beside_the_one_tool_they_name_are_a_call() -> None:
    offered = category_tools("math_units", "files", "text_analysis")
    recovered = recover_turn(AssistantTurn(text=ARGUMENTS_BESIDE_A_NAME), offered)
    assert [(c.name, c.arguments) for c in recovered.tool_calls] == [
        ("files", {"objective": "Find line 2 of notes.txt", "exact_input": "notes.txt"})
    ]
    assert recovered.recovered == 1
    assert recovered.text is not None and recovered.text.startswith("To find line 2")
    assert "{" not in recovered.text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (ARGUMENTS_BESIDE_A_NAME.replace("`files` function", "right category"), "no name"),
        (
            ARGUMENTS_BESIDE_A_NAME.replace("`files` function", "`files` or `math_units` tool"),
            "two names",
        ),
        (ARGUMENTS_BESIDE_A_NAME.replace('"exact_input"', '"input"'), "a key the schema lacks"),
        (
            ARGUMENTS_BESIDE_A_NAME.replace(',\n  "exact_input": "notes.txt"', ""),
            "a required key missing",
        ),
    ],
)
def test_arguments_alone_are_no_call_without_exactly_one_fitting_tool_named(
    text: str, why: str
) -> None:
    offered = category_tools("math_units", "files", "text_analysis")
    turn = recover_turn(AssistantTurn(text=text), offered)
    assert (turn.tool_calls, turn.recovered, turn.unread_call, turn.text) == ([], 0, None, text), (
        why
    )


# Written by Qwen2.5-Coder 1.5B in a category run, asked to book a flight.
TAG_CALL = (
    '<tool_call tool="convert_time_zone" arguments={"time": "2023-04-02T00:00:00",'
    ' "from_zone": "Europe/Paris", "to_zone": "America/New_York"}></tool_call>'
)
ZONES = {"time": "2023-04-02T00:00:00", "from_zone": "Europe/Paris", "to_zone": "America/New_York"}


@pytest.mark.parametrize(
    "text",
    [
        TAG_CALL,
        TAG_CALL.removesuffix("</tool_call>"),
        TAG_CALL.replace("tool=", "name=").replace("arguments={", "arguments='{")[:-13] + "'/>",
    ],
    ids=["closed", "unclosed", "single-quoted-self-closing"],
)
def test_a_call_written_as_one_tag_with_attributes_is_recovered(text: str) -> None:
    recovery = recover_calls(text, {"convert_time_zone"})
    assert [(c.name, c.arguments) for c in recovery.calls] == [("convert_time_zone", ZONES)]
    assert (recovery.text, recovery.problem) == ("", None)


def test_a_tag_call_to_a_tool_not_offered_or_without_json_says_why() -> None:
    assert recover_calls(TAG_CALL, {"describe_date"}).problem == (
        "'convert_time_zone' is not one of the offered tools (describe_date)"
    )
    broken = TAG_CALL.replace('"time": ', '"time" ')
    assert recover_calls(broken, {"convert_time_zone"}).problem == (
        "the arguments of 'convert_time_zone' are not a JSON object"
    )


def test_an_answer_quoting_a_call_already_made_is_not_read_as_that_call_again() -> None:
    arguments = {"objective": "Find line 2 of notes.txt", "exact_input": "notes.txt"}
    asked = category_tools("math_units", "files")
    made = ToolCall(name="files", arguments=arguments)
    answered = asked.model_copy(
        update={
            "messages": [
                *asked.messages,
                Message(role="assistant", tool_calls=[made]),
                Message(role="tool", tool_call_id=made.id, content='{"summary": "beta"}'),
            ]
        }
    )
    text = f"I called `files` with {json.dumps(arguments)}: line 2 is beta."
    turn = recover_turn(AssistantTurn(text=text), answered)
    assert (turn.tool_calls, turn.text) == ([], text)
    # Before that call was made, the same words are the call.
    assert [c.name for c in recover_turn(AssistantTurn(text=text), asked).tool_calls] == ["files"]


def test_a_call_naming_an_offered_tool_in_another_spelling_gets_its_name() -> None:
    """Seen with the 1.5B: `GET_quote_by_year`, and in another run `GET_quotes_by_year`,
    written for `GET_quote_by_Year`; told the name was not offered, it declined."""
    offered = ["Quotes__GET_quote_by_Year", "Quotes__GET_quotes_by_actor", "calculate"]
    text = '{"name": "Quotes__GET_quotes_by_year", "arguments": {"year": 1939}}'
    assert [c.name for c in recover_calls(text, offered).calls] == ["Quotes__GET_quote_by_Year"]
    assert calls('{"name": "Describe-Date", "arguments": {"date": "2025-12-25"}}') == [
        ("describe_date", DATE)
    ]
    text = '{"name": "CALC_ADD", "arguments": {"a": 1, "b": 2}}'
    assert [c.name for c in recover_turn(AssistantTurn(text=text), ask("1+2?")).tool_calls] == [
        "calc_add"
    ]
    real = AssistantTurn(tool_calls=[ToolCall(name="calcAdd", arguments={"a": 1, "b": 2})])
    assert [c.name for c in recover_turn(real, ask("1+2?")).tool_calls] == ["calc_add"]


@pytest.mark.anyio
async def test_a_real_call_in_another_spelling_runs_in_a_whole_run() -> None:
    """The async path every model wrapper takes gave real calls back as written, so
    `addNumbers` for `add_numbers` was answered as an unknown tool."""
    ran: list[int] = []

    @tool
    def add_numbers(a: int, b: int) -> int:
        """Add two integers."""
        ran.append(a + b)
        return a + b

    real = AssistantTurn(tool_calls=[ToolCall(name="addNumbers", arguments={"a": 1, "b": 2})])
    model = RecoveringModel(ScriptedModel([real, AssistantTurn(text="3")]))
    category = CategoryManager("Maths", "Adds numbers.", [add_numbers], model)

    result = await category.run("Add 1 and 2", "1, 2")

    assert ran == [3]
    assert [(e.tool, e.ok) for e in result.executions] == [("add_numbers", True)]


def _schema(*required: str, optional: tuple[str, ...] = ()) -> dict[str, object]:
    names = (*required, *optional)
    return {
        "type": "object",
        "properties": {n: {"type": "string"} for n in names},
        "required": list(required),
    }


FILE_TOOLS = {
    "read_file": _schema("path", optional=("start_line", "max_lines")),
    "search_files": _schema("query", optional=("path",)),
    "file_info": _schema("path"),
    "request_input": _schema("question"),
}


def _files_request() -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="user", content="What is line 2 of notes.txt?")],
        tools=[ToolDefinition(name=n, description=n, parameters=s) for n, s in FILE_TOOLS.items()],
    )


READ_CALL = {"path": "notes.txt", "start_line": 2, "max_lines": 1}


def test_a_short_name_runs_as_the_one_tool_whose_name_holds_it_and_whose_schema_fits() -> None:
    """Seen with the 1.5B on demo f5: `read(path, start_line, max_lines)` in the files
    category; told `did you mean 'read_file'?`, it declined."""
    assert meant_tool("read", READ_CALL, FILE_TOOLS) == "read_file"
    written = AssistantTurn(text=json.dumps({"name": "read", "arguments": READ_CALL}))
    recovered = recover_turn(written, _files_request())
    assert [(c.name, c.arguments) for c in recovered.tool_calls] == [("read_file", READ_CALL)]
    real = AssistantTurn(tool_calls=[ToolCall(name="read", arguments=READ_CALL)])
    assert [c.name for c in recover_turn(real, _files_request()).tool_calls] == ["read_file"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("file", {"path": "notes.txt"}),  # read_file and file_info both fit
        ("read", {"file": "notes.txt"}),  # no schema of a `read` tool takes `file`
        ("read", {}),  # nothing to tell the tools apart by
        ("read", "notes.txt"),  # no arguments object
        ("translate_file", {"path": "notes.txt"}),  # no tool does `translate`
        ("request", {"question": "Which file?"}),  # the loop's own functions are not guessed
    ],
)
def test_a_short_name_that_several_tools_or_none_could_mean_is_not_guessed(
    name: str, arguments: object
) -> None:
    assert meant_tool(name, arguments, FILE_TOOLS) is None


DNA_TOOLS = {  # in the order a category offered them, best-ranked first
    "dna2protein__DNA2AminoAcid": _schema("dna"),
    "dna2protein__mRNA2DNA": _schema("mRNA"),
    "dna2protein__DNA2mRNA": _schema("dna"),
}


def test_a_service_s_name_means_its_best_ranked_tool_the_arguments_fit() -> None:
    """Seen with the 1.5B on the tuning split: `dna2protein` with `{"dna": ...}`; told
    the name was not offered, it declined. Two of the service's tools take `dna`."""
    dna = {"dna": "ATCGCTAGTACG"}
    assert meant_tool("dna2protein", dna, DNA_TOOLS) == "dna2protein__DNA2AminoAcid"
    reordered = dict(reversed(DNA_TOOLS.items()))
    assert meant_tool("dna2protein", dna, reordered) == "dna2protein__DNA2mRNA"
    assert meant_tool("dna2protein", {"mRNA": "UACG"}, DNA_TOOLS) == "dna2protein__mRNA2DNA"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("dna", {"dna": "ATCG"}),  # one word: no service's name
        ("protein_dna", {"dna": "ATCG"}),  # every word in both, but neither starts so
        ("dna2protein", {"sequence": "ATCG"}),  # no tool takes `sequence`
    ],
)
def test_a_name_no_family_of_tools_starts_with_is_not_guessed_between_them(
    name: str, arguments: object
) -> None:
    assert meant_tool(name, arguments, DNA_TOOLS) is None


PASSWORD_TOOLS = {  # as a category offered them
    "ExplorArc_s_Password_Gen__Password_Generation": _schema(optional=("length",)),
    "Password_Generator__Generate_Password": _schema(
        optional=("length", "uppercase", "numbers", "symbols")
    ),
    "Password_Generator_API__Base": _schema(),
}


def test_a_function_written_under_another_service_s_name_means_the_tool_that_has_it() -> None:
    """Seen with the 1.5B on the tuning split: `Password_Generator_API__Generate_Password`
    with the arguments of `Password_Generator__Generate_Password`; told the name was not
    offered, it declined."""
    arguments = {"length": 12, "uppercase": True, "numbers": True}
    written = "Password_Generator_API__Generate_Password"
    assert meant_tool(written, arguments, PASSWORD_TOOLS) == "Password_Generator__Generate_Password"
    assert meant_tool("Other__generate_passwords", arguments, PASSWORD_TOOLS) == (
        "Password_Generator__Generate_Password"
    )
    # With no arguments, a function only one offered tool has (and that requires nothing).
    assert meant_tool("Password_Generator_v2__Base", {}, PASSWORD_TOOLS) == (
        "Password_Generator_API__Base"
    )
    assert meant_tool("read", {}, FILE_TOOLS) is None  # no service written: nothing to move
    # A capable model's call to an offered tool is that tool, whatever another service has.
    for offered in PASSWORD_TOOLS:
        assert meant_tool(offered, arguments, PASSWORD_TOOLS) == offered


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        # The function's tool takes no `question`: a question put under a tool's name.
        ("Password_Generator_API__Generate_Password", {"question": "How long?"}),
        ("Generate_Password", {"length": 12}),  # no service written: no other service's
        ("Password_Generator_API__Rotate_Password", {"length": 12}),  # no tool does that
    ],
)
def test_a_function_is_not_moved_to_a_tool_that_does_not_take_its_arguments(
    name: str, arguments: object
) -> None:
    assert meant_tool(name, arguments, PASSWORD_TOOLS) is None


CONTROL_TOOLS = PASSWORD_TOOLS | {
    "request_input": _schema("missing", "question"),
    "decline": _schema("reason", optional=("suggestion",)),
    "Help_Desk__Ask": _schema("question"),
}
ASKING = {"missing": ["length"], "question": "How long should the passwords be?"}


def test_a_control_call_s_arguments_under_a_tool_s_name_are_that_control_call() -> None:
    """Seen with the 1.5B: `Translate_it__options` with request_input's `missing` and
    `question`; the tool ignored them, ran, and counted as a wrong call."""
    for name in ("Password_Generator__Generate_Password", "password_generator__generate_password"):
        assert meant_tool(name, ASKING, CONTROL_TOOLS) == "request_input"
    assert meant_tool("Translate_it__options", ASKING, CONTROL_TOOLS) is None  # not offered
    why = {"reason": "No tool here converts units."}
    assert meant_tool("Password_Generator_API__Base", why, CONTROL_TOOLS) == "decline"
    # A tool that takes one of the arguments is called as written (a capable model's call).
    assert meant_tool("Help_Desk__Ask", {"question": "Reset?"}, CONTROL_TOOLS) == "Help_Desk__Ask"
    assert meant_tool("Help_Desk__Ask", ASKING, CONTROL_TOOLS) == "Help_Desk__Ask"
    # Arguments that are not all a control call's, or no control call offered: as before.
    mixed = ASKING | {"length": 12}
    assert meant_tool("Password_Generator__Generate_Password", mixed, CONTROL_TOOLS) == (
        "Password_Generator__Generate_Password"
    )
    assert meant_tool("Password_Generator__Generate_Password", ASKING, PASSWORD_TOOLS) == (
        "Password_Generator__Generate_Password"
    )


@pytest.mark.anyio
async def test_a_question_written_under_a_tool_s_name_asks_it_and_runs_nothing() -> None:
    ran: list[str] = []

    @tool
    def generate_password(length: int = 12) -> str:
        """Generate a random password."""
        ran.append("generate_password")
        return "x" * length

    asked = AssistantTurn(tool_calls=[ToolCall(name="generate_password", arguments=ASKING)])
    model = RecoveringModel(ScriptedModel([asked]))
    category = CategoryManager("Passwords", "Makes passwords.", [generate_password], model)

    result = await category.run("Make a password", "")

    assert ran == []
    assert result.status == "insufficient_input"
    assert result.question == ASKING["question"]


@pytest.mark.anyio
async def test_a_capable_model_s_call_with_a_control_call_s_arguments_runs_its_tool() -> None:
    """`{"reason": ...}` is also `decline`'s whole argument list: a tool that takes
    `reason` is called as written, with no extra LLM call."""
    filed: list[str] = []

    @tool
    def file_ticket(reason: str) -> str:
        """File a support ticket."""
        filed.append(reason)
        return "Ticket 42 filed."

    call = {"reason": "The printer on floor 2 is jammed."}
    turns = [AssistantTurn(tool_calls=[ToolCall(name="file_ticket", arguments=call)])]
    scripted = ScriptedModel([*turns, AssistantTurn(text="Ticket 42 filed.")])
    category = CategoryManager("Help", "The help desk.", [file_ticket], RecoveringModel(scripted))

    result = await category.run("File a ticket for the jammed printer", call["reason"])

    assert filed == [call["reason"]]
    assert result.status == "success" and len(scripted.requests) == 2


@pytest.mark.anyio
async def test_a_short_name_runs_its_tool_in_a_whole_run() -> None:
    read: list[str] = []

    @tool
    def read_file(path: str, start_line: int = 1, max_lines: int = 50) -> str:
        """Read lines of a text file."""
        read.append(path)
        return "beta"

    @tool
    def file_info(path: str) -> str:
        """Size and line count of a file."""
        return "2 lines"

    written = AssistantTurn(text=json.dumps({"name": "read", "arguments": READ_CALL}))
    model = RecoveringModel(ScriptedModel([written, AssistantTurn(text="beta")]))
    category = CategoryManager("Files", "Reads files.", [read_file, file_info], model)

    result = await category.run("read", "notes.txt, line 2")

    assert read == ["notes.txt"]
    assert result.status == "success" and result.summary == "beta"


def test_a_spelling_that_fits_two_offered_tools_or_none_is_not_guessed() -> None:
    both = {"get_user", "GetUser", "calculate"}
    recovery = recover_calls('{"name": "getuser", "arguments": {"id": 1}}', both)
    assert recovery.calls == [] and recovery.problem is not None
    real = AssistantTurn(tool_calls=[ToolCall(name="calc_mul", arguments={"a": 1})])
    assert recover_turn(real, ask("1*2?")) is real


# Written by Qwen2.5-Coder 1.5B as the main agent over 2,009 tools (offered: movies, travel,
# any_category), asked about Star Wars characters: each call an element named after the tool.
ELEMENT_ATTRIBUTES = """<tools>
  <any_category objective="get character details" exact_input="Star Wars character details">
    <arguments>
      <name>movies</name>
    </arguments>
  </any_category>
  <any_category objective="get OTT platforms" exact_input="Star Wars OTT platforms">
    <arguments>
      <name>travel</name>"""
# The same run, asked for a short URL (offered: advertising, tools, any_category).
ELEMENT_CHILDREN = """<tools>
  <objective>create a short URL for the trip plan</objective>
  <exact_input>trip details, domain options</exact_input>
</tools>"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            ELEMENT_ATTRIBUTES,
            [
                ("any_category", "get character details", "Star Wars character details"),
                ("any_category", "get OTT platforms", "Star Wars OTT platforms"),
            ],
        ),
        (
            ELEMENT_CHILDREN,
            [("tools", "create a short URL for the trip plan", "trip details, domain options")],
        ),
        (
            '<Tools objective="shorten a URL" exact_input="example.com/trip" />',
            [("tools", "shorten a URL", "example.com/trip")],
        ),
    ],
    ids=["attributes", "children", "self-closing-other-case"],
)
def test_a_call_written_as_an_element_named_after_the_tool_is_recovered(
    text: str, expected: list[tuple[str, str, str]]
) -> None:
    turn = recover_turn(AssistantTurn(text=text), category_tools("movies", "tools", "any_category"))
    assert [
        (c.name, c.arguments["objective"], c.arguments["exact_input"]) for c in turn.tool_calls
    ] == expected
    assert turn.recovered == len(expected)


@pytest.mark.parametrize(
    "text",
    [
        "Use the <tools> category for that.",
        "<tools><objective>only an objective</objective></tools>",
        '<tools objective="a" exact_input="b" colour="red">',
        '<travel objective="a" exact_input="b">',
        "<movies>\n<title>Star Wars</title>\n</movies>",
    ],
    ids=["a-word", "a-required-key-missing", "an-unknown-key", "not-offered", "data-markup"],
)
def test_an_element_whose_keys_do_not_fit_an_offered_tool_is_text(text: str) -> None:
    turn = recover_turn(AssistantTurn(text=text), category_tools("movies", "tools", "any_category"))
    assert (turn.tool_calls, turn.recovered, turn.unread_call, turn.text) == ([], 0, None, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"exact_input": "Spotify, workout mix' + ", workout mix" * 80, (24, ", workout mix")),
        ("Loading" + "." * 500, (7, ".")),
        ("abc" * 2 + "x" * 300, (6, "x")),
    ],
    ids=["a-phrase", "one-character", "after-a-false-start"],
)
def test_a_reply_repeating_one_piece_to_its_end_is_found_where_the_loop_starts(
    text: str, expected: tuple[int, str]
) -> None:
    assert repetition(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ha " * 30,  # repeated, but over fewer characters than a loop
        "The totals were 10, 20 and 30." * 3,  # too short a run for its period
        "x" * 300 + " and then the answer is 42.",  # the loop ended
        " " * 500,  # only blanks
        "",
    ],
    ids=["short", "repeated-sentence", "loop-ended", "blanks", "empty"],
)
def test_text_that_does_not_end_in_a_loop_has_no_repetition(text: str) -> None:
    assert repetition(text) is None


def test_an_unreadable_call_without_a_loop_is_echoed_whole() -> None:
    turn = AssistantTurn(
        text='{"name": "calculate", "arguments": {"expression": "2 +', unread_call="x"
    )
    told = Guards("small").text("unread_call", problem=sentence("x"))
    echoed, note = nudge(turn, told)
    assert echoed.content == turn.text
    assert note.content.startswith("Your reply looks like a tool call, but it could not be read")


def test_a_reply_that_is_only_a_tool_name_is_answered_as_an_unreadable_call() -> None:
    """Seen with the 1.5B in the demo's files category, after a failed call: "call
    search_files" as its whole reply, and the run ended as if it had answered. Nothing
    runs from it, not even a tool that needs no argument: a tool result may hold the
    words the model copied."""
    today = ToolDefinition(name="today", description="Today's date", parameters={"type": "object"})
    decline = ToolDefinition(
        name="decline",
        description="No tool fits",
        parameters={"type": "object", "properties": {"reason": {}}, "required": ["reason"]},
    )
    request = ask("What is 2 + 3?").model_copy(update={"tools": [ADD_TOOL, today, decline]})
    for said, name in [("call calc_add", "calc_add"), ("`calc_add`", "calc_add"),
                       ("Use calc_add.", "calc_add"), ("call today", "today")]:  # fmt: skip
        turn = recover_turn(AssistantTurn(text=said), request)
        assert (turn.tool_calls, turn.unread_call) == ([], f"it names {name} but is no call"), said
    # The loop's own "call decline" is left to it (it reads the decline).
    left = recover_turn(AssistantTurn(text="call decline"), request)
    assert (left.text, left.tool_calls, left.unread_call) == ("call decline", [], None)
    for answer in ("calc_add is the tool for that", "5", "call me later"):
        assert recover_turn(AssistantTurn(text=answer), request).text == answer
