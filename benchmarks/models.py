"""The model a real-model benchmark (`e2e`, `bfcl`) talks to, built from its options."""

from __future__ import annotations

import argparse
from typing import Literal

from meta_tools.config import ModelConfig
from meta_tools.llm.base import ChatModel
from meta_tools.router.from_config import model_from_config

from .e2e_sides import CountingModel

__all__ = ["build_model"]


def build_model(
    args: argparse.Namespace,
    *,
    provider: Literal["openai", "dashscope"] = "openai",
    recover_text_calls: bool | None = None,
) -> ChatModel:
    """The model `--model`, `--base-url` and the other options name; every turn logged to `--log`.

    `recover_text_calls` None keeps the client's own default.
    """
    config = ModelConfig(
        provider=provider,
        name=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        timeout_s=args.timeout,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=0,
        recover_text_calls=recover_text_calls,
    )
    model = model_from_config(config)
    return CountingModel(model, log=args.log) if args.log else model
