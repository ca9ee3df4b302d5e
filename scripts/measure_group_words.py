"""Flips on the demo's model and data before and after the group-word person check (issue 39).

HInter's mutants of the 200 IMDB reviews (``imdb-sample``) are sent to ``embedded:imdb-sentiment``
and a *flip* is a mutant whose label differs from its original's. Two dictionaries are compared on
the same attributes and order (default: race, gender, body at order 2, HInter's defaults before
issue 39):

- before: a dictionary file given with ``--before`` (the packaged dictionary before issue 39:
  ``git show d3fbc12:src/fairprobe/lexicons/bias_dictionary.yaml > before.yaml``), with the person
  check it had (body adjectives only);
- after: the packaged dictionary, with the person check for adjectives and group words.

The dependency invariant (Algorithms 3-4) is not applied, to both sides alike: it parses every
mutant, hours on a loaded 2-core machine; a HInter run counts only the flips of mutants that pass it.

    python scripts/measure_group_words.py --before before.yaml [--attributes race,gender,body]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from itertools import combinations
from typing import Any

from fairprobe.datasets import load_dataset
from fairprobe.lexicons.dictionary import BiasDictionary, load_dictionary
from fairprobe.models.uri import load_classifier
from fairprobe.text.mutate import atomic_mutants, iter_intersectional_mutants
from fairprobe.text.person import non_person_by_attribute, person_parser


def measure(d: BiasDictionary, attributes: list[str], order: int, model: Any, nlp: Any) -> dict[str, Any]:
    records = load_dataset("imdb-sample").records
    attributes = [a for a in attributes if a in d.attributes]  # the old dictionary has three
    rows: list[tuple[str, str, tuple[str, ...]]] = []  # (original id, mutant text, attributes)
    skipped: Counter[str] = Counter()
    for r in records:
        by_attribute = non_person_by_attribute(r.text, d, attributes, nlp)
        skipped.update({a: len(s) for a, s in by_attribute.items()})
        skip = frozenset().union(*by_attribute.values())
        for a in attributes:
            rows += [(r.id, m.text, (a,)) for m in atomic_mutants(r.text, d, a, skip=skip)]
        for k in range(2, order + 1):
            for combo in combinations(attributes, k):
                for m, _ in iter_intersectional_mutants(r.text, d, combo, skip=skip):
                    rows.append((r.id, m.text, combo))
    texts = list(dict.fromkeys([r.text for r in records] + [t for _, t, _ in rows]))
    labels = {}
    for i in range(0, len(texts), 256):
        batch = texts[i : i + 256]
        labels.update(zip(batch, (p.labels for p in model.predict(batch)), strict=True))
    original = {r.id: labels[r.text] for r in records}
    mutants: Counter[str] = Counter()
    flips: Counter[str] = Counter()
    flips_by_text: Counter[str] = Counter()
    for oid, text, combo in rows:
        key = "+".join(combo)
        mutants[key] += 1
        if labels[text] != original[oid]:
            flips[key] += 1
            if len(combo) > 1:
                flips_by_text[oid] += 1
    inter = sum(n for k, n in flips.items() if "+" in k)
    top = flips_by_text.most_common(1)
    return {
        "mutants": dict(mutants),
        "flips": dict(flips),
        "order2_flips": inter,
        "order2_mutants": sum(n for k, n in mutants.items() if "+" in k),
        "top_text_order2_flips": top[0] if top else None,
        "skipped_not_person": dict(skipped),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the dictionary file before issue 39")
    ap.add_argument("--attributes", default="race,gender,body")
    ap.add_argument("--order", type=int, default=2)
    args = ap.parse_args()
    attributes = args.attributes.split(",")
    model = load_classifier("embedded:imdb-sentiment")
    nlp = person_parser()
    for name, d in (("before", load_dictionary(args.before)), ("after", load_dictionary())):
        start = time.perf_counter()
        result = measure(d, attributes, args.order, model, nlp)
        print(f"[{name}] {args.attributes} order {args.order} ({time.perf_counter() - start:.0f} s)")
        for key in sorted(result["mutants"], key=lambda k: (k.count("+"), k)):
            print(f"  {key}: {result['flips'].get(key, 0)} flips of {result['mutants'][key]} mutants")
        print(f"  order-2 flips: {result['order2_flips']} of {result['order2_mutants']} mutants")
        print(f"  text with most order-2 flips: {result['top_text_order2_flips']}")
        print(f"  skipped_not_person: {result['skipped_not_person']}")


if __name__ == "__main__":
    main()
