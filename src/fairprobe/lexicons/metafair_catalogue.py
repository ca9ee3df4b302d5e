"""Loader of the Meta-Fair attribute catalogue (metafair.txt §5.1): five bias dimensions with their
attributes, and the proper nouns of MR5 (common first names per gender, popular names per faith).

The packaged ``metafair_catalogue.yaml`` is used unless a user file of the same shape is given.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from fairprobe.data.readers import read_text, require_file
from fairprobe.data.strict_yaml import load_yaml
from fairprobe.errors import DataError

DIMENSIONS = ("gender", "sexual_orientation", "religion", "socioeconomic_status", "physical_appearance")


@dataclass(frozen=True)
class Catalogue:
    """Attributes per dimension, and MR5 names per dimension → group → names."""

    attributes: dict[str, list[str]]
    names: dict[str, dict[str, list[str]]]

    def draw(self, dimension: str, k: int, rng: random.Random) -> list[str]:
        """``k`` distinct attributes of ``dimension`` drawn with ``rng`` (all of them when fewer)."""
        pool = self.attributes[dimension]
        return rng.sample(pool, min(k, len(pool)))

    def draw_names(self, dimension: str, k: int, rng: random.Random) -> list[tuple[str, str]]:
        """``k`` (group, name) pairs of ``dimension`` for MR5, drawn with ``rng``."""
        pool = [(group, name) for group, names in self.names.get(dimension, {}).items() for name in names]
        return rng.sample(pool, min(k, len(pool)))


def load_catalogue(path: str | Path | None = None) -> Catalogue:
    """Read the catalogue from ``path`` (YAML with ``dimensions`` and ``names``), or the packaged one."""
    if path is None:
        text = files("fairprobe.lexicons").joinpath("metafair_catalogue.yaml").read_text(encoding="utf-8")
        source = "packaged metafair_catalogue.yaml"
    else:
        p = require_file(Path(path), "attribute catalogue", "give a YAML file with 'dimensions' and 'names'")
        text, source = read_text(p, "attribute catalogue"), str(p)
    data = load_yaml(text, source, DataError) or {}
    if not isinstance(data, dict):
        raise DataError(f"{source}: needs a 'dimensions' mapping of dimension -> list of attributes")
    dims = data.get("dimensions")
    if not isinstance(dims, dict) or not dims:
        raise DataError(f"{source}: needs a 'dimensions' mapping of dimension -> list of attributes")
    attributes: dict[str, list[str]] = {}
    for dim, values in dims.items():
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) and v.strip() for v in values)
        ):
            raise DataError(f"{source}: dimension '{dim}' must list at least one attribute (strings)")
        attributes[str(dim)] = [v.strip() for v in values]
    names: dict[str, dict[str, list[str]]] = {}
    for dim, groups in (data.get("names") or {}).items():
        if not isinstance(groups, dict):
            raise DataError(f"{source}: names.{dim} must map a group to a list of names")
        names[str(dim)] = {str(g): [str(n) for n in ns] for g, ns in groups.items()}
    return Catalogue(attributes, names)
