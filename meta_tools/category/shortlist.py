"""The tool shortlist: which of a large category's tools one LLM call is offered.

A category with more tools than `max_tools` (or more schema text than
`max_chars`) offers each call only the best matches for the objective and exact
input, plus its pinned tools and the tools this run already used. Ranking is
lexical (BM25 via `bm25s`) over each tool's name split into words, its
description and its parameter names, smoothed by the tool's service (`ServiceIndex`);
any `ToolIndex` can replace it (the benchmarks compare an embedding index,
`benchmarks/embeddings.py`).

An abstain threshold lets the shortlist say that nothing fits: when the best
tools cover less than `abstain_below` of the objective's IDF-weighted words,
no ranked tool is offered, so the category declines instead of forcing one.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..exceptions import ConfigError
from ..support.terms import analyze
from ..tools.base import BaseTool, tool_document
from .limits import LIMITS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "Bm25Index",
    "Selection",
    "ServiceIndex",
    "Shortlist",
    "ShortlistPolicy",
    "ToolIndex",
    "analyze",
    "check_pinned",
    "service",
    "tool_document",
    "tool_terms",
]


def schema_chars(tool: BaseTool) -> int:
    """The characters of a tool's definition as the LLM is sent it (what `max_chars` limits)."""
    return len(json.dumps(tool.openai_schema(), ensure_ascii=False))


# A version suffix (`Currency_Converter_v3`, `Analyze_V2`, `/v1/`) and an initialism written
# with slashes or dots (`K/D`, `P/E`, `U.S.`): `analyze` would part them into letters and
# numbers (`v`, `3`), which match any number or letter of a request.
_VERSION = re.compile(r"(?<![A-Za-z0-9])[vV]([0-9]+)(?![A-Za-z0-9])")
_INITIALISM = re.compile(r"(?<![A-Za-z0-9/.])[A-Za-z](?:[/.][A-Za-z])+\.?(?![A-Za-z0-9])")


def tool_terms(text: str) -> list[str]:
    """`analyze`'s terms, with a version (`v3`) and an initialism (`K/D` -> `kd`) kept whole.

    Neighbouring tools often differ only there (`Currency_Converter_v2`, `..._v3`; a `kd
    calculator`), so a request's `v3` or `K/D` must match that tool, and `convert 2 EUR`
    must not match `v2`.
    """
    whole: list[str] = []

    def keep(match: re.Match[str]) -> str:
        whole.append(re.sub(r"[/.]", "", match.group()).lower())
        return " "

    rest = _INITIALISM.sub(keep, _VERSION.sub(keep, text))
    return analyze(rest) + whole


def service(name: str) -> str:
    """The service a tool's name is prefixed with (`Currency_Converter_v2__Convert` ->
    `Currency_Converter_v2`); '' for a name without one."""
    prefix, found, _ = name.rpartition("__")
    return prefix if found else ""


class ToolIndex(Protocol):
    """Scores each indexed document against a query: higher is better."""

    def scores(self, query: str) -> Sequence[float] | npt.NDArray[Any]: ...


class Bm25Index:
    """BM25 (Lucene variant, `bm25s`) over documents read by `terms` (`analyze`); built once.

    Also keeps document frequencies, so `coverage` can say how much of a
    query's IDF weight a document contains (the abstain signal).
    """

    def __init__(
        self,
        documents: Sequence[str],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        terms: Callable[[str], list[str]] = analyze,
    ) -> None:
        import bm25s  # type: ignore[import-untyped]  # 0.2 s, paid only when a shortlist is needed

        self._analyze = terms
        self._terms = [terms(doc) for doc in documents]
        self._count = len(documents)
        self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._vocab: dict[str, int] = {}
        if documents:  # bm25s cannot index nothing (a category whose server listed no tools)
            # bm25s needs at least one term per document; "" is its own empty-document token.
            self._bm25.index([found or [""] for found in self._terms], show_progress=False)
            self._vocab = self._bm25.vocab_dict
        frequencies: Counter[str] = Counter()
        for found in self._terms:
            frequencies.update(set(found))
        self._df = frequencies
        self._term_sets = [frozenset(found) for found in self._terms]

    def __len__(self) -> int:
        return self._count

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        import numpy as np

        ids = [self._vocab[t] for t in dict.fromkeys(self._analyze(query)) if t in self._vocab]
        if not ids:
            return np.zeros(self._count, dtype=np.float32)
        result: npt.NDArray[np.float32] = self._bm25.get_scores_from_ids(ids)
        return result

    def idf(self, term: str) -> float:
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._count - df + 0.5) / (df + 0.5))

    def distinct_terms(self, documents: Iterable[int]) -> int:
        """How many different terms `documents` hold together (a set of tools' vocabulary)."""
        return len(frozenset[str]().union(*(self._term_sets[doc] for doc in documents)))

    def coverage(self, query: str, documents: Iterable[int]) -> float | None:
        """The largest share of the query's IDF weight found in one of `documents` (0..1).

        None when the query has no content words (nothing to judge by).
        """
        terms = set(self._analyze(query))
        if not terms:
            return None
        total = sum(self.idf(t) for t in terms)
        best = 0.0
        for doc in documents:
            found = sum(self.idf(t) for t in terms & self._term_sets[doc])
            best = max(best, found / total)
        return best


class ServiceIndex(Bm25Index):
    """BM25 over tools (`tool_document`, `tool_terms`), each tool's score smoothed with its
    service's: the score of all the service's tools as one document.

    A tool whose own text is thin (`Summary`, `Search by name`, no description) is found
    through its siblings when the request is about their service: tools of one service
    work together (a search and its details), and a request that needs one often needs
    another. The service scores are scaled so that the query's best of them is `weight`
    times its best own score: `weight` means the same for every query, and the result
    stays on the scale of a BM25 score. The service documents are fully normalised for
    length (BM25 b = 1): a service of 30 tools must not match by its size alone. With no
    service prefix in the tools' names, a tool is scored by its own text only.

    On the tuning part of the StableToolBench split, each gold tool ranked within its own
    category (`python -m benchmarks.recall --split tune`): Recall@20 0.954 -> 0.962 and
    Recall@10 0.908 -> 0.918, weight 0.5.
    """

    def __init__(self, tools: Sequence[BaseTool], *, weight: float = 0.5) -> None:
        import numpy as np

        super().__init__([tool_document(t) for t in tools], terms=tool_terms)
        names = [service(t.name) for t in tools]
        self.weight = weight
        self._services: Bm25Index | None = None
        self._service_of: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)
        if any(names):
            # A tool with no service prefix is a service of its own (keyed by its position).
            keys: list[str | int] = [name or position for position, name in enumerate(names)]
            grouped: dict[str | int, list[str]] = {}
            for key, tool in zip(keys, tools, strict=True):
                grouped.setdefault(key, []).append(tool_document(tool))
            number = {key: i for i, key in enumerate(grouped)}
            self._service_of = np.asarray([number[key] for key in keys], dtype=np.intp)
            documents = [" ".join(texts) for texts in grouped.values()]
            self._services = Bm25Index(documents, b=1.0, terms=tool_terms)

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        own = super().scores(query)
        if self._services is None or not self.weight or not len(own):
            return own
        by_service = self._services.scores(query)[self._service_of]
        best_own, best_service = float(own.max()), float(by_service.max())
        if best_own <= 0 or best_service <= 0:
            return own
        # The service's scores on the scale of the tools' own, so that the result stays a
        # BM25 score of the query (comparable across queries, as the raw one is).
        result: npt.NDArray[np.float32] = own + (self.weight * best_own / best_service) * by_service
        return result


@dataclass(frozen=True, slots=True)
class Selection:
    """The tools offered to one LLM call.

    `abstained` is True when no ranked tool was good enough (only pinned and
    used tools are offered then; with none of those, the category declines).
    `coverage` is the abstain signal that was compared with the threshold.
    """

    tools: list[BaseTool]
    abstained: bool = False
    coverage: float | None = None


class Shortlist:
    """Chooses the tools of one category to offer per call; the index is built once.

    Args:
        tools: the category's tools, in their configured order.
        max_tools: at most this many tool definitions per call.
        max_chars: at most this many characters of tool definitions per call
            (the best-ranked tool is always offered, whatever its size).
        pinned: names always offered (first, in this order).
        abstain_below: decline when the best matches cover less than this
            share (0..1) of the objective's IDF-weighted words; None never abstains.
        index: a prebuilt index over `tools`, in their order (`ServiceIndex` when omitted).
    """

    def __init__(
        self,
        tools: Sequence[BaseTool],
        *,
        max_tools: int = LIMITS.max_tools_per_prompt,
        max_chars: int | None = None,
        pinned: Sequence[str] = (),
        abstain_below: float | None = None,
        index: ToolIndex | None = None,
    ) -> None:
        self.tools = list(tools)
        self.max_tools = max_tools
        self.max_chars = max_chars
        self.abstain_below = abstain_below
        self._position = {t.name: i for i, t in enumerate(self.tools)}
        check_pinned(pinned, self._position, owner="shortlist")
        self.pinned = list(pinned)
        self.sizes = [schema_chars(t) for t in self.tools]
        self.index: ToolIndex = index or ServiceIndex(self.tools)

    def __repr__(self) -> str:
        return f"<Shortlist tools={len(self.tools)} max_tools={self.max_tools}>"

    @staticmethod
    def needed(tools: Sequence[BaseTool], *, max_tools: int, max_chars: int | None) -> bool:
        """Whether offering every tool would pass a limit (else no shortlist is built)."""
        if len(tools) > max_tools:
            return True
        if max_chars is None:
            return False
        return sum(map(schema_chars, tools)) > max_chars

    def rank(self, query: str) -> list[int]:
        """Positions of all tools, best first; ties keep the configured order."""
        scores = self.index.scores(query)
        return sorted(range(len(self.tools)), key=lambda i: -float(scores[i]))

    def matched(self, objective: str, exact_input: str, *, request: str = "") -> int:
        """How many tools the task's words reach: a score above 0 for the objective and
        input, or for the user's request."""
        task = self.index.scores(f"{objective}\n{exact_input}")
        asked = self.index.scores(request) if request.strip() else task
        return sum(1 for a, b in zip(task, asked, strict=True) if a > 0 or b > 0)

    def select(
        self,
        objective: str,
        exact_input: str,
        *,
        request: str = "",
        used: Sequence[str] = (),
        withdrawn: Sequence[str] = (),
    ) -> Selection:
        """The tools for one call: pinned, then used, then the best matches, within the limits.

        With the user's `request`, the best matches for the request and those for the
        objective and input take turns, the request's first: each keeps its best few,
        and the long request cannot crowd out the objective's words (nor the objective
        drop the request's). The request leads because a main agent's paraphrase drops
        the words that tell neighbouring tools apart: on the tuning part of the
        StableToolBench split, with a six-word paraphrase, the first tool offered was
        the gold one for 0.76 of query-category pairs against 0.41 with the paraphrase
        leading (`python -m benchmarks.recall --weighing --split tune`).
        The result is ordered pinned first, then by rank, so that consecutive
        rounds of a run see the same list in the same order.
        """
        order = self.rank(f"{objective}\n{exact_input}")
        if request.strip():
            order = alternate(self.rank(request), order)
        coverage: float | None = None
        abstained = False
        if self.abstain_below is not None and isinstance(self.index, Bm25Index):
            coverage = self.index.coverage(objective, order[:5])
            abstained = coverage is not None and coverage < self.abstain_below
        blocked = set(withdrawn)
        chosen: list[int] = []
        seen: set[int] = set()
        chars = 0

        def take(position: int, *, forced: bool) -> None:
            nonlocal chars
            if position in seen or self.tools[position].name in blocked:
                return
            if len(chosen) >= self.max_tools and not forced:
                return
            size = self.sizes[position]
            over_budget = self.max_chars is not None and chars + size > self.max_chars
            if over_budget and chosen and not forced:
                return
            chosen.append(position)
            seen.add(position)
            chars += size

        for name in self.pinned:
            take(self._position[name], forced=True)
        for name in used:
            if name in self._position:
                take(self._position[name], forced=True)
        if not abstained:
            for position in order:
                if len(chosen) >= self.max_tools:
                    break
                take(position, forced=False)
        pinned_count = sum(1 for name in self.pinned if name not in blocked)
        rank_of = {position: r for r, position in enumerate(order)}
        rest = sorted(chosen[pinned_count:], key=rank_of.__getitem__)
        tools = [self.tools[p] for p in chosen[:pinned_count] + rest]
        return Selection(tools, abstained, coverage)


def alternate(first: Sequence[int], second: Sequence[int]) -> list[int]:
    """The items of two rankings taking turns, first's first, each item once."""
    merged = dict.fromkeys(item for pair in zip(first, second, strict=True) for item in pair)
    return list(merged)


def check_pinned(pinned: Iterable[str], names: Container[str], *, owner: str) -> None:
    """Raise unless every pinned name is one of `names`.

    Raises:
        ConfigError: naming each pinned tool that is missing, under `owner`.
    """
    unknown = [name for name in pinned if name not in names]
    if unknown:
        raise ConfigError(owner, [f"pinned tool {n!r} is not one of its tools" for n in unknown])


@dataclass(frozen=True, slots=True)
class ShortlistPolicy:
    """When a category offers a `Shortlist` instead of all its tools, and with which limits.

    A shortlist is built when the tools pass `max_tools` or `max_chars`, or
    when `abstain_below` is set (abstaining needs the index); see `Shortlist`.
    """

    max_tools: int = LIMITS.max_tools_per_prompt
    max_chars: int | None = None
    pinned: tuple[str, ...] = ()
    abstain_below: float | None = None

    def build(self, tools: Sequence[BaseTool], *, owner: str) -> Shortlist | None:
        """A shortlist over `tools`, or None when every call may offer them all.

        Raises:
            ConfigError: a pinned tool is not among `tools` (`owner` says whose they are).
        """
        check_pinned(self.pinned, {t.name for t in tools}, owner=owner)
        if self.abstain_below is None and not Shortlist.needed(
            tools, max_tools=self.max_tools, max_chars=self.max_chars
        ):
            return None
        return self.shortlist(tools)

    def shortlist(self, tools: Sequence[BaseTool], *, index: ToolIndex | None = None) -> Shortlist:
        """A shortlist over `tools` with these limits, on `index` when one is built."""
        return Shortlist(
            tools,
            max_tools=self.max_tools,
            max_chars=self.max_chars,
            pinned=self.pinned,
            abstain_below=self.abstain_below,
            index=index,
        )
