from tests.fakes.llm_server import llm_server, llm_server_session  # noqa: F401  (fixtures)
