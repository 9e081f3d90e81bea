"""Guards: the rules that second-guess a model, named, in one place, and switched by a profile.

A *guard* holds a call, replaces an answer, nudges, reroutes or refuses a name.
Each one is a `Guard` record in `GUARDS`: its name, the stage of a round it
acts at, the loop it serves (the category's, the main agent's, or both), what it
does, its budget, and the text it sends the model (a Jinja2 template users may
override with `guards/<name>.j2` in their prompts folder). The code that acts
lives beside the stage it guards; it asks `Guards.on(name)` first, so a guard
that is off costs nothing.

A *profile* says which guards run:

- `capable`: none. A model that does the right thing gets its calls run and its
  answer through unchanged, with no extra model call.
- `small`: every guard. They were added one by one after what Qwen2.5-Coder-1.5B
  got wrong: on the 45 demo tasks it answers 0 right under `capable` (it writes
  its calls as text) and 39 under `small`, at a price for a capable model that
  `tests/capable` lists.

Which profile runs is chosen from the model (`llm.profile.choose_profile`: its
name as configured or as its server reports it, its provider) unless the config's
`guards.profile` or a `guards=` argument says; nothing known means `capable`.

Per-guard `enable`/`disable` lists adjust either profile. Counters live in one
place, `GuardCounts`, one per run (category) or per question (main agent).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jinja2

from .exceptions import ConfigError
from .llm.profile import choice_for_model

__all__ = [
    "GUARDS",
    "PROFILES",
    "Guard",
    "GuardCounts",
    "Guards",
    "ProfileName",
    "Stage",
]

Stage = Literal["reply", "calls", "results", "answer", "names"]
"""Where a guard acts: on the model's reply as read, on the calls it makes, on what
the calls returned, on its answer, or on the names it writes."""
Loop = Literal["category", "main", "router", "both"]
ProfileName = Literal["capable", "small"]


@dataclass(frozen=True, slots=True)
class Guard:
    """One rule that second-guesses the model.

    Attributes:
        name: how configs, traces and docs name it.
        stage: where in a round it acts.
        loop: the loop it serves.
        does: what it does, in one sentence (docs and `meta-tools` listings).
        budget: how often it may act per run or question (0: no limit of its own).
        text: the model-facing text it sends, a Jinja2 template ("" for none).
    """

    name: str
    stage: Stage
    loop: Loop
    does: str
    budget: int = 0
    text: str = ""


GUARDS: tuple[Guard, ...] = (
    Guard(
        "text_calls",
        "reply",
        "both",
        "Reads tool calls written as text (bare JSON, fences, tags) and calls to a near"
        " spelling of an offered tool as the calls they mean; quotes of what the model"
        " read stay text.",
    ),
    Guard(
        "unread_call",
        "reply",
        "both",
        "Answers a reply that looks like a call but cannot be read with a note, so that"
        " the model writes it again.",
        budget=2,
        text="Your reply looks like a tool call, but it could not be read: {{ problem }}"
        " Call one of the offered tools through the tool-calling interface, with its"
        " arguments as a JSON object. If none of them fits, say so in plain text.",
    ),
    Guard(
        "empty_reply",
        "reply",
        "category",
        "Asks again when the model replies nothing before any call has worked.",
        budget=2,
        text="Your reply was empty. Call one of the offered tools through the tool-calling"
        " interface, or reply in plain text.",
    ),
    Guard(
        "told_to_use",
        "reply",
        "main",
        'Runs the category a main-agent reply tells the user to use ("use the `files`'
        ' tool"), or the one a call it could not write names, instead of answering.',
        budget=1,
    ),
    Guard(
        "tool_name_route",
        "names",
        "main",
        "Sends a main-agent call to a tool's name to the category holding it, and one"
        " to an unknown name to the best-ranked category.",
    ),
    Guard(
        "objective_as_name",
        "names",
        "category",
        "Reads an objective written as a name no tool has (`count_words`) in words.",
    ),
    Guard(
        "unfounded_call",
        "calls",
        "category",
        "Holds a call whose values are all made up, to a tool that shares at most one word"
        " with the task; declines when the next round does it again.",
        budget=1,
        text="{{ tool }} was not run: the task gives none of its values ({{ values }})"
        " and says little of what the tool does. If no tool here does the task, call decline."
        " If the task lacks a value a fitting tool needs, call request_input.",
    ),
    Guard(
        "made_up_input",
        "calls",
        "main",
        "Holds a category call whose `exact_input` writes numbers nobody in the conversation gave.",
        text="not run: the user has not given {{ numbers }} (exact_input)."
        " Reply to the user with a question that asks for the missing value,"
        " or call the category with only what the user wrote.",
    ),
    Guard(
        "spread_lists",
        "calls",
        "category",
        "Runs a call that gives lists where its tool takes single values as one call per value.",
    ),
    Guard(
        "round_cap",
        "calls",
        "main",
        "Runs at most `budget` category calls from one main-agent reply; the rest are"
        " answered as not run.",
        budget=4,
        text="not run: at most {{ budget }} category calls run from one reply. Call it again"
        " after reading the results above, if it is still needed.",
    ),
    Guard(
        "repeat_rounds",
        "calls",
        "both",
        "After a round whose calls all repeat earlier successful ones, tells the model to"
        " answer; after two, ends with the results.",
        budget=2,
        text="Those category calls had already been answered: their results are above."
        " Answer the user now.",
    ),
    Guard(
        "found_nothing",
        "results",
        "category",
        "Tells the model when its calls worked but found nothing (empty lists, zeros), and"
        " makes a decline after them a decline, so the router tries the next category.",
    ),
    Guard(
        "hand_up_result",
        "results",
        "category",
        "Hands up the first round's results as the category's answer, without the model"
        " call that would restate them, when every call worked, found something and the"
        " results are short; the model still evaluates a failed, empty or long result.",
    ),
    Guard(
        "hand_on_rest",
        "results",
        "main",
        "Sends the part of a task a category did and declined the rest of (its"
        " `remainder`) to the best-ranked other category, instead of leaving it to the"
        " main agent's model.",
    ),
    Guard(
        "retry_declined",
        "results",
        "router",
        "Runs a call its category declined in the next-ranked category that matches it"
        " (unless `routing.retry_categories` sets how many), so that a wrong first choice"
        " of a small main agent is mended.",
        budget=1,
    ),
    Guard(
        "results_as_answer",
        "results",
        "main",
        "Answers the user with the categories' results when every category call of the"
        " first round succeeded with a short result and left nothing undone, without the"
        " main agent's model call that would restate them.",
    ),
    Guard(
        "each_result",
        "results",
        "main",
        "After two or more category results in a round, asks for the values of each.",
        text="Several categories answered above. If their results answer the user, reply"
        " with the values from each of them.",
    ),
    Guard(
        "echoed_note",
        "answer",
        "category",
        "Takes a reply that copies the loop's own note back (or a question for the user"
        " that does) as no answer, and cuts copied sentences from an answer.",
        text="{{ tool }} was not sent: its question repeats the note you were given, which is"
        " no question for the user. Ask only for a value the task needs and does not"
        " give, or call the tool that does the task, or decline.",
    ),
    Guard(
        "recited_request",
        "answer",
        "category",
        "Replaces an answer that copies the user's request with the results.",
    ),
    Guard(
        "invented_numbers",
        "answer",
        "both",
        "Replaces a short answer about numbers whose numbers no call used or returned with"
        " the results.",
    ),
    Guard(
        "answer_without_results",
        "answer",
        "category",
        "Replaces an answer written after calls that all failed with what failed.",
    ),
)
_BY_NAME: dict[str, Guard] = {guard.name: guard for guard in GUARDS}

PROFILES: dict[str, frozenset[str]] = {
    "capable": frozenset(),
    "small": frozenset(_BY_NAME),
}


@dataclass(slots=True)
class GuardCounts:
    """How often each guard acted in one run or one question: the guards' one counter."""

    counts: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)

    def add(self, name: str) -> int:
        """Count one more act of `name`; the new count."""
        self.counts[name] = self.counts.get(name, 0) + 1
        return self.counts[name]

    def reset(self, name: str) -> None:
        self.counts.pop(name, None)


class Guards:
    """Which guards run, their budgets and their texts.

    Args:
        profile: `capable` (default: no guard) or `small` (every guard).
        enable: guards to run beyond the profile's.
        disable: guards of the profile not to run.
        budgets: per-guard budgets that replace the defaults.
        prompts_dir: a folder whose `guards/<name>.j2` files replace the default texts.

    Raises:
        ConfigError: an unknown profile or guard name (with the known ones).
    """

    __slots__ = ("_budgets", "_enabled", "_texts", "profile", "prompts_dir")

    def __init__(
        self,
        profile: str = "capable",
        *,
        enable: Iterable[str] = (),
        disable: Iterable[str] = (),
        budgets: Mapping[str, int] | None = None,
        prompts_dir: Path | None = None,
    ) -> None:
        enable, disable = list(enable), list(disable)
        budgets = dict(budgets or {})
        problems = []
        if profile not in PROFILES:
            problems.append(
                f"guards.profile: {profile!r} is no profile; use one of {sorted(PROFILES)}"
            )
        for where, names in (("enable", enable), ("disable", disable), ("budgets", budgets)):
            problems += [
                f"guards.{where}: {name!r} is no guard; known: {', '.join(sorted(_BY_NAME))}"
                for name in names
                if name not in _BY_NAME
            ]
        if problems:
            raise ConfigError("guards", problems)
        self.profile = profile
        self._enabled = (PROFILES[profile] | frozenset(enable)) - frozenset(disable)
        self._budgets = {g.name: budgets.get(g.name, g.budget) for g in GUARDS}
        self.prompts_dir = prompts_dir
        self._texts: dict[str, jinja2.Template] = {}

    @classmethod
    def of(cls, value: Guards | str | None) -> Guards:
        """`value` as guards: a `Guards` as it is, a profile's name, or None for the default."""
        if isinstance(value, Guards):
            return value
        return cls(value or "capable")

    @classmethod
    def for_model(cls, model: object) -> Guards:
        """The profile a model client calls for, from its name and where it runs
        (`meta_tools.llm.profile.choose_profile`); `capable` when nothing is known.
        One shared `Guards` a profile: a main agent reads its guards at every step."""
        name = choice_for_model(model).guards
        found = _SHARED.get(name)
        if found is None:
            found = _SHARED[name] = cls(name)
        return found

    @property
    def enabled(self) -> frozenset[str]:
        return self._enabled

    def only(self, stage: Stage) -> Guards:
        """These guards less those of other stages: a flat agent runs the reply stage's."""
        kept = copy.copy(self)
        kept._enabled = frozenset(n for n in self._enabled if _BY_NAME[n].stage == stage)
        kept._texts = {}
        return kept

    def on(self, name: str) -> bool:
        """Whether guard `name` runs."""
        return name in self._enabled

    def budget(self, name: str) -> int:
        return self._budgets[name]

    def within(self, name: str, counts: GuardCounts) -> bool:
        """Whether guard `name` runs and has budget left in `counts`."""
        return name in self._enabled and counts[name] < self._budgets[name]

    def text(self, name: str, **values: Any) -> str:
        """Guard `name`'s text for the model, rendered with `values`."""
        template = self._texts.get(name)
        if template is None:
            template = self._texts[name] = self._load(name)
        return template.render({"budget": self._budgets[name], **values})

    def _load(self, name: str) -> jinja2.Template:
        source = _BY_NAME[name].text
        if self.prompts_dir is not None:
            path = self.prompts_dir / "guards" / f"{name}.j2"
            if path.is_file():
                source = path.read_text(encoding="utf-8").strip()
        try:
            return _ENV.from_string(source)
        except jinja2.TemplateError as exc:
            raise ConfigError(str(self.prompts_dir), [f"guards/{name}.j2: {exc}"]) from None

    def describe(self) -> str:
        """`small`, or `small without hand_up_result` / `capable with text_calls`: the
        profile and the guards added to or taken from it (traces)."""
        base = PROFILES[self.profile]
        added, taken = sorted(self._enabled - base), sorted(base - self._enabled)
        parts = [self.profile]
        if added:
            parts.append(f"with {', '.join(added)}")
        if taken:
            parts.append(f"without {', '.join(taken)}")
        return " ".join(parts)

    def __repr__(self) -> str:
        extra = sorted(self._enabled ^ PROFILES[self.profile])
        return f"Guards({self.profile!r}{f', changed={extra}' if extra else ''})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Guards) and (self._enabled, self._budgets) == (
            other._enabled,
            other._budgets,
        )

    def __hash__(self) -> int:
        return hash(self._enabled)


_SHARED: dict[str, Guards] = {}
"""The default `Guards` of each profile (no prompts folder, no changes), made once."""

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
