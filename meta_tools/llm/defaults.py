"""The model clients' defaults, in one place: the config's `model` section derives its own from these.

A leaf module: it imports nothing.
"""

from __future__ import annotations

__all__ = [
    "BACKOFF_S",
    "KEY_ENV",
    "LOCAL_TIMEOUT_S",
    "MAX_RETRIES",
    "SAMPLING_MAX_TOKENS",
    "TIMEOUT_S",
]

TIMEOUT_S = 60.0
"""Seconds one model request may take."""

LOCAL_TIMEOUT_S = 300.0
"""Seconds one request may take from a model on this machine when none is configured: on a
CPU, a 1.5B's category call takes 20 to 60 s a request, more under load."""

MAX_RETRIES = 3
"""Retries after a request's first attempt (429, 5xx, connection errors, timeouts)."""

BACKOFF_S = 0.5
"""The first wait between two attempts; it doubles on every retry."""

SAMPLING_MAX_TOKENS = 4096
"""The answer limit a sampling request sends when none is configured (sampling requires one)."""

KEY_ENV = {"openai": "OPENAI_API_KEY", "dashscope": "DASHSCOPE_API_KEY"}
"""Where each provider's client looks for its API key unless told otherwise."""
