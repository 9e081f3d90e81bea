"""What the guards read of a run: what its calls found, and what its answer says.

Plain functions of a run's data (`base.RunView`, `base.Ran`) and of text: the
category's and the main agent's guards decide with them, and the loops write a
run's results with them (`results_so_far`, `nothing_worked`, `done_so_far`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..support.numbers import count_words, is_held, number_values, read_numbers
from ..support.suggest import squashed
from ..support.terms import tool_words
from ..support.text import TRUNCATED, truncate
from .base import Ran, RunView

__all__ = [
    "HAND_UP_CHARS",
    "done_so_far",
    "found_nothing",
    "hands_up",
    "in_parts",
    "in_steps",
    "invents_numbers",
    "leaves",
    "nothing_found",
    "nothing_worked",
    "objective_in_words",
    "recites_request",
    "results_so_far",
    "unfinished",
]

#: A result longer than this holds something: `found_nothing` never parses it.
_NOTHING_CHARS = 4096
#: Texts that say how a call went, not what it found (`{"status": "ok", "items": []}`).
_STATUS_WORDS = frozenset(
    {"", "ok", "success", "succeeded", "done", "none", "null", "empty", "not found"}
    | {"no results", "no results found", "no matches", "no matches found", "nothing found"}
)

#: Keys whose empty lists say that nothing went wrong.
_PROBLEM_KEYS = frozenset(
    {"errors", "error", "warnings", "failures", "failed", "issues", "problems"}
)


def found_nothing(result: str | None, arguments: dict[str, Any] | str = "") -> bool:
    """Whether a tool's result is JSON whose lists and objects are all empty, whose
    numbers are all 0 and whose texts only repeat the call's `arguments`:
    `[]`, `{"query": "line 1", "total_matches": 0, "matches": []}` for query "line 1".

    A search that found nothing has not answered a task that asked for what it would
    find. Seen with the 1.5B on demo x4: sent "find line 1 of notes.txt" to the text
    category, it searched the text "notes.txt", found no match, and answered "line 1".
    A result with no list (`{"words": 0}`, `{}`, no text: an action's "done") is a
    finding, and so is a text the call was not given other than a status ("ok")
    (demo d3: `shift_date` gave `{"result": "2025-04-15", ..., "notes": []}`).
    """
    if not result or len(result) > _NOTHING_CHARS:
        return False
    try:
        value = json.loads(result)
    except ValueError:
        return False
    given = {_plain(str(value)) for value in leaves(arguments)}
    return isinstance(value, list | dict) and _holds_nothing(value, given)


def _holds_nothing(value: Any, given: set[str]) -> bool:
    if isinstance(value, list):
        return not value
    if isinstance(value, dict):
        # An empty list of errors is good news, not an empty finding: an action that
        # reports `{"status": "ok", "errors": []}` has done what it was asked.
        inner = [
            v
            for k, v in value.items()
            if isinstance(v, list | dict) and str(k).casefold() not in _PROBLEM_KEYS
        ]
        numbers = [
            v for v in value.values() if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        said = [v for v in value.values() if isinstance(v, str) and not _echo(v, given)]
        nothing_inside = all(_holds_nothing(v, given) for v in inner)
        return bool(inner) and nothing_inside and not any(numbers) and not said
    return False


def leaves(value: Any) -> Iterator[Any]:
    """The values inside a JSON value (a call's arguments), at any depth: its texts that
    are not blank and its numbers; no booleans and no nulls."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    elif str(value).strip():
        yield value


def _plain(text: str) -> str:
    """A text as an echo is compared: the path marks around it do not count (the
    call's folder `data/` comes back as `data`)."""
    return text.strip().strip("./")


def _echo(text: str, given: set[str]) -> bool:
    """Whether a result's text repeats the call's arguments or says only how it went."""
    status = " ".join(text.replace("_", " ").replace("-", " ").casefold().split()).rstrip(".")
    return _plain(text) in given or status in _STATUS_WORDS


def nothing_found(executions: Sequence[Ran]) -> list[str]:
    """The tools whose calls worked and found nothing, when no call found anything."""
    worked = [e for e in executions if e.ok]
    if not worked or not all(found_nothing(e.result, e.arguments) for e in worked):
        return []
    return list(dict.fromkeys(e.tool for e in worked))


def done_so_far(state: RunView) -> str:
    """Which tools the run called and whether each call worked, for a summary without one."""
    if not state.executions:
        return "No tool was run."
    parts = [f"{e.tool}: {'ok' if e.ok else 'failed'}" for e in state.executions]
    return "Tool calls so far: " + "; ".join(parts)


def nothing_worked(state: RunView) -> str:
    """The summary of a run none of whose calls worked or found anything: each call and
    its error, or that it found nothing."""
    said = [
        f"{e.tool}: {'found nothing' if e.ok else truncate(e.error or 'failed', 300)}"
        for e in state.executions
    ]
    head = "No tool call found anything. " if state.has_results else "No tool call worked. "
    return head + ("; ".join(said) if said else "No tool was run.")


def results_so_far(state: RunView) -> str:
    """The results of the run's successful calls, one a line (else `done_so_far`)."""
    ok = [e for e in state.executions if e.ok]
    return "\n".join(dict.fromkeys(f"{e.tool}: {e.result}" for e in ok)) or done_so_far(state)


#: The longest results a category hands up as its answer without a model call (guard
#: `hand_up_result`): longer ones are summarised by the model, so a host gets a compact result.
HAND_UP_CHARS = 1500

#: A result that says the work is still going (a build "running", a job "queued"): not
#: the answer yet. A word used otherwise only costs the model call that evaluates it.
_IN_PROGRESS = re.compile(
    r"\b(running|pending|queued|in[ _-]progress|processing|waiting|not (yet )?(done|finished|complete))\b",
    re.IGNORECASE,
)
#: A task in steps ("find the config file, then read it"): the first round did one.
_STEPS = re.compile(
    r"\b(then|after that|afterwards|followed by|once (it|that|done)|finally|and also)\b",
    re.IGNORECASE,
)
#: A request in parts ("What weekday is it, and what is 365 * 24?", "Convert 4 miles to
#: km, and count the sentences in ..."): one call may have done only one of them.
_PARTS = re.compile(
    r"(,\s*and|;|\balso)\s+(what|how|which|when|where|who|tell|give|show|find|get|list"
    r"|count|convert|calculate|compute|send|check|read|look)\b",
    re.IGNORECASE,
)


def unfinished(text: str) -> bool:
    """Whether a result says the work is still going (a status to poll again)."""
    return _IN_PROGRESS.search(text) is not None


def in_steps(task: str) -> bool:
    """Whether a task says it has steps after the first ("..., then ...")."""
    return _STEPS.search(task) is not None


def in_parts(request: str) -> bool:
    """Whether a request asks for more than one thing: steps, or parts joined by a comma
    and "and" ("..., and what is ...?"). Two sentences may be one task ("Where is my
    parcel? Track it."): they are not read as parts."""
    return in_steps(request) or _PARTS.search(request) is not None


def hands_up(state: RunView) -> bool:
    """Whether the first round's results are the run's answer as they are: every call of
    it worked, each found something, none was cut, and together they are short
    (`HAND_UP_CHARS`), none says the work is still going, and the task is not one in
    steps. A failed, empty, long or unfinished result goes to the model to evaluate."""
    if state.iteration != 1 or not state.executions:
        return False
    if not all(e.ok and e.round == 1 for e in state.executions):
        return False
    if any(found_nothing(e.result, e.arguments) for e in state.executions):
        return False
    if any(TRUNCATED in (e.result or "") for e in state.executions):
        return False
    if any(unfinished(e.result or "") for e in state.executions):
        return False  # a status poll: the model decides whether to ask again
    if in_steps(f"{state.objective}\n{state.exact_input}\n{state.request}"):
        return False  # the next step may need these results
    return len(results_so_far(state)) <= HAND_UP_CHARS


def invents_numbers(answer: str, found: str) -> bool:
    """Whether a short answer about numbers gives none that `found` (the calls made and
    what they returned) holds: made up or copied from the task, where the results are
    the answer.

    A number holds when it is a found one at the answer's precision ("3.33" for
    3.3333, "5" for "05"), or a found fraction as a percentage ("25" for 0.25), in any
    way people write it (`_numbers`: `1,234.56`, `848,55`, `$4.82 million`). One
    worked out from the results ("744" hours from 31 days) is not held: a small
    model's arithmetic is what this guards against (guard `invented_numbers`, small
    models only). Seen with the 1.5B on "days from 2025-01-01 to 2025-02-01, multiplied
    by 24", given 31 days: "24" (a category's), "23" (the main agent's); on "whole
    weeks from 2025-01-01 to 2025-12-31", given 52 weeks: "5".
    """
    if count_words(answer) > _SHORT_ANSWER_WORDS:
        return False
    said = read_numbers(answer)
    if not said:
        return False
    values = number_values(found)
    return not any(is_held(n, values) for n in said)


#: Words besides its numbers that an answer "about numbers" has at most.
_SHORT_ANSWER_WORDS = 4


def recites_request(text: str, request: str) -> bool:
    """Whether an answer copies the user's request instead of answering.

    Seen with the 1.5B: asked for its answer after a tool worked, it wrote the
    request back, as it was put to it.
    """
    return len(request) >= 40 and request[:80] in text  # a short request may be quoted


#: A name-like objective: one word with `_`, in camelCase, or with a digit inside letters.
_NAME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,63}")
_NAME_MARK = re.compile(r"_|^[a-z]+[A-Z]|[A-Za-z][0-9]+[A-Za-z]")


def objective_in_words(objective: str, tools: Iterable[str]) -> str:
    """An objective written as a name that none of `tools` has, in words (`count_words` is
    `count words`, `dna2protein` is `dna 2 protein`); any other objective as it is.

    Seen with the 1.5B: the main agent's objective was a name of its own (`count_words`
    on the demo; over 2,009 tools the service name `dna2protein`), and the category's
    model called that name as a tool, was told it is not offered, and declined. A
    tool's own name stays: it says which tool to call.
    """
    text = objective.strip()
    if not (_NAME_LIKE.fullmatch(text) and _NAME_MARK.search(text)):
        return objective
    key = squashed(text)
    if any(key in (squashed(name), squashed(name.rsplit("__", 1)[-1])) for name in tools):
        return objective
    return tool_words(text)
