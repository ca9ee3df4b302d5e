"""The base class of every technique's spec block: the fields every block has (name, seed,
thresholds, allow_empty, max_invalid_rate) and the class-level declarations the run engine reads.

A technique package subclasses :class:`BlockBase` with its own options (pydantic fields, each with a
``description``): that one declaration gives the spec's validation, the command-line options and the
Python API's keyword arguments (:mod:`fairprobe.cli.build`). A field marked
:data:`~fairprobe.technique.markers.VERDICT_ONLY` or :data:`~fairprobe.technique.markers.MODEL_URI`
(defined in :mod:`fairprobe.technique.markers`, re-exported here) gets the treatment its marker names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from fairprobe.judge.thresholds import Threshold
from fairprobe.technique.markers import MODEL_URI, VERDICT_ONLY, marked_fields, verdict_only_fields

__all__ = [
    "MODEL_URI",
    "VERDICT_ONLY",
    "BlockBase",
    "check_folder_name",
    "marked_fields",
    "verdict_only_fields",
]


class BlockBase(BaseModel):
    """Fields every technique block has. Technique packages subclass it."""

    model_config = ConfigDict(
        extra="forbid", allow_inf_nan=False
    )  # NaN compares false: a NaN bound never fires

    name: str | None = Field(default=None, description="run directory name (defaults to the technique)")
    seed: int | None = Field(default=None, description="overrides the spec-wide seed for this block")
    thresholds: list[str] = Field(
        default_factory=list, description="fail conditions, METRIC OP VALUE", json_schema_extra=VERDICT_ONLY
    )
    allow_empty: bool | None = Field(
        default=None,
        description="pass a threshold whose metric has no data (n = 0) and a run that tested nothing "
        "(default false: both fail)",
        json_schema_extra=VERDICT_ONLY,
    )
    accept_untested: bool | None = Field(
        default=None,
        description="accept a pass on the attributes the run shows within the gate only, when others "
        "lack the evidence (default false: such a run is inconclusive)",
        json_schema_extra=VERDICT_ONLY,
    )
    max_invalid_rate: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="the run is inconclusive (exit 1) when this share or more of its answers are "
        "invalid (default 0.5)",
        json_schema_extra=VERDICT_ONLY,
    )

    execution_only: ClassVar[frozenset[str]] = frozenset()
    """Fields that never change findings (left out of the resume check)."""

    @model_validator(mode="before")
    @classmethod
    def _no_flag_for_a_number(cls, data: Any) -> Any:
        """``order: true`` is a typo, not the number 1 (pydantic would read it so): refused."""
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                value = data.get(name)
                numeric = field.annotation in (int, float, int | None, float | None)
                if isinstance(value, bool) and numeric:
                    raise ValueError(
                        f"{name}: {str(value).lower()} is not a number; give a number, e.g. {name}: 2"
                    )
        return data

    input_files: ClassVar[frozenset[str] | None] = None
    """Fields that name input files (data, dictionary, case, tests, KB, ...): the resume check hashes
    their content, so an edited file is a different run. ``None`` (the default) means every string
    or list-of-strings field whose value names an existing local file; names like ``imdb-sample``
    or ``hf:NAME`` are not files and are left out."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str | None) -> str | None:
        if value is not None:
            check_folder_name(value, "name")
        return value

    @field_validator("*")
    @classmethod
    def _check_model_uris(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name not in marked_fields(cls, "model_uri") or value is None:
            return value
        from fairprobe.errors import ModelError
        from fairprobe.models.uri import check_model_uri

        for uri in value if isinstance(value, list) else [value]:
            try:
                check_model_uri(uri)
            except ModelError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("thresholds")
    @classmethod
    def _check_thresholds(cls, value: list[str]) -> list[str]:
        for text in value:
            Threshold.parse(text)
        return value


def check_folder_name(value: str, what: str) -> str:
    """Refuse a run-folder ``name`` that would leave the ``out`` folder (``../x``, ``/abs``, ``a/b``)."""
    if (
        not value.strip()
        or value in (".", "..")
        or "/" in value
        or "\\" in value
        or "\0" in value
        or Path(value).is_absolute()
    ):
        raise ValueError(
            f"{what} {value!r} must be a plain folder name (no '/', '..' or absolute path): "
            "run folders stay inside `out`"
        )
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):  # a newline would split every line it is in
        raise ValueError(f"{what} {value[:60]!r} holds a control character (a line break?); remove it")
    if len(value.encode("utf-8", "replace")) > 200:  # a folder name: file systems allow 255 bytes
        raise ValueError(f"{what} {value[:60]!r}... is {len(value)} characters long; give at most 200")
    return value
