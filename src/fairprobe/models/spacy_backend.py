"""``spacy:PATH`` — a spaCy text-classification pipeline as a :class:`Classifier` (DESIGN.md §3).

Single-label pipelines (``textcat``) predict the argmax of ``doc.cats``; multi-label pipelines
(``textcat_multilabel``) predict every label whose score is at least ``threshold`` (0.5).
The weights hash covers ``meta.json``, ``config.cfg`` and each component's ``model`` file:
cheap to compute, and it changes whenever the trained weights change.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from fairprobe.errors import ModelError
from fairprobe.models.base import Fingerprint, Prediction
from fairprobe.models.hashing import files_sha256

SINGLE_LABEL_FACTORIES = ("textcat",)
MULTI_LABEL_FACTORIES = ("textcat_multilabel",)


def spacy_weights_hash(path: Path) -> str:
    """Hash of a saved pipeline's ``meta.json``, ``config.cfg`` and ``*/model`` weight files."""
    files = [path / "meta.json", path / "config.cfg", *sorted(path.glob("*/model"))]
    return files_sha256(path, files)


class SpacyClassifier:
    """A spaCy pipeline with a ``textcat`` or ``textcat_multilabel`` component.

    Args:
        path: directory of a pipeline saved with ``nlp.to_disk``.
        component: name of the text-classification component (default: the first one found).
        threshold: minimum score of a predicted label in multi-label pipelines.
        batch_size: texts per ``nlp.pipe`` batch.
        model_id: name shown in the fingerprint (default: ``spacy:PATH``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        component: str | None = None,
        threshold: float = 0.5,
        batch_size: int = 64,
        model_id: str | None = None,
        quiet_version_warning: bool = False,
    ):
        self.path = Path(path).expanduser()
        if not (self.path / "meta.json").is_file() and not (self.path / "config.cfg").is_file():
            what = "does not exist" if not self.path.exists() else "is not a saved spaCy pipeline"
            raise ModelError(
                f"spaCy model directory {self.path} {what}; give the folder written by nlp.to_disk"
            )
        try:
            import spacy
        except ImportError as exc:  # pragma: no cover - spacy is installed by `make install`
            raise ModelError("spacy: models need spaCy: pip install 'fairprobe[nlp]'") from exc
        with warnings.catch_warnings():
            if quiet_version_warning:
                warnings.filterwarnings("ignore", message=r".*\[W095\].*")
            try:
                self.nlp = spacy.load(self.path)
            except (OSError, ValueError, TypeError, KeyError) as exc:  # missing or corrupt files
                raise ModelError(
                    f"cannot load spaCy pipeline {self.path} ({type(exc).__name__}: {exc}); re-save it with nlp.to_disk"
                ) from exc
        self.component = component or self._find_component()
        if self.component not in self.nlp.pipe_names:
            raise ModelError(
                f"spaCy pipeline {self.path} has no component {self.component!r}; it has {self.nlp.pipe_names}"
            )
        factory = self.nlp.get_pipe_meta(self.component).factory
        self.multi_label = factory in MULTI_LABEL_FACTORIES
        self.labels: tuple[str, ...] = tuple(self.nlp.get_pipe(self.component).labels)
        self.threshold = float(threshold)
        self.batch_size = int(batch_size)
        params: dict[str, Any] = {"component": self.component, "multi_label": self.multi_label}
        if self.multi_label:
            params["threshold"] = self.threshold
        self.fingerprint = Fingerprint(
            backend="spacy",
            model_id=model_id or f"spacy:{self.path}",
            weights=spacy_weights_hash(self.path),
            params=params,
        )

    def _find_component(self) -> str:
        for name in self.nlp.pipe_names:
            if self.nlp.get_pipe_meta(name).factory in SINGLE_LABEL_FACTORIES + MULTI_LABEL_FACTORIES:
                return name
        raise ModelError(
            f"spaCy pipeline {self.path} has no textcat or textcat_multilabel component "
            f"(components: {self.nlp.pipe_names}); train one with `spacy train`"
        )

    def predict(self, texts: list[str]) -> list[Prediction]:
        """One :class:`Prediction` per text, scores = ``doc.cats``."""
        out: list[Prediction] = []
        for doc in self.nlp.pipe(list(texts), batch_size=self.batch_size):
            scores = {lab: float(doc.cats[lab]) for lab in self.labels if lab in doc.cats}
            if self.multi_label:
                labels = frozenset(lab for lab, s in scores.items() if s >= self.threshold)
            else:
                labels = frozenset([max(scores, key=lambda lab: scores[lab])]) if scores else frozenset()
            out.append(Prediction(labels, scores))
        return out

    def __repr__(self) -> str:
        return f"SpacyClassifier({str(self.path)!r}, component={self.component!r})"
