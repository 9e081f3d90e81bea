"""Model wrappers: the model inside is found through any number of them."""

from __future__ import annotations

from meta_tools.llm import ScriptedModel
from meta_tools.llm.recovery import RecoveringModel
from meta_tools.llm.sampling import SamplingChatModel
from meta_tools.llm.wrapper import ModelWrapper, find_model


def test_the_model_inside_wrappers_is_found_at_any_depth() -> None:
    host = SamplingChatModel()
    wrapped = RecoveringModel(RecoveringModel(host))
    assert isinstance(wrapped, ModelWrapper)
    assert wrapped.inner.inner is host  # type: ignore[attr-defined]
    assert find_model(wrapped, SamplingChatModel) is host
    assert find_model(host, SamplingChatModel) is host
    assert find_model(wrapped, RecoveringModel) is wrapped


def test_a_model_of_another_kind_is_not_found() -> None:
    scripted = ScriptedModel([])
    assert not isinstance(scripted, ModelWrapper)
    assert find_model(RecoveringModel(scripted), SamplingChatModel) is None
    assert find_model(scripted, SamplingChatModel) is None
