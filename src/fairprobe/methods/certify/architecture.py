"""The certify classifier's architecture (the paper's small transformer, App. C.1): its config and
the torch module built from it. :mod:`.model` saves and loads it; :mod:`.usermodel` builds one from a
user's state dict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fairprobe.errors import ModelError


@dataclass
class ModelConfig:
    vocab_size: int
    dim: int = 8
    heads: int = 2
    ff: int = 8
    blocks: int = 6
    max_len: int = 200
    dropout: float = 0.1
    ln_eps: float = 1e-5
    task: str = "adult-gender"
    activation: str = "relu"
    """Feed-forward activation: ``relu`` (the paper's) or ``gelu`` (user models, :mod:`.usermodel`)."""
    classes: int = 2
    extra: dict[str, Any] = field(default_factory=dict)


def build_model(cfg: ModelConfig):  # type: ignore[no-untyped-def]
    """The torch module for ``cfg`` (torch is imported lazily)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = nn.Linear(cfg.dim, cfg.dim)
            self.k = nn.Linear(cfg.dim, cfg.dim)
            self.v = nn.Linear(cfg.dim, cfg.dim)
            self.o = nn.Linear(cfg.dim, cfg.dim)
            self.ln1 = nn.LayerNorm(cfg.dim, eps=cfg.ln_eps)
            self.ff1 = nn.Linear(cfg.dim, cfg.ff)
            self.ff2 = nn.Linear(cfg.ff, cfg.dim)
            self.ln2 = nn.LayerNorm(cfg.dim, eps=cfg.ln_eps)
            self.drop = nn.Dropout(cfg.dropout)

        def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
            b, n, d = x.shape
            h, dh = cfg.heads, cfg.dim // cfg.heads

            def split(t: torch.Tensor) -> torch.Tensor:
                return t.reshape(b, n, h, dh).permute(0, 2, 1, 3)

            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            scores = (q / dh**0.5) @ k.transpose(-1, -2)
            scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
            att = torch.softmax(scores, dim=-1) @ v
            att = self.o(att.permute(0, 2, 1, 3).reshape(b, n, d))
            x = self.ln1(x + self.drop(att))
            hidden = self.ff1(x)
            f = self.ff2(torch.nn.functional.gelu(hidden) if cfg.activation == "gelu" else torch.relu(hidden))
            return self.ln2(x + self.drop(f))

    class Classifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cfg = cfg
            self.tok = nn.Embedding(cfg.vocab_size, cfg.dim, padding_idx=0)
            self.pos = nn.Embedding(cfg.max_len, cfg.dim)
            nn.init.uniform_(self.pos.weight, -0.05, 0.05)  # Keras' default Embedding initialiser
            self.blocks = nn.ModuleList([Block() for _ in range(cfg.blocks)])
            self.head = nn.Linear(cfg.dim, cfg.classes)

        def forward_embedded(self, e: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
            """Logits from token embeddings ``e`` (batch, n, dim) and the non-padding mask."""
            n = e.shape[1]
            x = e + self.pos.weight[:n]
            for block in self.blocks:
                x = block(x, keep)
            w = keep.to(x.dtype)[..., None]
            pooled = (x * w).sum(1) / w.sum(1)
            return self.head(pooled)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            keep = ids != 0
            return self.forward_embedded(self.tok(ids), keep)

    if cfg.dim % cfg.heads:
        raise ModelError(
            f"embedding size {cfg.dim} is not divisible by {cfg.heads} heads; change --dim or --heads"
        )
    return Classifier()
