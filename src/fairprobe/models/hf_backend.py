"""``hf:PATH_OR_ID`` — Hugging Face transformers models (DESIGN.md §3).

- a sequence classifier (``AutoModelForSequenceClassification``) is a :class:`Classifier`; labels
  come from ``config.id2label``; ``problem_type == "multi_label_classification"`` predicts every
  label with sigmoid score >= ``threshold``, otherwise the softmax argmax;
- a causal LM (``AutoModelForCausalLM``) is a :class:`ChatModel`, prompted through the tokenizer's
  chat template when it has one, else through a plain ``role: content`` transcript.

A local directory is loaded with ``local_files_only=True`` and fingerprinted by the hash of its
config, tokenizer and weights files; a Hub id is fingerprinted by the resolved commit hash.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any, Literal

from fairprobe.errors import ModelError
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint, Prediction
from fairprobe.models.hashing import files_sha256

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
_HASHED_SUFFIXES = {".json", ".safetensors", ".bin", ".txt", ".model", ".jinja", ".pt"}


def _transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - installed by `make install`
        raise ModelError("hf: models need transformers and torch: pip install 'fairprobe[hf]'") from exc
    return transformers


def resolve_source(target: str) -> tuple[str, bool]:
    """``(source, is_local)`` for ``hf:target``; a missing local path raises :class:`ModelError`."""
    path = Path(target).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelError(
                f"hf model directory {path} has no config.json; give a folder saved by save_pretrained"
            )
        return str(path), True
    # models/mine where ./models is a folder here: a local path that is missing, not a Hub id to
    # download (which took 6-28 s to fail offline)
    local_parent = "/" in target and Path(target.split("/", 1)[0]).expanduser().is_dir()
    if (
        target.startswith(("/", ".", "~"))
        or target.endswith("/")
        or local_parent
        or not _HUB_ID.match(target)
    ):
        raise ModelError(
            f"hf model directory {path} does not exist; give a local folder or a Hub id like org/name"
        )
    return target, False


_KINDS: dict[tuple[str, int | None], Literal["classifier", "chat"]] = {}


def hf_kind(target: str) -> Literal["classifier", "chat"]:
    """Whether ``hf:target`` is a sequence classifier or a causal LM, from its config (read once per
    process and config file version: the spec check, the run and the fingerprint all ask)."""
    source, local = resolve_source(target)
    config_file = Path(source) / "config.json"
    stamp = config_file.stat().st_mtime_ns if local and config_file.is_file() else None
    key = (source, stamp)
    if key not in _KINDS:
        _KINDS[key] = _read_kind(source, local, target)
    return _KINDS[key]


def architectures(source: str, local: bool, target: str) -> list[str]:
    """The ``architectures`` listed in ``hf:target``'s config (``[]`` when it lists none)."""
    config = load_hf(
        lambda: _transformers().AutoConfig.from_pretrained(source, local_files_only=local), target
    )
    return list(getattr(config, "architectures", None) or [])


def _read_kind(source: str, local: bool, target: str) -> Literal["classifier", "chat"]:
    archs = architectures(source, local, target)
    if any(a.endswith("ForSequenceClassification") for a in archs):
        return "classifier"
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "chat"
    raise ModelError(
        f"hf:{target} has architectures {archs or 'unknown'}; fairprobe loads *ForSequenceClassification "
        "models as classifiers and *ForCausalLM models as chat models"
    )


def load_hf(fn: Any, target: str) -> Any:
    """``fn()`` (a transformers ``from_pretrained``), its load error one :class:`ModelError` line."""
    try:
        return fn()
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(
            f"cannot load hf:{target} ({first}); check the path, or the Hub id and your network access"
        ) from exc


def _weights(source: str, local: bool, model: Any) -> str:
    if local:
        root = Path(source)
        return files_sha256(root, [p for p in root.iterdir() if p.suffix in _HASHED_SUFFIXES])
    return str(getattr(model.config, "_commit_hash", "") or "")


class HFClassifier:
    """A transformers sequence classifier.

    Args:
        target: local directory or Hub id.
        batch_size: texts per forward pass.
        threshold: minimum sigmoid score of a label for multi-label models.
        device: torch device name.
    """

    def __init__(self, target: str, *, batch_size: int = 32, threshold: float = 0.5, device: str = "cpu"):
        tf = _transformers()
        source, local = resolve_source(target)
        self.tokenizer = load_hf(
            lambda: tf.AutoTokenizer.from_pretrained(source, local_files_only=local), target
        )
        self.model = load_hf(
            lambda: tf.AutoModelForSequenceClassification.from_pretrained(source, local_files_only=local),
            target,
        )
        self.model.to(device).eval()
        self.device = device
        config = self.model.config
        self.labels = [str(config.id2label[i]) for i in range(config.num_labels)]
        self.multi_label = config.problem_type == "multi_label_classification"
        self.threshold = float(threshold)
        self.batch_size = int(batch_size)
        self.max_length = int(getattr(config, "max_position_embeddings", 512) or 512)
        params: dict[str, Any] = {"multi_label": self.multi_label}
        if self.multi_label:
            params["threshold"] = self.threshold
        self.fingerprint = Fingerprint(
            backend="hf", model_id=f"hf:{target}", weights=_weights(source, local, self.model), params=params
        )

    def predict(self, texts: list[str]) -> list[Prediction]:
        import torch

        texts = list(texts)
        out: list[Prediction] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            enc = self.tokenizer(
                batch, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            ).to(self.device)
            with torch.no_grad():
                logits = self.model(**enc).logits.float()
            probs = torch.sigmoid(logits) if self.multi_label else torch.softmax(logits, dim=-1)
            for row in probs.tolist():
                scores = dict(zip(self.labels, (float(p) for p in row), strict=True))
                if self.multi_label:
                    labels = frozenset(lab for lab, s in scores.items() if s >= self.threshold)
                else:
                    labels = frozenset([max(scores, key=lambda lab: scores[lab])])
                out.append(Prediction(labels, scores))
        return out

    def __repr__(self) -> str:
        return f"HFClassifier({self.fingerprint.model_id!r})"


class HFChat:
    """A transformers causal LM answering chat requests one at a time.

    Temperature 0 decodes greedily; a positive temperature samples with ``torch.manual_seed``
    set to the request's effective seed.
    """

    def __init__(self, target: str, *, device: str = "cpu"):
        tf = _transformers()
        source, local = resolve_source(target)
        self.tokenizer = load_hf(
            lambda: tf.AutoTokenizer.from_pretrained(source, local_files_only=local), target
        )
        self.model = load_hf(
            lambda: tf.AutoModelForCausalLM.from_pretrained(source, local_files_only=local), target
        )
        self.model.to(device).eval()
        self.device = device
        self.templated = bool(getattr(self.tokenizer, "chat_template", None))
        self._lock = threading.Lock()
        self.fingerprint = Fingerprint(
            backend="hf",
            model_id=f"hf:{target}",
            weights=_weights(source, local, self.model),
            params={"prompt": "chat_template" if self.templated else "plain"},
        )

    def render_prompt(self, request: ChatRequest) -> str:
        """The prompt text: the chat template when present, else ``role: content`` lines."""
        messages = request.message_dicts()
        if self.templated:
            return str(
                self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            )
        return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"

    def _one(self, request: ChatRequest) -> ChatResponse:
        import torch

        start = time.perf_counter()
        enc = self.tokenizer(
            self.render_prompt(request), return_tensors="pt", add_special_tokens=not self.templated
        ).to(self.device)
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        kwargs: dict[str, Any] = {"max_new_tokens": int(request.max_tokens), "pad_token_id": pad}
        if request.temperature > 0:
            torch.manual_seed(request.effective_seed)
            kwargs.update(do_sample=True, temperature=float(request.temperature), top_p=1.0, top_k=0)
        else:
            kwargs.update(do_sample=False)
        with torch.no_grad():
            out = self.model.generate(**enc, **kwargs)
        new = out[0, enc["input_ids"].shape[1] :].tolist()
        hit_eos = bool(new) and eos is not None and new[-1] == eos
        finish = "length" if len(new) >= request.max_tokens and not hit_eos else "stop"
        return ChatResponse(
            text=self.tokenizer.decode(new, skip_special_tokens=True),
            finish_reason=finish,
            prompt_tokens=int(enc["input_ids"].shape[1]),
            completion_tokens=len(new),
            latency_s=time.perf_counter() - start,
        )

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        with self._lock:
            return [self._one(r) for r in requests]

    def __repr__(self) -> str:
        return f"HFChat({self.fingerprint.model_id!r})"
