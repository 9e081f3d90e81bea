import pytest

from tests.fakes.llm_server import llm_server, llm_server_session

__all__ = ["llm_server", "llm_server_session"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
