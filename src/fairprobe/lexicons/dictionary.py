"""Bias dictionary: directed word pairs per sensitive attribute (HInter §3 Step 1, §4).

HInter mutates a text by replacing a *bias-prone* word with its counterpart from a bias
dictionary ``P`` (HInter Table 2: "P, the set of bias pairs"; ``P[S]`` the pairs of sensitive
attribute ``S``). Algorithm 2 line 4 takes ``p[0]`` as the word to find and ``p[1]`` as its
replacement, so every pair here is *directed*: ``(word, replacement)``.

Two file formats are read:

* YAML, grouped (the packaged ``bias_dictionary.yaml``; its header documents the format):
  ``cross`` groups (cross product between groups, both directions), ``adjectives`` (a ``cross``
  block whose terms are adjectives that mutate only where they describe a person: see
  :meth:`BiasDictionary.person_only`), ``swap`` rows (both directions), ``pairs`` rows (one
  direction), ``map`` blocks (every word -> every replacement, one direction; with
  ``capitalised: true`` the words match only where written with a capital, for demonyms that are
  also common words: "Pole", "Finn", "Latin"), ``modify`` blocks (heads x modifiers) and the
  ``scope: people`` marker (every term of the attribute is a *group word*, replaced only where it
  names or describes people: see :meth:`BiasDictionary.people_scoped`, issue 39).
* CSV with header ``attribute,word,replacement`` (one directed pair per row; further columns,
  such as the ``count`` column written by :func:`fairprobe.lexicons.sbic.write_candidates`, are
  ignored).

Every bad entry raises :class:`~fairprobe.errors.DataError` naming the file and the line, except
a self-pair (``teenage;teenage``, as in the authors' published lists): it is skipped with a
warning naming the file and line, and listed in :attr:`BiasDictionary.skipped` (issue 20).
"""

from __future__ import annotations

import csv
import functools
import io
import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from fairprobe.errors import DataError
from fairprobe.readers import read_text, require_file
from fairprobe.strict_yaml import YamlLoader

__all__ = [
    "BiasDictionary",
    "load_dictionary",
    "normalise_term",
    "is_valid_term",
    "PACKAGED_DICTIONARY",
    "PACKAGED_NOTICE",
]

#: The dictionary shipped with fairprobe: race, nationality, religion, gender, gender_stereotype,
#: sexual_orientation, body, age, disability.
PACKAGED_DICTIONARY = Path(__file__).with_name("bias_dictionary.yaml")
#: Where each attribute of the packaged dictionary comes from, and under which licence.
PACKAGED_NOTICE = Path(__file__).with_name("bias_dictionary.NOTICE")

_TERM_RE = re.compile(r"^\w(?:[\w'\- ]*\w)?$")
_BLOCK_KINDS = ("cross", "adjectives", "swap", "pairs", "map", "modify", "scope")
_SCOPES = ("people",)


def is_valid_term(term: str) -> bool:
    """Letters, digits, spaces, hyphens and apostrophes; starts and ends with a letter or digit."""
    return bool(_TERM_RE.match(" ".join(term.split())))


def normalise_term(term: str) -> str:
    """The matching key of a term: lower case, inner whitespace collapsed to one space."""
    return " ".join(term.lower().split())


class BiasDictionary:
    """Directed word pairs per attribute; read-only once built.

    ``pairs(attribute)`` keeps the file order (Algorithm 2 iterates ``P`` in order) with each
    pair once; two pairs are the same when their words match case-insensitively.
    """

    def __init__(
        self,
        pairs: Mapping[str, Iterable[tuple[str, str]]],
        source: str = "<memory>",
        person_only: Mapping[str, Iterable[str]] | None = None,
        skipped: Iterable[str] = (),
        capitalised: Mapping[str, Iterable[str]] | None = None,
        people_scoped: Iterable[str] = (),
    ) -> None:
        self.source = source
        self._people_scoped = frozenset(people_scoped)
        self._capitalised = {
            a: frozenset(normalise_term(t) for t in ts) for a, ts in (capitalised or {}).items()
        }
        self.skipped: list[str] = list(skipped)
        """Self-pairs skipped while reading (each a "where: word" note)."""
        self._person_only = {
            a: frozenset(normalise_term(t) for t in ts) for a, ts in (person_only or {}).items()
        }
        self._pairs: dict[str, tuple[tuple[str, str], ...]] = {}
        for attribute, rows in pairs.items():
            seen: set[tuple[str, str]] = set()
            kept: list[tuple[str, str]] = []
            for word, replacement in rows:
                word, replacement = " ".join(word.split()), " ".join(replacement.split())
                key = (normalise_term(word), normalise_term(replacement))
                if key[0] == key[1]:
                    _skip_self_pair(self.skipped, f"{source}: attribute {attribute!r}", word)
                    continue
                if key not in seen:
                    seen.add(key)
                    kept.append((word, replacement))
            self._pairs[attribute] = tuple(kept)

    @property
    def attributes(self) -> tuple[str, ...]:
        """The attribute names, in file order."""
        return tuple(self._pairs)

    def _check(self, attribute: str) -> tuple[tuple[str, str], ...]:
        try:
            return self._pairs[attribute]
        except KeyError:
            known = ", ".join(self._pairs) or "none"
            raise DataError(
                f"bias dictionary {self.source} has no attribute {attribute!r}; known attributes: {known}."
            ) from None

    def pairs(self, attribute: str) -> list[tuple[str, str]]:
        """Directed ``(word, replacement)`` pairs of ``attribute`` (HInter's ``P[S]``)."""
        return list(self._check(attribute))

    def terms(self, attribute: str) -> list[str]:
        """Distinct terms (words and replacements) of ``attribute``, first spelling kept."""
        seen: dict[str, str] = {}
        for word, replacement in self._check(attribute):
            seen.setdefault(normalise_term(word), word)
            seen.setdefault(normalise_term(replacement), replacement)
        return list(seen.values())

    def person_only(self, attribute: str) -> frozenset[str]:
        """Terms of ``attribute`` (matching keys) that are replaced only where they describe a person
        (``adjectives`` blocks): "an ugly man", "she is tall", never "things get ugly" or "pretty
        coherent" (issue 20). The caller decides with a parse (:mod:`fairprobe.text.person`)."""
        return self._person_only.get(attribute, frozenset())

    def people_scoped(self, attribute: str) -> bool:
        """Whether the terms of ``attribute`` are *group words* (``scope: people``): replaced only
        where the parse shows they name or describe people ("a Korean actress", "the Muslims"),
        never where they describe a thing ("the Korean version", "a Russian battleship", issue 39).
        Its ``adjectives`` terms keep the adjective rule (:meth:`person_only`)."""
        return attribute in self._people_scoped

    def group_words(self, attribute: str) -> frozenset[str]:
        """Terms of ``attribute`` (matching keys) under the group-word rule: every term of a
        ``scope: people`` attribute except its person-only adjectives; none otherwise."""
        if attribute not in self._people_scoped:
            return frozenset()
        adjectives = self.person_only(attribute)
        return frozenset(normalise_term(t) for t in self.terms(attribute)) - adjectives

    def mentions(self, text: str, attribute: str) -> bool:
        """Whether ``text`` holds a word of ``attribute`` as the mutator matches it (whole words,
        capitalised-only terms with their capital), before any person check: for coverage
        statements ("none of the 16 texts mentions a word of the age list")."""
        from fairprobe.text.mutate import find_terms

        return bool(find_terms(text, self, attribute))

    def attributes_mentioned(self, text: str) -> tuple[str, ...]:
        """The attributes (in dictionary order) with a word in ``text`` (see :meth:`mentions`)."""
        return tuple(a for a in self.attributes if self.mentions(text, a))

    def capitalised_only(self, attribute: str) -> frozenset[str]:
        """Terms of ``attribute`` (matching keys) that occur only where written with a capital
        (``map`` blocks with ``capitalised: true``): "Pole" is a person, "pole" is not."""
        return self._capitalised.get(attribute, frozenset())

    def __len__(self) -> int:
        return sum(len(p) for p in self._pairs.values())

    def __repr__(self) -> str:
        counts = ", ".join(f"{a}={len(p)}" for a, p in self._pairs.items())
        return f"BiasDictionary({self.source!r}: {counts} pairs)"


def load_dictionary(path: str | Path | None = None) -> BiasDictionary:
    """Read a bias dictionary; ``None`` gives the packaged one (race, gender, body).

    ``.yaml``/``.yml`` files use the grouped format; ``.csv`` files the
    ``attribute,word,replacement`` format. Raises DataError (with file and line) on bad input.
    """
    if path is None:
        return _load_packaged()
    return _load(Path(path))


@functools.lru_cache(maxsize=1)
def _load_packaged() -> BiasDictionary:
    return _load(PACKAGED_DICTIONARY)


def _load(path: Path) -> BiasDictionary:
    require_file(path, "bias dictionary", "pass an existing .yaml or .csv file.")
    suffix = path.suffix.lower()
    skipped: list[str] = []
    packaged = path.resolve() == PACKAGED_DICTIONARY.resolve()
    if suffix in (".yaml", ".yml"):
        capitalised: dict[str, set[str]] = {}
        scoped: set[str] = set()
        pairs, person_only = _read_yaml(path, skipped, capitalised, scoped)
        pairs = pairs if packaged else _recase(pairs)
        return BiasDictionary(
            pairs,
            source=str(path),
            person_only=person_only,
            skipped=skipped,
            capitalised=capitalised,
            people_scoped=scoped,
        )
    if suffix == ".csv":
        return BiasDictionary(_recase(_read_csv(path, skipped)), source=str(path), skipped=skipped)
    raise DataError(f"bias dictionary {path}: unknown file type {suffix!r}; use .yaml, .yml or .csv.")


def proper_words(attribute: str | None = None) -> dict[str, str]:
    """Lower case -> spelling of the words the packaged dictionary always capitalises ("rican" ->
    "Rican", "asian" -> "Asian"): of ``attribute`` (none when the packaged dictionary lacks it, so
    "black" of a user "color" attribute stays lower case), or of every attribute for ``None``. For a
    group-word attribute (race, nationality, religion, ...) the capitals of every group-word attribute
    count: a user "race" list still holds the demonyms the packaged one files under nationality."""
    d = _load_packaged()
    names = list(d.attributes) if attribute is None else [attribute] if attribute in d.attributes else []
    if names and d.people_scoped(names[0]) and attribute is not None:
        names = [a for a in d.attributes if d.people_scoped(a)]
    out: dict[str, str] = {}
    for name in names:
        for term in d.terms(name):
            for word in re.findall(r"[^\W\d_]+", term):
                if word[0].isupper():
                    out[word.lower()] = word
    return out


def _recase(pairs: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """Give an all-lower-case term of a user dictionary the capitals the packaged dictionary uses
    for its words: the authors' lists are lower case, and "puerto rican" at a sentence start gave
    "Puerto rican" (issue 20). Terms with any capital are kept as written."""

    def fix(term: str, caps: dict[str, str]) -> str:
        if term != term.lower():
            return term
        return re.sub(r"[^\W\d_]+", lambda m: caps.get(m.group(), m.group()), term)

    out = {}
    for attribute, rows in pairs.items():
        caps = proper_words(attribute)
        out[attribute] = [(fix(w, caps), fix(r, caps)) for w, r in rows]
    return out


# --------------------------------------------------------------------------------------- CSV


def _skip_self_pair(skipped: list[str], where: str, word: str) -> None:
    note = f"{where}: {word!r} is paired with itself"
    skipped.append(note)
    warnings.warn(f"{note}; skipped that pair", stacklevel=3)


def _read_csv(path: Path, skipped: list[str]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    with io.StringIO(read_text(path, "dictionary"), newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        names = [h.strip().lower() for h in header] if header else []
        missing = [c for c in ("attribute", "word", "replacement") if c not in names]
        if missing:
            raise DataError(
                f"{path}, line 1: header must name the columns attribute,word,replacement "
                f"(missing: {', '.join(missing)}); fix the first line."
            )
        ia, iw, ir = names.index("attribute"), names.index("word"), names.index("replacement")
        for row in reader:
            line = reader.line_num
            if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue
            if len(row) <= max(ia, iw, ir):
                raise DataError(
                    f"{path}, line {line}: expected the columns attribute,word,replacement, "
                    f"got {len(row)} field(s); fix or delete that row."
                )
            attribute = row[ia].strip()
            if not attribute:
                raise DataError(f"{path}, line {line}: empty attribute; fill it in or delete the row.")
            word = _check_term(row[iw], path, line)
            replacement = _check_term(row[ir], path, line)
            if normalise_term(word) == normalise_term(replacement):
                _skip_self_pair(skipped, f"{path}, line {line}", word)
                continue
            out.setdefault(attribute, []).append((word, replacement))
    if not out:
        raise DataError(f"{path}: no word pairs found; add rows attribute,word,replacement.")
    return out


def _check_term(raw: str, path: Path, line: int) -> str:
    term = " ".join(str(raw).split())
    if not term:
        raise DataError(f"{path}, line {line}: empty term; give a word or delete the entry.")
    if not _TERM_RE.match(term):
        raise DataError(
            f"{path}, line {line}: bad term {term!r}; use letters, digits, spaces, hyphens and "
            "apostrophes, starting and ending with a letter or digit."
        )
    return term


# -------------------------------------------------------------------------------------- YAML


def _read_yaml(
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
    return _check_term(_scalar(node, path, "term"), path, _line(node))


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
                _skip_self_pair(skipped, f"{path}, line {line}", word)
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
            _skip_self_pair(skipped, f"{path}, line {_line(row)}", word)
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
