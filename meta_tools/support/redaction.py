"""Secret redaction: values that came from `${VAR}` never leave the router.

A `Redactor` replaces every known secret with `***` in text, in nested values
(tool arguments, results) and, as a `logging.Filter`, in log records of the
`meta_tools` loggers, also where a secret was escaped (JSON, `repr`) or
stripped on its way. Values shorter than `MIN_SECRET_LENGTH` are not
redacted: a port number or a flag would otherwise be scrubbed from every
number and word that happens to contain it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "Redactor", "spellings"]

REDACTED = "***"
MIN_SECRET_LENGTH = 6


def spellings(secret: str) -> set[str]:
    """The ways `secret` shows up in text: as it is, stripped of surrounding whitespace, and
    escaped by JSON, by `repr()` of a string and of its bytes (a header value, a log line)."""
    forms = {
        secret,
        secret.strip(),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "surrogatepass"))[2:-1],
    }
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Redactor(logging.Filter):
    """Scrubs a fixed set of secrets from text, values and log records.

    Args:
        secrets: the values to hide (shorter than `MIN_SECRET_LENGTH` are ignored).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets: tuple[str, ...] = ()
        self._pattern: re.Pattern[str] | None = None
        self._loggers: list[logging.Logger] = []
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Hide these values too (e.g. the service's token, known only once it serves)."""
        found = {*self.secrets, *(s for s in secrets if len(s) >= MIN_SECRET_LENGTH)}
        kept = sorted(found, key=len, reverse=True)
        self.secrets = tuple(kept)
        forms = {form for secret in kept for form in spellings(secret)}
        # Longest first, so a secret that contains another is hidden whole.
        ordered = sorted(forms, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __repr__(self) -> str:
        return f"<Redactor secrets={len(self.secrets)}>"  # never the values

    def text(self, text: str) -> str:
        """`text` with every secret replaced by `***`."""
        if self._pattern is None:
            return text
        return self._pattern.sub(REDACTED, text)

    def value(self, value: Any) -> Any:
        """A copy of `value` with secrets scrubbed from every string in it (keys too)."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        return value

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite a log record's message and traceback without secrets; never drops it."""
        if self._pattern is None:
            return True
        message = record.getMessage()
        if self._pattern.search(message):
            record.msg, record.args = self.text(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.text(record.exc_text)
        return True

    def attach(self) -> None:
        """Filter the `meta_tools` logger and every `meta_tools.*` logger created so far.

        A logger's filters only see records logged on it directly, so each
        package logger gets the filter; `detach` removes it again. Without
        secrets there is nothing to filter and nothing is attached.
        """
        if self._pattern is None:
            return
        names = [
            name
            for name in logging.root.manager.loggerDict
            if name == "meta_tools" or name.startswith("meta_tools.")
        ]
        for name in sorted({"meta_tools", *names}):
            logger = logging.getLogger(name)
            if self not in logger.filters:
                logger.addFilter(self)
                self._loggers.append(logger)

    def detach(self) -> None:
        """Remove the filter from the loggers `attach` added it to; harmless twice."""
        for logger in self._loggers:
            logger.removeFilter(self)
        self._loggers.clear()
