"""The YAML spec: the single place a spec is validated (DESIGN.md §2).

A spec file holds shared settings and one block per technique run::

    version: 1
    seed: 0                     # every random choice derives from it
    out: fairprobe-runs         # each block runs into OUT/<block name>
    thresholds:                 # fail conditions applied to every block (see below)
      - "error_rate.atomic > 0.10"
    hinter:                     # a technique block (or a list of blocks, each with a `name`)
      model: embedded:imdb-sentiment
      ...

A threshold is a *fail condition* ``METRIC OP VALUE`` where METRIC is a dotted path into the
summary's ``metrics`` and OP one of ``> >= < <= == !=``; the same grammar as ``--fail-on``.
Technique blocks are pydantic models registered by the technique packages
(:mod:`fairprobe.technique.registry`); an unknown block name is an error that lists the known ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from fairprobe.data.strict_yaml import compose_yaml, load_yaml
from fairprobe.errors import DataError, SpecError
from fairprobe.judge.thresholds import (  # re-exported: the spec is where users meet them
    DEFAULT_MAX_INVALID_RATE,
    Threshold,
    flatten_metric_paths,
    lookup_metric,
    walk_metric,
)
from fairprobe.technique.block import BlockBase, marked_fields, verdict_only_fields

__all__ = [
    "DEFAULT_MAX_INVALID_RATE",
    "BlockSpec",
    "Threshold",
    "flatten_metric_paths",
    "load_spec",
    "lookup_metric",
    "parse_spec",
    "walk_metric",
]


@dataclass
class BlockSpec:
    """One technique block of a spec, validated and resolved."""

    technique: str
    name: str
    block: BlockBase
    seed: int
    thresholds: list[Threshold]
    allow_empty: bool = False
    max_invalid_rate: float = DEFAULT_MAX_INVALID_RATE
    accept_untested: bool = False
    """Pass on the attributes shown within the gate only, when others lack evidence."""
    default_gates: bool = True
    """Apply the technique's default gates when no threshold is set (false after an explicit
    ``thresholds:``, even ``[]``, or ``--no-default-gates``)."""
    group: str | None = None
    """Blocks expanded from one block's ``models: [..]`` share a group (the block's name); each runs
    into ``OUT/<group>/<model>`` and every model is compared with the first."""

    def resolved(self) -> dict[str, Any]:
        """The block as run: defaults filled in; compared on resume. Secrets in model URIs are
        ``***`` (:func:`~fairprobe.models.uri.redact_uri`): this is what ``spec.yaml``, ``run.db``
        and ``summary.json`` hold, and a key never changes findings, so the resume check skips it."""
        from fairprobe.models.redact import redact_secrets

        return {
            "technique": self.technique,
            "seed": self.seed,
            "block": redact_secrets(self.block.model_dump(mode="json", exclude=self.not_findings())),
        }

    def not_findings(self) -> set[str]:
        """Block fields that never change the findings: where the run is written (``name``), the
        seed (resolved at the top level) and every field marked verdict-only."""
        return {"name", "seed", *verdict_only_fields(type(self.block))}

    def verdict_settings(self) -> dict[str, Any]:
        """The technique's own verdict-only fields as set (``max_asymmetric_invalid_rate``, ...):
        stored beside the run at every start or resume and given to the analysis, so a finished
        run re-judged with another limit asks the model nothing."""
        own = verdict_only_fields(type(self.block)) - set(BlockBase.model_fields)
        return self.block.model_dump(mode="json", include=own)

    def resolved_hash(self) -> str:
        """Hash of what decides the findings (execution-only settings left out, so a run resumes
        on another executor), including the content hash of every input file
        (:meth:`input_hashes`): an edited data file is a different run, never an old resume."""
        resolved = self.resolved()
        skip = getattr(type(self.block), "execution_only", frozenset())
        uris = marked_fields(type(self.block), "model_uri")
        resolved["block"] = {
            k: _without_execution_options(v) if k in uris else v
            for k, v in resolved["block"].items()
            if k not in skip
        }
        inputs = self.input_hashes()
        if inputs:  # left out when there are none, so such runs keep their earlier hash
            resolved["inputs"] = inputs
        text = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def input_hashes(self) -> dict[str, str]:
        """``{"field[=value]": sha256}`` of every local input file of the block.

        Text files are also checked to be UTF-8 here (one read serves both), so a file with stray
        bytes is one :class:`~fairprobe.errors.DataError` naming it before anything runs."""
        from fairprobe.data.readers import input_file_sha256

        declared = getattr(type(self.block), "input_files", None)
        skip = self.not_findings() | getattr(type(self.block), "execution_only", frozenset())
        out: dict[str, str] = {}
        for field_name, value in self.block:
            if field_name in skip or (declared is not None and field_name not in declared):
                continue
            values = value if isinstance(value, list | tuple) else [value]
            for item in values:
                if not isinstance(item, str) or not item or "\n" in item:
                    continue
                path = Path(item).expanduser()
                try:
                    is_file = path.is_file()
                except (OSError, ValueError):
                    is_file = False
                if is_file:
                    out[f"{field_name}={item}"] = input_file_sha256(path, f"{self.technique}.{field_name}")
        return out

    def resolved_yaml(self) -> str:
        doc = {
            "seed": self.seed,
            "thresholds": [str(t) for t in self.thresholds],
            "allow_empty": self.allow_empty,
            "max_invalid_rate": self.max_invalid_rate,
            "accept_untested": self.accept_untested,
        }
        doc[self.technique] = {"name": self.name, **self.resolved()["block"], **self.verdict_settings()}
        return yaml.safe_dump(doc, sort_keys=False)


def check_out(value: Any, source: str) -> None:
    """Refuse a spec ``out:`` that is absolute or climbs out of the spec's folder with ``..``
    (a shared spec must not write anywhere); ``--out`` on the command line may point anywhere."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{source}: out must be a folder name, e.g. out: fairprobe-runs")
    p = Path(value)
    if p.is_absolute() or value.startswith("~") or ".." in p.parts:
        raise SpecError(
            f"{source}: out {value!r} must be a relative folder without '..'; "
            "pass an absolute folder with --out instead"
        )


_TOP_LEVEL = {"version", "seed", "out", "thresholds", "allow_empty", "max_invalid_rate", "accept_untested"}


def _without_execution_options(value: Any) -> Any:
    """A model URI field's value (one URI or a list) without its execution options."""
    from fairprobe.models.uri import without_execution_options

    if isinstance(value, list):
        return [without_execution_options(v) if isinstance(v, str) else v for v in value]
    return without_execution_options(value) if isinstance(value, str) else value


def line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc`` (keys / list indices), or of its nearest parent."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == part), None)
            if pair is None:
                break
            line = pair[0].start_mark.line + 1
            node = pair[1]
            continue
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def _validation_message(
    exc: ValidationError, source: str, root: yaml.Node | None, prefix: tuple[Any, ...]
) -> str:
    err = exc.errors()[0]
    loc = prefix + tuple(err["loc"])
    line = line_of(root, loc)
    where = f"{source}:{line}" if line else source
    dotted = ".".join(str(p) for p in loc)
    if err["type"] == "extra_forbidden":
        return f"{where}: unknown field '{dotted}'; check its spelling against `fairprobe init`"
    return f"{where}: {dotted}: {err['msg'].removeprefix('Value error, ')}"


def parse_spec(
    text: str, source: str = "<spec>", techniques: dict[str, type[BlockBase]] | None = None
) -> list[BlockSpec]:
    """Validate spec ``text`` against the registered technique blocks and resolve it."""
    if techniques is None:
        from fairprobe.technique.registry import block_models

        techniques = block_models()
    root = compose_yaml(text, source)
    data = load_yaml(text, source)
    if data is None:
        raise SpecError(f"{source}: the spec is empty; write one with `fairprobe init`")
    if not isinstance(data, dict):
        raise SpecError(f"{source}:1: a spec is a mapping of settings and technique blocks")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SpecError(f"{source}:{line_of(root, ('seed',))}: seed must be an integer")
    version = data.get("version", 1)
    if isinstance(version, bool) or version != 1:
        raise SpecError(
            f"{source}:{line_of(root, ('version',))}: unsupported spec version {version!r}; use 1"
        )
    shared = data.get("thresholds", []) or []
    if not isinstance(shared, list):
        raise SpecError(f"{source}:{line_of(root, ('thresholds',))}: thresholds must be a list")
    try:
        shared_thresholds = [Threshold.parse(str(t)) for t in shared]
    except SpecError as exc:
        raise SpecError(f"{source}:{line_of(root, ('thresholds',))}: {exc}") from None

    allow_empty = data.get("allow_empty", False)
    if not isinstance(allow_empty, bool):
        raise SpecError(f"{source}:{line_of(root, ('allow_empty',))}: allow_empty must be true or false")
    accept_untested = data.get("accept_untested", False)
    if not isinstance(accept_untested, bool):
        raise SpecError(
            f"{source}:{line_of(root, ('accept_untested',))}: accept_untested must be true or false"
        )
    max_invalid = data.get("max_invalid_rate", DEFAULT_MAX_INVALID_RATE)
    if isinstance(max_invalid, bool) or not isinstance(max_invalid, int | float) or not 0 <= max_invalid <= 1:
        raise SpecError(
            f"{source}:{line_of(root, ('max_invalid_rate',))}: max_invalid_rate must be a number in [0, 1]"
        )

    blocks: list[BlockSpec] = []
    names: set[str] = set()
    for key, value in data.items():
        if key in _TOP_LEVEL:
            continue
        if key not in techniques:
            known = ", ".join(sorted(techniques)) or "(none installed)"
            raise SpecError(
                f"{source}:{line_of(root, (key,))}: unknown technique block '{key}'; known: {known}"
            )
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items):
            loc: tuple[Any, ...] = (key, index) if isinstance(value, list) else (key,)
            if not isinstance(item, dict):
                raise SpecError(f"{source}:{line_of(root, loc)}: block '{key}' must be a mapping of options")
            models = _models_of(item, source, line_of(root, (*loc, "models")))
            for model in models or [None]:
                one = {k: v for k, v in item.items() if k != "models"}
                if model is not None:
                    one["model"] = model
                try:
                    block = techniques[key].model_validate(one)
                except ValidationError as exc:
                    raise SpecError(_validation_message(exc, source, root, loc)) from None
                name = block.name or (key if len(items) == 1 else f"{key}-{index + 1}")
                group = name if models else None
                if group is not None:
                    name = f"{group}/{model_folder(str(model))}"
                if name in names:
                    raise SpecError(
                        f"{source}:{line_of(root, loc)}: two blocks are named '{name}'; give each a unique name"
                    )
                names.add(name)
                thresholds = shared_thresholds + [Threshold.parse(t) for t in block.thresholds]
                blocks.append(
                    BlockSpec(
                        key,
                        name,
                        block,
                        block.seed if block.seed is not None else seed,
                        thresholds,
                        allow_empty=block.allow_empty if block.allow_empty is not None else allow_empty,
                        max_invalid_rate=(
                            block.max_invalid_rate
                            if block.max_invalid_rate is not None
                            else float(max_invalid)
                        ),
                        group=group,
                        accept_untested=(
                            block.accept_untested if block.accept_untested is not None else accept_untested
                        ),
                        default_gates="thresholds" not in data and "thresholds" not in item,
                    )
                )
    if not blocks:
        known = ", ".join(sorted(techniques))
        raise SpecError(f"{source}: no technique block; add one of: {known}")
    return blocks


def _models_of(item: dict[str, Any], source: str, line: int | None) -> list[str] | None:
    """A block's ``models: [A, B, ...]`` (every model run over the same test cases), or ``None``."""
    if "models" not in item:
        return None
    models = item["models"]
    if "model" in item:
        raise SpecError(f"{source}:{line}: give either model: or models: in a block, not both")
    if not isinstance(models, list) or len(models) < 2 or not all(isinstance(m, str) and m for m in models):
        raise SpecError(f"{source}:{line}: models: must be a list of two or more model URIs")
    models = [m.strip() for m in models]
    if len(set(models)) != len(models) or len({model_folder(m) for m in models}) != len(models):
        raise SpecError(f"{source}:{line}: models: names the same model twice")
    return models


def model_folder(uri: str) -> str:
    """A folder name for a model URI: readable, without query options or credentials, unique.

    The hash covers what names the model, not how it is reached: execution options (``?timeout=``)
    and credentials (a rotated password) keep the folder, so a re-run resumes there."""
    import hashlib

    from fairprobe.models.redact import redact_uri

    uri = uri.strip()
    key = redact_uri(_without_execution_options(uri))
    plain = re.sub(r"\?[^#]*", "", uri)  # the query, before or after #MODEL
    visible = plain.split("#", 1)[-1] if "#" in plain else plain
    visible = visible.rsplit("@", 1)[-1]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", visible).strip("-.")[:48] or "model"
    return f"{slug}-{hashlib.sha256(key.encode()).hexdigest()[:6]}"


def load_spec(path: str | Path) -> tuple[list[BlockSpec], dict[str, Any]]:
    """Read and validate a spec file. Returns the blocks and the top-level settings."""
    from fairprobe.data.readers import read_text, require_file

    p = Path(path)
    try:
        require_file(p, "spec file", f"write an example with `fairprobe init {p}`")
    except DataError as exc:
        raise SpecError(str(exc)) from None

    text = read_text(p, "spec file")
    blocks = parse_spec(text, str(p))
    settings = load_yaml(text, str(p))
    if "out" in settings:
        check_out(settings["out"], str(p))
    return blocks, {k: settings[k] for k in _TOP_LEVEL if k in settings}
