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
  names or describes people: see :meth:`BiasDictionary.people_scoped`, issue 39); the reader is
  :mod:`fairprobe.lexicons.dictionary_yaml`.
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
from collections.abc import Iterable, Mapping
from pathlib import Path

from fairprobe.data.readers import read_text, require_file
from fairprobe.errors import DataError
from fairprobe.lexicons.terms import check_term, is_valid_term, normalise_term, skip_self_pair

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
                    skip_self_pair(self.skipped, f"{source}: attribute {attribute!r}", word)
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
        from fairprobe.lexicons.dictionary_yaml import read_yaml

        pairs, person_only = read_yaml(path, skipped, capitalised, scoped)
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
            word = check_term(row[iw], path, line)
            replacement = check_term(row[ir], path, line)
            if normalise_term(word) == normalise_term(replacement):
                skip_self_pair(skipped, f"{path}, line {line}", word)
                continue
            out.setdefault(attribute, []).append((word, replacement))
    if not out:
        raise DataError(f"{path}: no word pairs found; add rows attribute,word,replacement.")
    return out
