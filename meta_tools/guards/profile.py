"""The guards in force: a profile's list of hooks, with their budgets and texts (`Guards`).

A loop hands each stage of a round to `Guards` (`on_reply`, `on_names`,
`on_calls`, `on_results`, `on_answer`), which asks the guards of that stage in
force, in the order of `ALL`, and returns the action to carry out. A profile
with no guards (`capable`) asks nothing: every stage returns at once.

Which profile runs is chosen from the model (`llm.profile.choose_profile`: its
name as configured or as its server reports it, its provider) unless the config's
`guards.profile` or a `guards=` argument says; nothing known means `capable`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import jinja2

from ..exceptions import ConfigError
from ..llm.profile import choice_for_model
from ..llm.types import AssistantTurn, ChatRequest, Message
from .answer import AnswerGuard, AnswerWithoutResults, EchoedNote, InventedNumbers, RecitedRequest
from .base import (
    AskAgain,
    Guard,
    GuardCounts,
    Hold,
    Loop,
    Ran,
    Replace,
    Route,
    RunView,
    Stage,
    Stop,
)
from .calls import CallsGuard, MadeUpInput, RoundCap, UnfoundedCall
from .names import NamesGuard, ObjectiveAsName, SpreadLists, ToolNameRoute
from .note import Note
from .reply import (
    EmptyReply,
    ReplyGuard,
    TextCalls,
    ToldToUse,
    UnreadCall,
    WrittenResult,
    hint_small_profile,
    writes_calls_as_text,
)
from .request import ClearRoute, FewTools
from .results import (
    EachResult,
    FoundNothing,
    HandOnRest,
    HandUpResult,
    RepeatRounds,
    ResultsAsAnswer,
    ResultsGuard,
    RetryDeclined,
)
from .stages import AnswerSeen, CallsSeen, NamesSeen, ReplySeen, ResultsSeen

__all__ = ["ALL", "GUARDS", "PROFILES", "AfterRound", "Guards", "ProfileName", "guard_table"]

ProfileName = Literal["capable", "small"]

ALL: tuple[type[Guard], ...] = (
    FewTools,
    ClearRoute,
    TextCalls,
    UnreadCall,
    WrittenResult,
    EmptyReply,
    ToldToUse,
    ObjectiveAsName,
    ToolNameRoute,
    SpreadLists,
    UnfoundedCall,
    MadeUpInput,
    RoundCap,
    RepeatRounds,
    FoundNothing,
    HandUpResult,
    HandOnRest,
    RetryDeclined,
    ResultsAsAnswer,
    EachResult,
    EchoedNote,
    RecitedRequest,
    InventedNumbers,
    AnswerWithoutResults,
)
"""Every guard, in the order each stage asks them: the one list configs, docs and
listings read."""
GUARDS = ALL
_BY_NAME: dict[str, type[Guard]] = {guard.name: guard for guard in ALL}

PROFILES: dict[str, tuple[type[Guard], ...]] = {
    "capable": (),
    "small": ALL,
}
"""The guards each profile puts in force: `capable` none, `small` every one of them (they
were added one by one after what Qwen2.5-Coder-1.5B got wrong)."""

G = TypeVar("G", bound=Guard)


@dataclass(slots=True)
class AfterRound:
    """What the results stage asks for: stop with the results, route parts of the task,
    and notes to add before the model is asked again."""

    stop: bool = False
    route: Route | None = None
    notes: list[Message] = field(default_factory=list)


class Guards:
    """The guards in force, their budgets and their texts.

    Args:
        profile: `capable` (default: no guard) or `small` (every guard).
        enable: guards to run beyond the profile's.
        disable: guards of the profile not to run.
        budgets: per-guard budgets (how often it may act in a run or question) that
            replace the defaults.
        prompts_dir: a folder whose `guards/<name>.j2` files replace the default texts.

    Raises:
        ConfigError: an unknown profile or guard name (with the known ones).
    """

    __slots__ = ("_all", "_at", "_texts", "budgets", "enabled", "profile", "prompts_dir")

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
        given = dict(budgets or {})
        problems = []
        if profile not in PROFILES:
            problems.append(
                f"guards.profile: {profile!r} is no profile; use one of {sorted(PROFILES)}"
            )
        for where, names in (("enable", enable), ("disable", disable), ("budgets", given)):
            problems += [
                f"guards.{where}: {name!r} is no guard; known: {', '.join(sorted(_BY_NAME))}"
                for name in names
                if name not in _BY_NAME
            ]
        if problems:
            raise ConfigError("guards", problems)
        self.profile = profile
        base = {guard.name for guard in PROFILES[profile]}
        self.enabled = frozenset((base | set(enable)) - set(disable))
        self.budgets = {g.name: given.get(g.name, g.budget) for g in ALL}
        self.prompts_dir = prompts_dir
        self._texts: dict[str, jinja2.Template] = {}
        self._all = {g.name: g(self.budgets[g.name], self._sayer(g.name)) for g in ALL}
        self._at: dict[Stage, tuple[Guard, ...]] = {}
        for guard in ALL:
            if guard.name in self.enabled:
                self._at[guard.stage] = (*self._at.get(guard.stage, ()), self._all[guard.name])

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
    def hooks(self) -> tuple[Guard, ...]:
        """The guards in force, in the order they are asked."""
        return tuple(g for stage in self._at.values() for g in stage)

    def acts_at(self, stage: Stage) -> bool:
        """Whether a guard of `stage` is in force (a loop builds the stage's record only then)."""
        return stage in self._at

    def _in_force(self, kind: type[G]) -> G | None:
        guard = self._all[kind.name]
        return guard if kind.name in self.enabled and isinstance(guard, kind) else None

    def _asked(self, stage: Stage, loop: Loop) -> Iterable[Guard]:
        return (g for g in self._at.get(stage, ()) if loop in g.loops)

    # -- the stages -------------------------------------------------------------------

    def objective(self, objective: str, tools: Iterable[str]) -> str:
        """The objective a category run starts with (the names stage, before the first request)."""
        for guard in self._asked("names", "category"):
            assert isinstance(guard, NamesGuard)
            objective = guard.on_task(objective, tools)
        return objective

    async def read_reply(
        self, reply: AssistantTurn, request: ChatRequest, loop: Loop
    ) -> AssistantTurn:
        """The reply as read (guard `text_calls`), with no note and no route: a summary's."""
        reading = self._in_force(TextCalls)
        if reading is None or loop not in reading.loops:
            self.unread(reply)
            return reply
        seen = ReplySeen(loop, reply, request, GuardCounts())  # reading sends no note
        action = await reading.on_reply(seen)
        return action.reply if isinstance(action, Replace) and action.reply else reply

    def unread(self, reply: AssistantTurn) -> None:
        """A reply no guard reads: when it looks like a call written as text, say once that
        a small model's profile would read it (guard `text_calls`)."""
        if writes_calls_as_text(reply):
            hint_small_profile()

    async def on_reply(self, seen: ReplySeen) -> AskAgain | Route | None:
        """The reply stage: `seen.reply` becomes the reply as read; the note that answers a
        reply the model did not mean, or the route a reply tells the user to take."""
        if self._in_force(TextCalls) is None:
            self.unread(seen.reply)
        for guard in self._asked("reply", seen.loop):
            assert isinstance(guard, ReplyGuard)
            action = await guard.on_reply(seen)
            if isinstance(action, Replace) and action.reply is not None:
                seen.reply = action.reply
            elif isinstance(action, AskAgain | Route):
                return action
        return None

    def on_names(self, seen: NamesSeen) -> AssistantTurn:
        """The names stage: the reply with its calls named as they mean."""
        for guard in self._asked("names", seen.loop):
            assert isinstance(guard, NamesGuard)
            action = guard.on_names(seen)
            if isinstance(action, Replace) and action.reply is not None:
                seen.reply = action.reply
            elif isinstance(action, Replace) and action.calls is not None:
                seen.reply = seen.reply.model_copy(update={"tool_calls": action.calls})
        return seen.reply

    async def on_calls(self, seen: CallsSeen) -> Hold | Stop | None:
        """The calls stage: the calls held with why, or a stop (a category declines)."""
        held: dict[str, str] = {}
        for guard in (*self._asked("names", seen.loop), *self._asked("calls", seen.loop)):
            if isinstance(guard, CallsGuard):
                action = await guard.on_calls(seen)
            else:  # a names guard's holds: calls it will not route (`tool_name_route`)
                assert isinstance(guard, NamesGuard)
                action = guard.on_calls(seen)
            if isinstance(action, Stop):
                return action
            if isinstance(action, Hold):
                held |= {k: v for k, v in action.notes.items() if k not in held}
        return Hold(held) if held else None

    def on_results(self, seen: ResultsSeen) -> AfterRound:
        """The results stage: every guard of it is asked (each keeps its own count)."""
        after = AfterRound()
        for guard in self._asked("results", seen.loop):
            assert isinstance(guard, ResultsGuard)
            action = guard.on_results(seen)
            if isinstance(action, Stop):
                after.stop = True
            elif isinstance(action, Route):
                after.route = action
                seen.new_results += len(action.legs)  # the parts handed on answer too
            elif isinstance(action, AskAgain):
                after.notes.extend(action.messages)
        return after

    def on_answer(self, seen: AnswerSeen) -> Replace | Stop | None:
        """The answer stage: the first guard that replaces the answer, if any."""
        for guard in self._asked("answer", seen.loop):
            assert isinstance(guard, AnswerGuard)
            action = guard.on_answer(seen)
            if isinstance(action, Replace | Stop):
                return action
        return None

    def found_nothing(self, executions: Sequence[Ran]) -> list[str]:
        """The tools whose calls worked and found nothing, when none found anything (guard
        `found_nothing`; [] when it is not in force)."""
        return FoundNothing.found(executions) if self._in_force(FoundNothing) else []

    async def own_note(self, run: RunView) -> tuple[Note, str]:
        """The loop's own last message as the reply is compared with it, and the text that
        answers a question copied from it (guard `echoed_note`; nothing when not in force)."""
        echoed = self._in_force(EchoedNote)
        if echoed is None:
            return _NO_NOTE, ""
        return await echoed.own_note(run), echoed.say(tool="request_input")

    def tools_a_call(self, category_tools: int) -> int | None:
        """At most how many tools a request of a category of `category_tools` tools
        offers (guard `few_tools`), or None for the category's own limits."""
        guard = self._in_force(FewTools)
        if guard is None or category_tools <= guard.whole:
            return None
        return guard.tools_a_call

    def routes_first(self) -> bool:
        """Whether a main agent runs the one category the ranking offers it for a
        conversation's first message before asking its model (guard `clear_route`)."""
        return self._in_force(ClearRoute) is not None

    def retry_only_above(self, searched: bool) -> bool:
        """Whether a decline is retried only in a category ranked above the one first
        asked (guard `retry_declined`): yes, unless a call there worked and found
        nothing (`searched`: its data lacks the task's, any other category may hold it)."""
        return self._in_force(RetryDeclined) is not None and not searched

    def retries(self) -> int:
        """How many other categories a declined call is tried in (guard `retry_declined`)."""
        guard = self._in_force(RetryDeclined)
        return 0 if guard is None else guard.limit or 0

    def text(self, kind: type[Guard] | str, **values: Any) -> str:
        """The text of guard `kind` (its class or name), in force or not (the main agent's
        cap on a reply's calls says why with `round_cap`'s), rendered with `values`."""
        return self._all[kind if isinstance(kind, str) else kind.name].say(**values)

    # -- texts, descriptions ------------------------------------------------------------

    def _sayer(self, name: str) -> Any:
        def say(**values: Any) -> str:
            template = self._texts.get(name)
            if template is None:
                template = self._texts[name] = self._load(name)
            return template.render({"budget": self.budgets[name], **values})

        return say

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
        base = {g.name for g in PROFILES[self.profile]}
        added, taken = sorted(self.enabled - base), sorted(base - self.enabled)
        parts = [self.profile]
        if added:
            parts.append(f"with {', '.join(added)}")
        if taken:
            parts.append(f"without {', '.join(taken)}")
        return " ".join(parts)

    def __repr__(self) -> str:
        extra = sorted(self.enabled ^ {g.name for g in PROFILES[self.profile]})
        return f"Guards({self.profile!r}{f', changed={extra}' if extra else ''})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Guards) and (self.enabled, self.budgets) == (
            other.enabled,
            other.budgets,
        )

    def __hash__(self) -> int:
        return hash(self.enabled)


_SHARED: dict[str, Guards] = {}
"""The default `Guards` of each profile (no prompts folder, no changes), made once."""

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


def guard_table() -> str:
    """Every guard as a Markdown table (the guards page shows it): name, stage, the loops
    it serves, its budget, what it does."""
    rows = [
        "| guard | stage | loop | budget | what it does |",
        "|---|---|---|---|---|",
        *(
            f"| `{g.name}` | {g.stage} | {', '.join(sorted(g.loops))} |"
            f" {'—' if g.budget is None else g.budget} | {g.does} |"
            for g in ALL
        ),
    ]
    return "\n".join(rows)


_NO_NOTE = Note()
