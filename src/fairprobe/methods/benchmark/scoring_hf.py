"""Hugging Face likelihood scorers behind ``hf:`` URIs, chosen from the model's config:

- ``*ForCausalLM`` / ``*LMHeadModel``: :class:`HFCausalScorer`, the summed log-likelihood of the
  continuation (lm-evaluation-harness's ``HFLM.loglikelihood``: an empty context is the BOS token, or
  EOS when the model has none);
- ``*ForMaskedLM``: :class:`~fairprobe.methods.benchmark.mlm.MaskedLMScorer`, the CrowS-Pairs authors'
  pseudo-log-likelihood (CrowS-Pairs only);
- ``hf:PATH/NAME.gguf`` (a local GGUF file) or ``hf:org/name/NAME.gguf`` (a file of a Hub repo): the
  GGUF's weights dequantised by transformers (``from_pretrained(dir, gguf_file=NAME)``, needs the
  ``gguf`` package), scored as a causal LM; the same file through ``gguf:PATH`` is scored in-process
  by llama.cpp with the quantised weights.

Any other architecture (a sequence classifier, an encoder without an LM head) is one
:class:`~fairprobe.errors.ModelError` line. Hub ids load from the Hub (online users); local folders
never touch the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
from scipy.special import log_softmax

from fairprobe.errors import ModelError
from fairprobe.models.base import Fingerprint
from fairprobe.models.hashing import file_sha256, files_sha256

Kind = Literal["causal", "masked"]
_HASHED = {".json", ".safetensors", ".bin", ".txt", ".model", ".jinja", ".pt"}


def split_gguf(target: str) -> tuple[str, bool, str | None]:
    """``(source, is_local, gguf_file)`` of ``hf:target``: a ``.gguf`` target names a file in a local
    folder or in a Hub repo (``org/name/FILE.gguf``); any other target is a folder or Hub id."""
    if not target.lower().endswith(".gguf"):
        from fairprobe.models.hf_backend import resolve_source

        source, local = resolve_source(target)
        return source, local, None
    path = Path(target).expanduser()
    if path.is_file():
        return str(path.parent), True, path.name
    parts = target.split("/")
    if path.exists() or target.startswith(("/", ".", "~")) or len(parts) < 3 or Path(parts[0]).is_dir():
        raise ModelError(
            f"GGUF file {path} does not exist; give hf:PATH/NAME.gguf (a local file) or hf:org/name/NAME.gguf"
        )
    return "/".join(parts[:2]), False, "/".join(parts[2:])


def _weights(source: str, local: bool, gguf_file: str | None) -> str:
    if not local:
        return f"{source}/{gguf_file}" if gguf_file else source
    root = Path(source)
    if gguf_file:
        return file_sha256(root / gguf_file)
    return files_sha256(root, [p for p in root.iterdir() if p.suffix in _HASHED])


def likelihood_kind(target: str) -> Kind:
    """``causal`` or ``masked`` from the config's ``architectures`` (a GGUF is causal); any other
    model is one :class:`ModelError` line saying which ``hf:`` models score likelihoods."""
    source, local, gguf_file = split_gguf(target)
    if gguf_file:
        return "causal"
    from fairprobe.models.hf_backend import architectures

    archs = architectures(source, local, target)
    if any(a.endswith("ForMaskedLM") for a in archs):
        return "masked"
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "causal"
    raise ModelError(
        f"hf:{target} has architectures {archs or 'unknown'}, which score no likelihood; the likelihood "
        "benchmarks take a causal LM (*ForCausalLM) or, for crows-pairs, a masked LM (*ForMaskedLM)"
    )


class HFCausalScorer:
    """A transformers causal LM: ``log P(continuation | context)`` summed over the continuation's
    tokens, after the model's BOS token (EOS when it has none), as the in-process GGUF scorer does."""

    likelihood = "causal"
    method = None

    def __init__(self, target: str):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from fairprobe.models.hf_backend import load_hf

        source, local, gguf_file = split_gguf(target)
        extra = {"gguf_file": gguf_file} if gguf_file else {}
        if gguf_file:
            try:
                import gguf  # noqa: F401 - transformers reads GGUF files through it
            except ImportError:
                raise ModelError(
                    "reading a GGUF file with transformers needs the gguf package: pip install 'fairprobe[hf]'"
                ) from None
        self._tok = load_hf(
            lambda: AutoTokenizer.from_pretrained(source, local_files_only=local, **extra), target
        )
        self._model = load_hf(
            lambda: AutoModelForCausalLM.from_pretrained(source, local_files_only=local, **extra), target
        ).eval()
        self._torch = torch
        bos = self._tok.bos_token_id if self._tok.bos_token_id is not None else self._tok.eos_token_id
        self._prefix = [bos] if bos is not None else []
        self.max_length = int(getattr(self._model.config, "max_position_embeddings", 0) or 1 << 20)
        self.fingerprint = Fingerprint(
            backend="hf-loglik",
            model_id=f"hf:{target}",
            weights=_weights(source, local, gguf_file),
            params={"dequantised_gguf": bool(gguf_file)} if gguf_file else {},
        )

    def _ids(self, text: str) -> list[int]:
        return list(self._tok(text, add_special_tokens=False)["input_ids"]) if text else []

    def loglik(self, context: str, continuation: str) -> tuple[float, int]:
        ctx = self._prefix + self._ids(context)
        whole = self._prefix + self._ids(context + continuation)
        if len(whole) > self.max_length:
            raise ModelError(
                f"a benchmark item of {len(whole)} tokens does not fit the model's {self.max_length} positions"
            )
        start = max(1, len(ctx))
        while start > 1 and whole[:start] != ctx[:start]:  # the continuation merged with the context's end
            start -= 1
        with self._torch.no_grad():
            logits = self._model(self._torch.tensor([whole])).logits[0].double().numpy()
        logp = log_softmax(logits[start - 1 : len(whole) - 1], axis=-1)
        return float(logp[np.arange(len(whole) - start), whole[start:]].sum()), len(whole) - start


def masked_scorer(target: str):  # noqa: ANN201 - MaskedLMScorer, imported lazily (torch)
    from fairprobe.methods.benchmark.mlm import MaskedLMScorer

    source, local, _ = split_gguf(target)
    return MaskedLMScorer(source, local, target, _weights(source, local, None))
