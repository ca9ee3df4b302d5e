"""Surrogate hypothesis classes ℋ for C-ERM (bafa.txt §3 S1, App. A.1 "Surrogate Hypothesis Class").

The paper uses a non-finetuned BERT; here the default is a small MLP on *frozen* MiniLM sentence
embeddings (CPU-fast, DESIGN.md §5), with a one-layer transformer encoder over MiniLM's frozen
token embeddings as an option (``surrogate: transformer``). A surrogate network maps pool
*positions* to a real-valued deviation δ(x) (its last layer starts at zero, so δ ≡ 0 at the start
of each C-ERM solve; see :mod:`.cerm`), so the pool is encoded once and every step runs on an
index minibatch.

Input features (``features``): ``minilm`` (default), ``ngrams`` (hashed word uni- and bigram
counts, L2-normalised: 2,048 dimensions, no model needed) or ``minilm+ngrams``. Sentence
embeddings smear templated, number-heavy texts such as the serialised Adult census; n-grams keep
their field values apart (a k-NN base scorer on them had a third of MiniLM's ΔAUC error at 128
queries on the Adult case study).
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import numpy as np

SURROGATES = ("mlp", "transformer")
FEATURES = ("minilm", "ngrams", "minilm+ngrams")
NGRAM_DIM = 2048
TOKENS = 32
"""Token positions kept per text for the transformer surrogate."""


def hashed_ngrams(texts: list[str], dim: int = NGRAM_DIM) -> np.ndarray:
    """Word uni- and bigram counts hashed (CRC32) into ``dim`` buckets, rows L2-normalised."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        words = re.findall(r"\w+", text.lower())
        for tok in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
            out[i, zlib.crc32(tok.encode()) % dim] += 1.0
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def encode_pool(
    texts: list[str], kind: str = "mlp", features: str = "minilm", embedder: str = "minilm"
) -> Any:
    """Frozen inputs of the surrogate: features (n, d) for ``mlp``; (tokens (n, L, d), mask (n, L))
    for ``transformer`` (MiniLM token embeddings; ``features`` does not apply)."""
    if kind == "mlp":
        if features not in FEATURES:
            raise ValueError(f"unknown features {features!r}; use one of {', '.join(FEATURES)}")
        parts = []
        if "minilm" in features:
            from fairprobe.models.embeddings import load_embedder

            parts.append(load_embedder(embedder).encode(texts))
        if "ngrams" in features:
            parts.append(hashed_ngrams(texts))
        x = np.hstack(parts)
        # Centre on the pool mean: templated texts share most of their features, and a shared
        # component would tie every point's deviation to every other's.
        x = x - x.mean(axis=0, keepdims=True)
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)
        return row_space(x).astype(np.float32)
    from fairprobe.models.embeddings import load_embedder

    emb = load_embedder(embedder)
    model = emb.model
    tokens = np.zeros((len(texts), TOKENS, emb.dim), dtype=np.float32)
    mask = np.zeros((len(texts), TOKENS), dtype=bool)
    outputs = model.encode(
        texts, output_value="token_embeddings", convert_to_numpy=False, show_progress_bar=False
    )
    for i, out in enumerate(outputs):
        arr = out.detach().cpu().numpy()[:TOKENS]
        tokens[i, : len(arr)] = arr
        mask[i, : len(arr)] = True
    return tokens, mask


def row_space(x: np.ndarray, rtol: float = 1e-6) -> np.ndarray:
    """The rows of ``x`` in an orthonormal basis of their own span (``n × r``, ``r = rank(x)``).

    Every inner product between rows is kept (so cosine similarities, the ridge kernel and the set of
    functions a first linear layer can express on the pool are unchanged), but a surrogate step costs
    ``r`` instead of ``d`` multiply-adds per hidden unit. Hashed n-grams of templated text are
    2,048-dimensional with a much smaller rank (the Adult pool of 2,000: 310), which made the first
    layer four times the work it needed to be."""
    x64 = np.asarray(x, dtype=np.float64)
    if x64.shape[0] == 0:
        return x64
    _, s, vt = np.linalg.svd(x64, full_matrices=False)
    rank = max(1, int((s > rtol * s[0]).sum())) if s.size and s[0] > 0 else 1
    if rank >= x64.shape[1]:
        return x64
    return x64 @ vt[:rank].T


def build_surrogate(kind: str, inputs: Any, hidden: int = 64, seed: int = 0) -> Any:
    """A fresh surrogate (torch module) over the encoded pool ``inputs``; ``module(idx)`` gives scores."""
    import torch
    from torch import nn

    torch.manual_seed(seed)

    class MLP(nn.Module):
        def __init__(self, x: np.ndarray):
            super().__init__()
            self.register_buffer("x", torch.as_tensor(x, dtype=torch.float32))
            self.net = nn.Sequential(nn.Linear(x.shape[1], hidden), nn.Tanh(), nn.Linear(hidden, 1))
            nn.init.normal_(self.net[2].weight, std=1e-3)
            nn.init.zeros_(self.net[2].bias)

        def forward(self, idx: torch.Tensor) -> torch.Tensor:
            return self.net(self.x[idx]).squeeze(-1)

    class Transformer(nn.Module):
        def __init__(self, tokens: np.ndarray, mask: np.ndarray):
            super().__init__()
            self.register_buffer("tokens", torch.as_tensor(tokens, dtype=torch.float32))
            self.register_buffer("mask", torch.as_tensor(mask))
            self.proj = nn.Linear(tokens.shape[2], hidden)
            layer = nn.TransformerEncoderLayer(
                hidden, nhead=4, dim_feedforward=2 * hidden, dropout=0.0, batch_first=True
            )
            self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
            self.head = nn.Linear(hidden, 1)
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

        def forward(self, idx: torch.Tensor) -> torch.Tensor:
            mask = self.mask[idx]
            h = self.encoder(self.proj(self.tokens[idx]), src_key_padding_mask=~mask)
            m = mask.unsqueeze(-1).float()
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1)

    if kind == "mlp":
        return MLP(inputs)
    if kind == "transformer":
        return Transformer(*inputs)
    raise ValueError(f"unknown surrogate {kind!r}; use one of {', '.join(SURROGATES)}")
