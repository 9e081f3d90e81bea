import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.llm_server import llm_server, llm_server_session
from tests.services import redis_server, require

__all__ = ["llm_server", "llm_server_session"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 and a free port, for one test module (no process outlives its module)."""
    require("redis-server")
    with redis_server(tmp_path_factory.mktemp("redis")) as (url, _):
        yield url


@pytest.fixture
def ranking_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads every category ranking a router builds is built in, in order."""
    from meta_tools.router import manager

    threads: list[int] = []

    class Recorded(manager.CategoryRanking):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            threads.append(threading.get_ident())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(manager, "CategoryRanking", Recorded)
    return threads
