"""The loop's own last message as the model's reply is compared with it (guard `echoed_note`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Note"]

_WORDS = re.compile(r"[^\W_]+")


#: Words in a row that make a copy rather than a shared phrase ("the task needs").
_QUOTED_RUN = 8
# A sentence the model wrote that is this many words of the note in a row is a copy.
_ECHOED_SENTENCE = 3
_SENTENCE_END = re.compile(r"[.!?](?:\s+|$)")


@dataclass(frozen=True, slots=True)
class Note:
    """The loop's own last message, which the model's reply answers, as its words.

    Small models copy it back instead of replying. The task the note quotes is cut
    out, word by word: a reply may repeat the task's words ("San Diego, CA").
    """

    words: str = " "  # space-padded, lower case; "|" where a quoted task was cut out

    @classmethod
    def of(cls, text: str, task: Sequence[str] = ()) -> Note:
        words = f" {' '.join(_WORDS.findall(text.lower()))} "
        for quoted in task:
            run = _WORDS.findall(quoted.lower())
            if run:
                words = words.replace(f" {' '.join(run)} ", " | ")
        return cls(words)

    def _holds(self, said: Sequence[str], length: int) -> bool:
        """Whether `length` words of `said` in a row are words of the note in a row."""
        return any(
            f" {' '.join(said[i : i + length])} " in self.words
            for i in range(len(said) - length + 1)
        )

    def echoed_by(self, answer: str) -> bool:
        """Whether `answer` is a phrase of the note, copied back.

        Seen with the 1.5B after a round, replying with a bullet of the evaluation
        prompt: "call decline" (8 times over four runs' logs), "The task is still
        open." (3), "The results answer the task." (2). Fewer than two words that are
        not numbers ("Thursday", "2 of 3") are an answer.
        """
        said = _WORDS.findall(answer.lower())
        named = [w for w in said if not w.isdigit()]
        return len(named) >= 2 and len(said) <= 12 and self._holds(said, len(said))

    def cut_from(self, answer: str) -> str:
        """`answer` without the sentences it opens with that are copied from the note.

        Seen with the 1.5B over the large catalog: "The results answer the task: reply
        now with the answer in plain text, giving the values the results found. The top
        250 movies ..." A sentence of fewer than `_ECHOED_SENTENCE` words stays.
        """
        rest = answer.strip()
        while end := _SENTENCE_END.search(rest):
            said = _WORDS.findall(rest[: end.start()].lower())
            named = [w for w in said if not w.isdigit()]
            if len(named) < _ECHOED_SENTENCE or not self._holds(said, len(said)):
                break
            rest = rest[end.end() :]
        return rest

    def quoted_in(self, text: str) -> bool:
        """Whether `text` copies `_QUOTED_RUN` words of the note in a row.

        Seen with the 1.5B over BFCL's pooled functions: nudged after a call to a
        tool that is not offered, it called `request_input` with the nudge itself as
        the question ("Your reply looks like a tool call, but it could not be read:
        ..."), and the router asked the user that.
        """
        return self.copied_by(text, _QUOTED_RUN)

    def copied_by(self, text: str, run: int) -> bool:
        """Whether `text` copies `run` words of the note in a row (all of a shorter text;
        its first 400 words are read)."""
        said = _WORDS.findall(text.lower())[:400]
        size = min(run, len(said))
        return size > 0 and self._holds(said, size)
