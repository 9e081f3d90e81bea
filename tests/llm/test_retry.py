"""The retry loop and wire helpers shared by the real clients."""

from __future__ import annotations

import pytest

from meta_tools.exceptions import ModelError
from meta_tools.llm.arguments import dump_arguments, load_arguments
from meta_tools.llm.retry import Failure, RetryPolicy, call_with_retries, retry_after_from_headers

pytestmark = pytest.mark.anyio

FAST = RetryPolicy(max_retries=2, backoff_s=0.001)


class Flaky(Exception):
    """Stands in for an SDK error in these tests."""


def classify(exc: Exception) -> Failure | None:
    if isinstance(exc, Flaky):
        return Failure(str(exc), retryable="retry" in str(exc), retry_after=0.0)
    return None


async def test_a_retryable_failure_is_retried_until_it_succeeds() -> None:
    outcomes: list[Exception | str] = [Flaky("retry 1"), Flaky("retry 2"), "done"]

    async def attempt() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    result = await call_with_retries(
        attempt, classify=classify, policy=FAST, endpoint="http://x", model="m"
    )
    assert result == "done"
    assert outcomes == []


async def test_exhausted_retries_raise_one_model_error_naming_endpoint_and_model() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise Flaky(f"retry: key sk-secret rejected ({calls})")

    with pytest.raises(ModelError) as caught:
        await call_with_retries(
            attempt,
            classify=classify,
            policy=FAST,
            endpoint="http://llm.local/v1",
            model="m1",
            secrets=("sk-secret",),
        )
    assert calls == 3
    assert str(caught.value) == (
        "model 'm1' at 'http://llm.local/v1' failed after 3 attempts;"
        " last error: retry: key *** rejected (3)"
    )
    assert isinstance(caught.value.__cause__, Flaky)


async def test_a_non_retryable_failure_raises_at_once() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise Flaky("fatal")

    with pytest.raises(
        ModelError, match=r"^model 'm' at 'http://x' failed \(not retried\): fatal$"
    ):
        await call_with_retries(
            attempt, classify=classify, policy=FAST, endpoint="http://x", model="m"
        )
    assert calls == 1


async def test_an_unclassified_exception_propagates_unchanged() -> None:
    async def attempt() -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await call_with_retries(
            attempt, classify=classify, policy=FAST, endpoint="http://x", model="m"
        )


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=5, backoff_s=1.0, max_backoff_s=4.0)
    for retry, base in [(0, 1.0), (1, 2.0), (2, 4.0), (5, 4.0)]:
        for _ in range(50):
            assert base * 0.5 <= policy.delay(retry) <= base


def test_retry_after_replaces_the_backoff_and_is_capped() -> None:
    policy = RetryPolicy(backoff_s=30.0)
    assert policy.delay(0, retry_after=0.0) == 0.0
    assert policy.delay(3, retry_after=2.5) == 2.5
    assert policy.delay(0, retry_after=3600.0) == 60.0


def test_retry_after_is_read_from_seconds_or_milliseconds() -> None:
    assert retry_after_from_headers({"retry-after": "2"}) == 2.0
    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_from_headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_from_headers({}) is None
    assert retry_after_from_headers(None) is None


def test_a_negative_retry_count_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)


def test_arguments_parse_to_a_dict_or_stay_raw() -> None:
    assert load_arguments('{"a": 1}') == {"a": 1}
    assert load_arguments("") == {}
    assert load_arguments(None) == {}
    assert load_arguments('{"a": ') == '{"a": '
    assert load_arguments("[1]") == "[1]"
    assert dump_arguments({"city": "Zürich"}) == '{"city": "Zürich"}'
    assert dump_arguments('{"a": ') == '{"a": '
