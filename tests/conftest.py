from collections.abc import Iterator

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
