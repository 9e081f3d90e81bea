"""The model a real-model benchmark (`e2e`, `bfcl`) talks to, built from its options."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

from meta_tools.config import ModelConfig
from meta_tools.llm.base import ChatModel
from meta_tools.llm.recovery import RecoveringModel
from meta_tools.llm.wrapper import find_model
from meta_tools.router.from_config import model_from_config

from .e2e_sides import CountingModel
from .replay import ReplayModel

__all__ = ["add_replay", "build_model", "replay_stats"]


def add_replay(parser: argparse.ArgumentParser) -> None:
    """The `--replay FILE` option `build_model` reads (e2e, bfcl)."""
    parser.add_argument(
        "--replay",
        type=Path,
        default=None,
        help="a file of model replies: a request asked before gets its reply from there,"
        " a new one is asked and added (benchmarks/replay.py)",
    )


def build_model(
    args: argparse.Namespace,
    *,
    provider: Literal["openai", "dashscope"] = "openai",
    recover_text_calls: bool | None = None,
) -> ChatModel:
    """The model `--model`, `--base-url` and the other options name; every turn logged to `--log`.

    `recover_text_calls` None keeps the client's own default. With `--replay FILE`, a
    request asked before gets the reply kept there (`ReplayModel`), and calls written as
    text are read after it, so that they are read by the code of the run.
    """
    replay: Path | None = getattr(args, "replay", None)
    config = ModelConfig(
        provider=provider,
        name=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        timeout_s=args.timeout,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=0,
        recover_text_calls=recover_text_calls if replay is None else False,
    )
    model = model_from_config(config)
    if replay is not None:
        options = {
            "model": args.model,
            "max_tokens": args.max_tokens,
            "temperature": args.temperature,
        }
        model = ReplayModel(model, replay, options=options)
        if recover_text_calls:
            model = RecoveringModel(model)
    return CountingModel(model, log=args.log) if args.log else model


def replay_stats(model: ChatModel) -> dict[str, Any] | None:
    """How many of `model`'s requests came from its replay file (None without one)."""
    found = find_model(model, ReplayModel)
    return None if found is None else found.stats
