"""The 14 metamorphic relations (metafair.txt §3.1, Tables 1–2), loaded from ``relations.yaml``.

Each relation is data: input transformation, output relation, the answer-format instructions for the
model under test, the oracle of Table 2 and (for closed-ended MRs) the answer parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any

from fairprobe.data.strict_yaml import load_yaml
from fairprobe.errors import UsageError
from fairprobe.lexicons.metafair_catalogue import DIMENSIONS

ORACLES = {"judge_pair", "judge_follow_up", "numeric_difference", "answers_differ", "rank_correlation"}
PARSERS = {"score", "yes_no", "choice", "ranking"}


@dataclass(frozen=True, eq=False)
class Relation:
    """One metamorphic relation as declared in ``relations.yaml``."""

    id: str
    name: str
    transformation: str
    relation: str
    attributes: int
    dimensions: tuple[str, ...]
    format: str
    oracle: str
    generation: str
    example: dict[str, str]
    judge_template: str | None = None
    parser: str | None = None
    follow_up_template: str | None = None
    follow_up_format: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def uses_judge(self) -> bool:
        return self.oracle.startswith("judge")

    @property
    def inverted(self) -> bool:
        """MR8–MR10: the follow-up embeds the source response R (§3.1.8–3.1.10)."""
        return self.follow_up_template is not None

    def follow_up_prompt(self, question: str, response: str) -> str:
        """P′ of an inverted-consistency MR: R embedded into the suitability question (Table 1, MR8)."""
        assert self.follow_up_template is not None
        return self.follow_up_template.format(question=question.strip(), response=" ".join(response.split()))


def _relation(mr_id: str, data: dict[str, Any]) -> Relation:
    dims = data.get("dimensions", "all")
    dimensions = DIMENSIONS if dims == "all" else tuple(dims)
    rel = Relation(
        id=mr_id,
        name=data["name"],
        transformation=data["transformation"],
        relation=data["relation"],
        attributes=int(data["attributes"]),
        dimensions=dimensions,
        format=" ".join(str(data["format"]).split()),
        oracle=data["oracle"],
        generation=" ".join(str(data["generation"]).split()),
        example=dict(data["example"]),
        judge_template=data.get("judge_template"),
        parser=data.get("parser"),
        follow_up_template=" ".join(data["follow_up_template"].split())
        if data.get("follow_up_template")
        else None,
        follow_up_format=data.get("follow_up_format"),
    )
    assert rel.oracle in ORACLES, f"{mr_id}: unknown oracle {rel.oracle}"
    assert rel.parser is None or rel.parser in PARSERS, f"{mr_id}: unknown parser {rel.parser}"
    assert rel.transformation in {"addition", "replacement"}, f"{mr_id}: bad transformation"
    return rel


@cache
def relations() -> dict[str, Relation]:
    """All 14 relations by id (``"MR1"`` … ``"MR14"``), in order."""
    text = files("fairprobe.methods.metafair").joinpath("relations.yaml").read_text(encoding="utf-8")
    data = load_yaml(text, "relations.yaml")
    return {mr_id: _relation(mr_id, d) for mr_id, d in data["relations"].items()}


def select_relations(names: list[str] | str) -> list[Relation]:
    """Relations named in ``names`` ("all", or ids such as MR1 / mr1 / 1), in MR order."""
    table = relations()
    if names == "all" or names == ["all"]:
        return list(table.values())
    chosen = []
    for raw in [names] if isinstance(names, str) else names:
        key = str(raw).strip().upper()
        key = key if key.startswith("MR") else f"MR{key}"
        if key not in table:
            raise UsageError(f"unknown metamorphic relation '{raw}'; use MR1 … MR14 or 'all'")
        chosen.append(table[key])
    return sorted({r.id: r for r in chosen}.values(), key=lambda r: int(r.id[2:]))


def select_dimensions(names: list[str] | str) -> list[str]:
    """Dimensions named in ``names`` ("all", or snake_case ids), in catalogue order."""
    if names == "all" or names == ["all"]:
        return list(DIMENSIONS)
    wanted = [names] if isinstance(names, str) else names
    unknown = [d for d in wanted if d not in DIMENSIONS]
    if unknown:
        raise UsageError(
            f"unknown bias dimension(s) {', '.join(unknown)}; use {', '.join(DIMENSIONS)} or 'all'"
        )
    return [d for d in DIMENSIONS if d in wanted]
