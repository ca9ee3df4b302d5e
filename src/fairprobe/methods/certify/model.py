"""The small transformer classifier of the paper's §3.2 (Table 8 sizes as defaults).

Token embedding (the pre-trained table, frozen) + learned position embedding, ``blocks`` post-LN
transformer blocks (Keras ``TransformerBlock`` layout: ``x = LN(x + MHA(x)); x = LN(x + FF(x))``
with a ReLU feed-forward layer), average pooling over the non-padding tokens, and a dense head with
two logits. Attention masks padding keys, so the logits of a padded batch equal those of each
sentence run alone without padding: the verifier (:mod:`.network`) works on the unpadded sentence.

A model directory holds ``model.pt`` (state dict), ``config.json`` and ``vocab.json``; the model
hash is the SHA-256 of ``model.pt``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from fairprobe.errors import ModelError
from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.architecture import ModelConfig, build_model


def save_model(model_dir: Path, model, cfg: ModelConfig, vocab: list[str], meta: dict[str, Any]) -> str:  # type: ignore[no-untyped-def]
    """Write the model directory; returns the model hash."""
    import torch

    model_dir.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), model_dir / "model.pt")
    (model_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=2))
    (model_dir / "vocab.json").write_text(json.dumps(vocab))
    digest = model_hash(model_dir)
    (model_dir / "meta.json").write_text(json.dumps({**meta, "model_hash": digest}, indent=2))
    return digest


def model_hash(model_dir: Path) -> str:
    return hashlib.sha256((model_dir / "model.pt").read_bytes()).hexdigest()


@dataclass
class LoadedModel:
    module: Any
    cfg: ModelConfig
    vocab: list[str]
    meta: dict[str, Any]
    hash: str
    directory: Path

    @cached_property
    def index(self) -> dict[str, int]:
        """Token → id, built once (a WordPiece vocabulary has 30,522 tokens: rebuilding it per
        sentence costs milliseconds each)."""
        return {w: i for i, w in enumerate(self.vocab)}


def load_model(model_dir: Path, dtype: str = "float64") -> LoadedModel:
    """Load a model directory written by ``fairprobe certify train``, or your own transformer saved as
    a state dict plus a config listing its layers (:mod:`.usermodel`), in eval mode, float64."""
    import torch

    model_dir = Path(model_dir)
    if (model_dir / "config.json").is_file() and (model_dir / "model.pt").is_file():
        raw = _read_json(model_dir / "config.json", dict)
        if "layers" in raw:  # your own transformer (.usermodel)
            from fairprobe.methods.certify.usermodel import load_user_model

            lexicon.use_tokenizer("words")
            state = _load_state(model_dir)
            module, cfg, vocab = load_user_model(model_dir, raw, state)
            meta = {
                "source": "user model",
                "pretrained_embeddings": bool(raw.get("pretrained_embeddings", True)),
            }
            module = module.to(getattr(torch, dtype)).eval()
            return LoadedModel(module, cfg, vocab, meta, model_hash(model_dir), model_dir)
    for name in ("model.pt", "config.json", "vocab.json"):
        if not (model_dir / name).is_file():
            raise ModelError(
                f"{model_dir} has no {name}; train one with `fairprobe certify train --out {model_dir}`"
            )
    cfg = _read_config(model_dir / "config.json")
    lexicon.use_tokenizer(str(cfg.extra.get("tokenizer", "words")))  # text reads as this model reads it
    lexicon.use_toxic_list(str(cfg.extra.get("toxic_list", "curated")))  # unrecorded: the list of old models
    vocab = _read_json(model_dir / "vocab.json", list)
    meta = _read_json(model_dir / "meta.json", dict) if (model_dir / "meta.json").is_file() else {}
    module = build_model(cfg)
    try:
        module.load_state_dict(torch.load(model_dir / "model.pt", map_location="cpu", weights_only=True))
    except Exception as exc:  # noqa: BLE001 - torch raises pickle, EOF, Runtime (size mismatch) errors
        reason = (
            "its weights do not match config.json"
            if "size mismatch" in str(exc) or "Missing key" in str(exc)
            else f"cannot load the weights: {type(exc).__name__}"
        )
        raise _broken(model_dir / "model.pt", reason) from None
    module = module.to(getattr(torch, dtype)).eval()
    return LoadedModel(module, cfg, vocab, meta, model_hash(model_dir), model_dir)


def _load_state(model_dir: Path) -> dict[str, Any]:
    import torch

    try:
        state = torch.load(model_dir / "model.pt", map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises pickle, EOF, Runtime errors
        raise ModelError(
            f"{model_dir / 'model.pt'}: cannot load the weights ({type(exc).__name__}); save them with "
            "torch.save(model.state_dict(), 'model.pt')"
        ) from None
    if not isinstance(state, dict):
        raise ModelError(
            f"{model_dir / 'model.pt'} is not a state dict; save model.state_dict(), not the model"
        )
    return {k: v.detach().double() for k, v in state.items() if hasattr(v, "detach")}


def _broken(path: Path, reason: object) -> ModelError:
    return ModelError(
        f"{path} is not as `fairprobe certify train` writes it ({reason}); "
        f"train the model again with `fairprobe certify train --out {path.parent}`"
    )


def _read_json(path: Path, kind: type) -> Any:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _broken(path, getattr(exc, "msg", None) or getattr(exc, "strerror", None) or exc) from None
    if not isinstance(value, kind):
        raise _broken(path, f"not a JSON {'list' if kind is list else 'object'}")
    return value


def _read_config(path: Path) -> ModelConfig:
    raw = _read_json(path, dict)
    try:
        cfg = ModelConfig(**raw)
    except TypeError as exc:
        raise _broken(path, exc) from None
    for name in ("vocab_size", "dim", "heads", "ff", "blocks", "max_len"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _broken(path, f"{name} must be a whole number of at least 1, got {value!r}")
    for name in ("dropout", "ln_eps"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            raise _broken(path, f"{name} must be a number in [0, 1), got {value!r}")
    return cfg
