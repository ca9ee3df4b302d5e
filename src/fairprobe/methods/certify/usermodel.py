"""Certify your own model: a PyTorch transformer classifier saved as a state dict plus a small config.

The verifier (:mod:`.network`) interprets a fixed set of layers. A model built from those layers
— ``nn.Embedding`` tokens, an optional learned position table, post-norm
``nn.TransformerEncoderLayer`` blocks (``batch_first=True``, ReLU or GELU), mean pooling over the
tokens and an ``nn.Linear`` head — is read into the same classifier as the models of
``fairprobe certify train`` (:func:`.model.build_model`), so every certificate, attack and report
works on it unchanged. The folder holds ``model.pt`` (``torch.save(model.state_dict())``) and a
``config.json`` listing the layers in order, each with the state-dict prefix of its module::

    {"vocab": "vocab.json", "task": "adult-gender", "max_len": 64,
     "layers": [
        {"type": "embedding", "module": "emb"},
        {"type": "position_embedding", "module": "pos"},
        {"type": "transformer_encoder_layer", "module": "encoder.layers.0", "heads": 2, "activation": "gelu"},
        {"type": "mean_pool"},
        {"type": "linear", "module": "head"}]}

``vocab.json`` is the token list (index = id; id 0 padding, id 1 unknown); text is split as
:func:`.lexicon.tokenize` splits it, lower case. ``dropout`` layers are accepted and ignored (the
model is certified in eval mode). Any other layer type, a pre-norm block (``norm_first``), or
blocks of different sizes stop with an error naming the first such layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fairprobe.errors import ModelError

SUPPORTED = ("embedding", "position_embedding", "transformer_encoder_layer", "dropout", "mean_pool", "linear")
ACTIVATIONS = ("relu", "gelu")


def is_user_config(raw: dict[str, Any]) -> bool:
    return "layers" in raw


def _fail(path: Path, msg: str) -> ModelError:
    return ModelError(f"{path}: {msg}")


def _check_layers(path: Path, layers: Any) -> list[dict[str, Any]]:
    if not isinstance(layers, list) or not layers:
        raise _fail(path, '"layers" must be a non-empty list of {"type": ..., "module": ...}')
    for i, layer in enumerate(layers, 1):
        kind = layer.get("type") if isinstance(layer, dict) else None
        if kind not in SUPPORTED:
            where = f" ({layer.get('module')})" if isinstance(layer, dict) and layer.get("module") else ""
            raise _fail(
                path,
                f"layer {i} {kind!r}{where} is not supported by the verifier; supported layers: "
                f"{', '.join(SUPPORTED)}",
            )
        if kind == "transformer_encoder_layer":
            if layer.get("norm_first"):
                raise _fail(
                    path, f"layer {i} ({layer.get('module')}): pre-norm (norm_first) blocks are not supported"
                )
            if layer.get("activation", "relu") not in ACTIVATIONS:
                raise _fail(
                    path,
                    f"layer {i} ({layer.get('module')}): activation {layer.get('activation')!r} is not "
                    f"supported; use one of {', '.join(ACTIVATIONS)}",
                )
    kinds = [x["type"] for x in layers if x["type"] != "dropout"]
    blocks = kinds.count("transformer_encoder_layer")
    expected = ["embedding"] + (["position_embedding"] if "position_embedding" in kinds else [])
    expected += ["transformer_encoder_layer"] * blocks + ["mean_pool", "linear"]
    if kinds != expected or blocks == 0:
        raise _fail(
            path,
            f"layers {kinds} are not in the supported order: embedding, [position_embedding], "
            "transformer_encoder_layer (one or more), mean_pool, linear",
        )
    return [x for x in layers if x["type"] != "dropout"]


def _tensor(state: dict[str, Any], path: Path, key: str):  # type: ignore[no-untyped-def]
    if key not in state:
        raise _fail(path, f'the state dict has no {key!r} (check the layer\'s "module" prefix)')
    return state[key]


def load_user_model(directory: Path, raw: dict[str, Any], state: dict[str, Any]):  # type: ignore[no-untyped-def]
    """``(module, ModelConfig, vocab)`` for a user model folder (see the module docstring)."""
    import json

    import torch

    from fairprobe.methods.certify.architecture import ModelConfig, build_model

    cfg_path = directory / "config.json"
    layers = _check_layers(cfg_path, raw["layers"])
    vocab_ref = raw.get("vocab", "vocab.json")
    if isinstance(vocab_ref, list):
        vocab = vocab_ref
    else:
        vfile = directory / str(vocab_ref)
        try:
            vocab = json.loads(vfile.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise _fail(vfile, f"cannot read the vocabulary ({exc})") from None
    if not isinstance(vocab, list) or len(vocab) < 3 or not all(isinstance(t, str) for t in vocab):
        raise _fail(cfg_path, "the vocabulary must be a JSON list of tokens (id 0 padding, id 1 unknown)")
    emb = _tensor(state, cfg_path, f"{layers[0]['module']}.weight")
    if emb.shape[0] != len(vocab):
        raise _fail(cfg_path, f"the embedding has {emb.shape[0]} rows but the vocabulary {len(vocab)} tokens")
    dim = int(emb.shape[1])
    blocks = [x for x in layers if x["type"] == "transformer_encoder_layer"]
    heads = {int(x.get("heads", 0)) for x in blocks}
    acts = {x.get("activation", "relu") for x in blocks}
    ffs = {int(_tensor(state, cfg_path, f"{x['module']}.linear1.weight").shape[0]) for x in blocks}
    if len(heads) != 1 or len(acts) != 1 or len(ffs) != 1 or 0 in heads:
        raise _fail(
            cfg_path, 'every transformer_encoder_layer needs the same "heads" (>= 1), activation and size'
        )
    head_w = _tensor(state, cfg_path, f"{layers[-1]['module']}.weight")
    pos_layer = next((x for x in layers if x["type"] == "position_embedding"), None)
    max_len = int(raw.get("max_len", 512))
    if pos_layer is not None:
        max_len = min(max_len, int(_tensor(state, cfg_path, f"{pos_layer['module']}.weight").shape[0]))
    cfg = ModelConfig(
        vocab_size=len(vocab),
        dim=dim,
        heads=heads.pop(),
        ff=ffs.pop(),
        blocks=len(blocks),
        max_len=max_len,
        dropout=0.0,
        ln_eps=float(blocks[0].get("layer_norm_eps", 1e-5)),
        task=str(raw.get("task", "adult-gender")),
        activation=acts.pop(),
        classes=int(head_w.shape[0]),
        extra={"source": "user model", "layers": [x["type"] for x in layers]},
    )
    module = build_model(cfg)
    with torch.no_grad():
        module.tok.weight.copy_(emb)
        if pos_layer is not None:
            module.pos.weight.copy_(state[f"{pos_layer['module']}.weight"][:max_len])
        else:
            module.pos.weight.zero_()
        for blk, layer in zip(module.blocks, blocks, strict=True):
            p = layer["module"]
            w = _tensor(state, cfg_path, f"{p}.self_attn.in_proj_weight")
            b = _tensor(state, cfg_path, f"{p}.self_attn.in_proj_bias")
            for i, lin in enumerate((blk.q, blk.k, blk.v)):
                lin.weight.copy_(w[i * dim : (i + 1) * dim])
                lin.bias.copy_(b[i * dim : (i + 1) * dim])
            for ours, theirs in (
                (blk.o, "self_attn.out_proj"),
                (blk.ff1, "linear1"),
                (blk.ff2, "linear2"),
                (blk.ln1, "norm1"),
                (blk.ln2, "norm2"),
            ):
                ours.weight.copy_(_tensor(state, cfg_path, f"{p}.{theirs}.weight"))
                ours.bias.copy_(_tensor(state, cfg_path, f"{p}.{theirs}.bias"))
        module.head.weight.copy_(head_w)
        module.head.bias.copy_(_tensor(state, cfg_path, f"{layers[-1]['module']}.bias"))
    return module, cfg, vocab
