"""Strict YAML reading for every YAML file fairprobe reads: specs, bias dictionaries, CAFFE case
files, attribute catalogues.

PyYAML's ``safe_load`` keeps the last of two equal keys silently (a second ``data:`` replaced the
first), recurses once per nesting level (a spec nested 5,000 deep crashed with RecursionError) and
expands aliases without bound ("billion laughs"). :class:`YamlLoader` refuses all three, and
:func:`load_yaml` / :func:`compose_yaml` turn every YAML problem into one error naming the file and
line.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from fairprobe.errors import FairprobeError, SpecError

MAX_YAML_DEPTH = 100
"""Deepest nesting of mappings / lists read from a YAML file: a spec nested 5,000 deep overflowed
the parser's recursion (exit 3); no fairprobe file needs more than a handful of levels."""


MAX_YAML_NODES = 1_000_000
"""Most values a YAML file may expand to through its aliases: nine nested lists of nine aliases
each ("billion laughs") ran for minutes and GBs before any check."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Values ``node`` stands for once every alias is expanded; linear in the distinct nodes."""
    key = id(node)
    if key not in memo:
        memo[key] = 1  # a node that refers to itself (a recursive alias) counts once
        children = (
            [c for pair in node.value for c in pair]
            if isinstance(node, yaml.MappingNode)
            else (node.value if isinstance(node, yaml.SequenceNode) else [])
        )
        memo[key] = 1 + sum(_expanded_size(c, memo) for c in children)
    return memo[key]


class YamlLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping (YAML's last-one-wins
    silently dropped the first ``data:``) and nesting deeper than :data:`MAX_YAML_DEPTH`.
    Every YAML file fairprobe reads (specs, dictionaries, case files, catalogues) goes through it."""

    _depth = 0

    def compose_document(self) -> yaml.Node | None:
        node = super().compose_document()
        if node is not None and _expanded_size(node, {}) > MAX_YAML_NODES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"its aliases (*name) expand to more than {MAX_YAML_NODES:,} values; write the values out",
                node.start_mark,
            )
        return node

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_YAML_DEPTH} levels deep", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_scalar_node(self, anchor: str | None) -> yaml.ScalarNode:
        node = super().compose_scalar_node(anchor)
        bad = _SURROGATE.search(node.value)
        if bad:  # a "\\ud800" escape: not text, and it broke the first file name or store write
            raise yaml.composer.ComposerError(
                None,
                None,
                f"a lone surrogate \\u{ord(bad.group()):04x} (half of a UTF-16 pair) is not text; "
                "remove it or write the character itself",
                node.start_mark,
            )
        return node

    def compose_mapping_node(self, anchor: str | None) -> yaml.MappingNode:
        node = super().compose_mapping_node(anchor)
        seen: dict[str, yaml.Node] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            if key.value in seen:
                first = seen[key.value].start_mark.line + 1
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"key '{key.value}' appears twice (lines {first} and {key.start_mark.line + 1}); keep one",
                    key.start_mark,
                )
            seen[key.value] = key
        return node


def _yaml_error(exc: yaml.YAMLError, source: str, error: type[FairprobeError]) -> FairprobeError:
    mark = getattr(exc, "problem_mark", None)
    where = f"{source}:{mark.line + 1}" if mark else source
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return error(f"{where}: malformed YAML: {problem}")


def compose_yaml(text: str, source: str, error: type[FairprobeError] = SpecError) -> yaml.Node | None:
    """The node tree of YAML ``text`` (for line numbers) through :class:`YamlLoader`; a syntax error,
    a duplicate key or too deep nesting is one ``error`` naming ``source`` and the line."""
    try:
        return yaml.compose(text, Loader=YamlLoader)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, error) from None


def load_yaml(text: str, source: str, error: type[FairprobeError] = SpecError) -> Any:
    """YAML ``text`` as Python data through :class:`YamlLoader` (see :func:`compose_yaml`)."""
    try:
        return yaml.load(text, Loader=YamlLoader)  # noqa: S506 - YamlLoader is a SafeLoader
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, error) from None
