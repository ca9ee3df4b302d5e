"""The markers a spec block's fields carry in ``json_schema_extra``, and the lookup of marked fields.

A leaf module (it imports nothing from fairprobe), so :mod:`fairprobe.technique.block` and the
modules that declare block fields of their own (:mod:`fairprobe.judge.refusals`) share one definition
without importing each other.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

VERDICT_ONLY: dict[str, Any] = {"verdict_only": True}
"""Marks a block field that decides how a run is judged, never what it asks the model: pass it as
``Field(..., json_schema_extra=VERDICT_ONLY)``. Such a field is left out of the resume check (a
finished run re-judged with another limit asks the model nothing), stored beside the run, ignored by
``compare`` when it checks that two runs had the same inputs, and offered by the CLI and the API like
any other option."""

MODEL_URI: dict[str, Any] = {"model_uri": True}
"""Marks a block field that holds a model URI (or a list of them): ``model``, ``judges``,
``generator``. It is checked once, when the spec is validated (:func:`fairprobe.models.uri.check_model_uri`:
an error names ``spec.yaml:LINE`` before the run folder exists), and its execution options
(``?timeout=``, ``?retries=``) are left out of the resume check."""

_MARKED: WeakKeyDictionary[type, dict[str, frozenset[str]]] = WeakKeyDictionary()
"""Per block class, per marker: its marked fields (a class's fields are fixed once it is built)."""


def marked_fields(model: type, marker: str) -> frozenset[str]:
    """The fields of pydantic model class ``model`` whose ``json_schema_extra`` sets ``marker``;
    computed once per class and marker (every field's validation asks, on every validation)."""
    per_class = _MARKED.get(model)
    if per_class is None:
        per_class = _MARKED[model] = {}
    found = per_class.get(marker)
    if found is None:
        found = per_class[marker] = frozenset(
            name
            for name, info in model.model_fields.items()  # type: ignore[attr-defined]
            if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get(marker)
        )
    return found


def verdict_only_fields(model: type) -> frozenset[str]:
    """The fields of ``model`` marked :data:`VERDICT_ONLY`."""
    return marked_fields(model, "verdict_only")
