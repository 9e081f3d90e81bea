"""Hot reload: watch the config file and its prompts folder, and regroup a running router.

A valid edit is applied with `MetaManager.reload` (one atomic swap; calls in
flight finish on the old categories). An invalid edit changes nothing: the
router keeps its running config and every problem is reported.

The config is watched by its own path (the directory entry), not by the file it
resolves to: deploy tools and Kubernetes ConfigMaps update a config by swapping a
symbolic link (`ln -s v2.json tmp && mv -T tmp Meta_tool_config.json`, or the
`..data` link of a ConfigMap's folder). The link is resolved again on every change,
so a swap is applied, and so is an edit of the file it now points to; the log
names the file that was read.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import TaskStatus
from watchfiles import Change, awatch

from ..config import MetaToolsConfig
from ..config.file import read_regular_file
from ..exceptions import ConfigError, ModelError
from .manager import MetaManager

__all__ = ["ConfigReloader", "ReloadOutcome"]

logger = logging.getLogger("meta_tools.reload")


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    """What one reload attempt did: applied (with warnings) or rejected (with every problem)."""

    source: str
    applied: bool
    categories: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    target: str | None = None
    """The file that was read when `source` is a link (where it pointed); else None."""


ReloadCallback = Callable[[ReloadOutcome], Awaitable[None]]


def _problems(exc: Exception) -> list[str]:
    """What a rejected edit did wrong; an unexpected error is reported, not raised into serve."""
    if isinstance(exc, ConfigError):
        return exc.problems
    if isinstance(exc, ModelError):
        return [str(exc)]
    logger.debug("reload failed unexpectedly", exc_info=exc)
    return [f"unexpected {type(exc).__name__} while loading the edit: {exc}"]


class ConfigReloader:
    """Applies edits of a config file (and its prompt templates) to a running `MetaManager`.

    Args:
        meta: the router to update; built from `path`.
        path: the config file to watch.
        on_reload: awaited after every attempt that found a change, applied or not.
        debounce_ms: changes closer together than this are applied once.

    Example:
        >>> reloader = ConfigReloader(meta, "Meta_tool_config.json")
        >>> # in a task group: await tg.start(reloader.run)
    """

    def __init__(
        self,
        meta: MetaManager,
        path: str | Path,
        *,
        on_reload: ReloadCallback | None = None,
        debounce_ms: int = 300,
    ) -> None:
        self.meta = meta
        # The entry itself, not where it points: a swapped link must be seen as a change.
        self.path = Path(os.path.abspath(path))
        self.on_reload = on_reload
        self.debounce_ms = debounce_ms
        self._digest = self._fingerprint(self._prompts_dir())

    def _prompts_dir(self) -> Path | None:
        config = self.meta.config
        return config.prompts_path() if config is not None else None

    def _fingerprint(self, prompts: Path | None) -> str:
        """A digest of the config text and every template, to skip events that changed nothing."""
        digest = hashlib.sha256()
        digest.update(f"{_resolved(self.path)}\n".encode())  # a swap to equal text is applied too
        files = [self.path]
        if prompts is not None and prompts.is_dir():
            files += sorted(prompts.glob("*.j2"))
        for file in files:
            digest.update(str(file).encode())
            try:
                digest.update(read_regular_file(file))  # a FIFO is refused, never opened
            except OSError as exc:
                digest.update(f"<unreadable: {exc.strerror}>".encode())
        return digest.hexdigest()

    async def reload_now(self) -> ReloadOutcome | None:
        """Load the file and apply it if anything changed; None when nothing did."""
        prompts = self._prompts_dir()
        digest = await anyio.to_thread.run_sync(self._fingerprint, prompts)
        if digest == self._digest:
            return None
        target = await anyio.to_thread.run_sync(_resolved, self.path)
        linked = None if target == self.path else str(target)
        read = str(self.path) if linked is None else f"{self.path} -> {target}"
        try:
            config = await anyio.to_thread.run_sync(MetaToolsConfig.load, self.path)
            warnings = await self.meta.reload(config)
        except Exception as exc:  # whatever the edit breaks, the running config is kept
            problems = _problems(exc)
            outcome = ReloadOutcome(
                str(self.path), applied=False, problems=tuple(problems), target=linked
            )
            listed = "".join(f"\n  - {problem}" for problem in problems)
            logger.error(
                "%s: edit not applied, the running config is kept; %d problem(s):%s",
                read,
                len(problems),
                listed,
            )
        else:
            # The prompts folder may have moved with the edit: fingerprint the new one.
            self._digest = await anyio.to_thread.run_sync(self._fingerprint, self._prompts_dir())
            names = tuple(m.name for m in self.meta.categories)
            outcome = ReloadOutcome(
                str(self.path),
                applied=True,
                categories=names,
                warnings=tuple(warnings),
                target=linked,
            )
            logger.info("%s: reloaded, %d categories: %s", read, len(names), ", ".join(names))
            for warning in warnings:
                logger.warning("%s: %s", self.path, warning)
        if not outcome.applied:
            # Remember the rejected content too, so it is reported once, not on every event.
            self._digest = digest
        if self.on_reload is not None:
            await self.on_reload(outcome)
        return outcome

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Watch until cancelled; `task_status.started()` fires once the watcher is live."""
        started = False
        while True:
            prompts = self._prompts_dir()
            target = _resolved(self.path)
            # The entry's folder sees a swap of the entry (or of a link on the way, like a
            # ConfigMap's `..data`); the target's folder sees an edit of the file it names.
            folders = [self.path.parent, target.parent] + ([prompts] if prompts else [])
            watched = [f for f in dict.fromkeys(folders) if f.is_dir()]
            fresh = True

            def relevant(
                change: Change, name: str, prompts: Path | None = prompts, target: Path = target
            ) -> bool:
                path = Path(name)
                if path in (self.path, target):
                    return True
                if path.parent in (self.path.parent, target.parent) and (
                    _resolved(self.path) != target
                ):
                    return True  # a link on the way to the file was swapped
                path = _resolved(path)
                return prompts is not None and path.parent == prompts and path.suffix == ".j2"

            # The first (empty) yield after `rust_timeout` proves the watcher is registered.
            async for changes in awatch(
                *watched,
                watch_filter=relevant,
                debounce=self.debounce_ms,
                recursive=False,
                rust_timeout=500,
                yield_on_timeout=True,
            ):
                if not started:
                    started = True
                    task_status.started()
                    logger.info("watching %s for changes", self.path)
                if changes or fresh:
                    # An edit made while the watcher was (re)starting is caught at its first yield.
                    fresh = False
                    await self.reload_now()
                if self._prompts_dir() != prompts or _resolved(self.path) != target:
                    break  # watch the new prompts folder, or the file the link points to now


def _resolved(path: Path) -> Path:
    """Where `path` leads, every link followed (`path` itself when a link loops)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a loop, before Python 3.13
        return path
