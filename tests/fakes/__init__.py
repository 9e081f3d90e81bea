"""Fakes of outside services (LLM APIs) for tests."""
