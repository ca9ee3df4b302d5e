"""The grouped YAML format of bias dictionaries (``cross``, ``adjectives``, ``swap``, ``pairs``, ``map``,
``modify`` blocks and the ``scope: people`` marker): see :mod:`fairprobe.lexicons.dictionary` and
the header of the packaged ``bias_dictionary.yaml``. Every bad entry raises
:class:`~fairprobe.errors.DataError` naming the file and the line."""

from __future__ import annotations

from pathlib import Path

import yaml

from fairprobe.data.readers import read_text
from fairprobe.data.strict_yaml import YamlLoader
from fairprobe.errors import DataError
from fairprobe.lexicons.terms import check_term, normalise_term, skip_self_pair

__all__ = ["read_yaml"]

_BLOCK_KINDS = ("cross", "adjectives", "swap", "pairs", "map", "modify", "scope")
_SCOPES = ("people",)


def read_yaml(
    path: Path, skipped: list[str], capitalised: dict[str, set[str]], scoped: set[str]
) -> tuple[dict[str, list[tuple[str, str]]], dict[str, set[str]]]:
    try:
        root = yaml.compose(read_text(path, "dictionary"), Loader=YamlLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DataError(f"{path}{where}: not valid YAML ({problem}); fix the syntax there.") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text; save the dictionary as UTF-8.") from None
    if root is None:
        raise DataError(f"{path}: file is empty; add `attribute: [blocks]` entries.")
    if not isinstance(root, yaml.MappingNode):
        raise DataError(f"{path}, line {_line(root)}: top level must map attribute names to block lists.")
    out: dict[str, list[tuple[str, str]]] = {}
    person_only: dict[str, set[str]] = {}
    for key_node, blocks in root.value:
        attribute = _scalar(key_node, path, "attribute name")
        if attribute in out:
            raise DataError(
                f"{path}, line {_line(key_node)}: attribute {attribute!r} appears twice; merge them."
            )
        if not isinstance(blocks, yaml.SequenceNode) or not blocks.value:
            raise DataError(
                f"{path}, line {_line(blocks)}: attribute {attribute!r} needs a non-empty list of "
                f"blocks ({', '.join(_BLOCK_KINDS)})."
            )
        pairs: list[tuple[str, str]] = []
        adjectives: set[str] = set()
        others: set[str] = set()
        for block in blocks.value:
            if _scope(block, path) is not None:
                scoped.add(attribute)
                continue
            block_pairs, block_adjectives = _read_block(block, path, skipped)
            pairs.extend(block_pairs)
            if _is_capitalised_map(block, path):
                capitalised.setdefault(attribute, set()).update(normalise_term(w) for w, _ in block_pairs)
            if block_adjectives:
                adjectives.update(normalise_term(t) for t in block_adjectives)
            else:
                others.update(normalise_term(t) for pair in block_pairs for t in pair)
        if not pairs:
            raise DataError(
                f"{path}, line {_line(blocks)}: attribute {attribute!r} has no word pairs; add a block "
                f"({', '.join(k for k in _BLOCK_KINDS if k != 'scope')})."
            )
        out[attribute] = pairs
        person_only[attribute] = adjectives - others  # "blonde" is a noun too ("the blonde")
    return out, person_only


def _scope(block: yaml.Node, path: Path) -> str | None:
    """The value of a ``scope:`` block (``people``), or None for any other block."""
    if not isinstance(block, yaml.MappingNode) or len(block.value) != 1:
        return None
    key, body = block.value[0]
    if not isinstance(key, yaml.ScalarNode) or key.value != "scope":
        return None
    value = _scalar(body, path, "scope")
    if value not in _SCOPES:
        raise DataError(
            f"{path}, line {_line(body)}: unknown scope {value!r}; use `scope: people` (terms replaced "
            "only where they name or describe people)."
        )
    return value


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _scalar(node: yaml.Node, path: Path, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
        raise DataError(f"{path}, line {_line(node)}: expected a {what} (a plain string) here.")
    return str(node.value)


def _term(node: yaml.Node, path: Path) -> str:
    return check_term(_scalar(node, path, "term"), path, _line(node))


def _terms(node: yaml.Node, path: Path, what: str) -> list[tuple[str, int]]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise DataError(f"{path}, line {_line(node)}: {what} must be a non-empty list of terms.")
    return [(_term(item, path), _line(item)) for item in node.value]


def _read_block(block: yaml.Node, path: Path, skipped: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """A block's pairs, and the terms it marks person-only (``adjectives`` blocks)."""
    if not isinstance(block, yaml.MappingNode) or len(block.value) != 1:
        raise DataError(
            f"{path}, line {_line(block)}: each block is a one-key mapping: "
            f"{', '.join(k + ':' for k in _BLOCK_KINDS)}"
        )
    key_node, body = block.value[0]
    kind = _scalar(key_node, path, "block kind")
    if kind == "cross":
        return _cross(_groups(body, path, "cross"), path), []
    if kind == "adjectives":
        groups = _groups(body, path, "adjectives")
        return _cross(groups, path), [t for terms in groups.values() for t, _ in terms]
    if kind in ("swap", "pairs"):
        return _rows(body, path, both=kind == "swap", skipped=skipped), []
    if kind == "map":
        return _map(body, path, skipped), []
    if kind == "modify":
        return _modify(body, path), []
    raise DataError(
        f"{path}, line {_line(key_node)}: unknown block kind {kind!r}; use one of {', '.join(_BLOCK_KINDS)}."
    )


def _groups(node: yaml.Node, path: Path, what: str) -> dict[str, list[tuple[str, int]]]:
    if not isinstance(node, yaml.MappingNode) or len(node.value) < 2:
        raise DataError(f"{path}, line {_line(node)}: {what} needs a mapping of at least two named groups.")
    groups: dict[str, list[tuple[str, int]]] = {}
    owner: dict[str, str] = {}
    for name_node, terms_node in node.value:
        name = _scalar(name_node, path, "group name")
        if name in groups:
            raise DataError(f"{path}, line {_line(name_node)}: group {name!r} appears twice in this block.")
        terms = _terms(terms_node, path, f"group {name!r}")
        for term, line in terms:
            other = owner.setdefault(normalise_term(term), name)
            if other != name:
                raise DataError(
                    f"{path}, line {line}: term {term!r} is in groups {other!r} and {name!r} of one "
                    "block; keep it in one group."
                )
        groups[name] = terms
    return groups


def _cross(groups: dict[str, list[tuple[str, int]]], path: Path) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for name, terms in groups.items():
        for other, other_terms in groups.items():
            if other != name:
                pairs.extend((w, r) for w, _ in terms for r, _ in other_terms)
    return pairs


def _map_parts(node: yaml.Node, path: Path) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise DataError(f"{path}, line {_line(node)}: map needs `words:` and `replacements:`.")
    parts = {_scalar(k, path, "map key"): v for k, v in node.value}
    unknown = [k for k in parts if k not in ("words", "replacements", "capitalised")]
    if unknown or "words" not in parts or "replacements" not in parts:
        raise DataError(
            f"{path}, line {_line(node)}: map needs the keys words and replacements (and optionally "
            f"capitalised: true)" + (f"; unknown: {', '.join(unknown)}" if unknown else "") + "."
        )
    return parts


def _map(node: yaml.Node, path: Path, skipped: list[str]) -> list[tuple[str, str]]:
    parts = _map_parts(node, path)
    words = _terms(parts["words"], path, "words")
    replacements = _terms(parts["replacements"], path, "replacements")
    pairs = []
    for word, line in words:
        for replacement, _ in replacements:
            if normalise_term(word) == normalise_term(replacement):
                skip_self_pair(skipped, f"{path}, line {line}", word)
            else:
                pairs.append((word, replacement))
    return pairs


def _is_capitalised_map(block: yaml.Node, path: Path) -> bool:
    key, body = block.value[0]
    if key.value != "map":
        return False
    flag = _map_parts(body, path).get("capitalised")
    return flag is not None and str(flag.value).lower() == "true"


def _rows(node: yaml.Node, path: Path, both: bool, skipped: list[str]) -> list[tuple[str, str]]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise DataError(f"{path}, line {_line(node)}: expected a non-empty list of [word, replacement] rows.")
    pairs: list[tuple[str, str]] = []
    for row in node.value:
        if not isinstance(row, yaml.SequenceNode) or len(row.value) != 2:
            raise DataError(
                f"{path}, line {_line(row)}: each row must be a [word, replacement] list of two terms."
            )
        word, replacement = _term(row.value[0], path), _term(row.value[1], path)
        if normalise_term(word) == normalise_term(replacement):
            skip_self_pair(skipped, f"{path}, line {_line(row)}", word)
            continue
        pairs.append((word, replacement))
        if both:
            pairs.append((replacement, word))
    return pairs


def _modify(node: yaml.Node, path: Path) -> list[tuple[str, str]]:
    if not isinstance(node, yaml.MappingNode):
        raise DataError(f"{path}, line {_line(node)}: modify needs `heads:` and `modifiers:`.")
    parts = {_scalar(k, path, "modify key"): (k, v) for k, v in node.value}
    unknown = [k for k in parts if k not in ("heads", "modifiers")]
    if unknown or "heads" not in parts or "modifiers" not in parts:
        line = _line(parts[unknown[0]][0]) if unknown else _line(node)
        raise DataError(
            f"{path}, line {line}: modify needs exactly the keys heads and modifiers"
            + (f" (unknown: {', '.join(unknown)})" if unknown else "")
            + "."
        )
    heads = _terms(parts["heads"][1], path, "heads")
    mod_node = parts["modifiers"][1]
    if not isinstance(mod_node, yaml.MappingNode) or not mod_node.value:
        raise DataError(f"{path}, line {_line(mod_node)}: modifiers must map group names to term lists.")
    groups = {_scalar(k, path, "group name"): _terms(v, path, "modifier group") for k, v in mod_node.value}
    pairs: list[tuple[str, str]] = []
    for head, _ in heads:
        for name, mods in groups.items():
            for mod, _ in mods:
                phrase = f"{mod} {head}"
                pairs.append((head, phrase))
                pairs.append((phrase, head))
                for other, other_mods in groups.items():
                    if other != name:
                        pairs.extend((phrase, f"{m2} {head}") for m2, _ in other_mods)
    return pairs
