"""Flips on the demo's model and data before and after the group-word person check (issue 39).

HInter's mutants of the 200 IMDB reviews (``imdb-sample``) are sent to ``embedded:imdb-sentiment``
and a *flip* is a mutant whose label differs from its original's. Only what the check changes is
generated: atomic mutants of the *focus* attributes and order-2 mutants of a focus attribute with
``--with`` (default gender, body), for the reviews that hold a focus word:

- before: a dictionary file given with ``--before`` (the packaged dictionary before issue 39:
  ``git show d3fbc12:src/fairprobe/lexicons/bias_dictionary.yaml > before.yaml``), focus ``race``
  (which then held the national demonyms), with the person check it had (body adjectives only);
- after: the packaged dictionary, focus ``race`` and ``nationality`` (the demonyms' attribute now),
  with the person check for adjectives and group words.

The dependency invariant (Algorithms 3-4) is not applied, to both sides alike: it parses every
mutant, hours on a loaded 2-core machine; a HInter run counts only the flips of mutants that pass it.

    python scripts/measure_group_words.py --before before.yaml
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from fairprobe.data.datasets import load_dataset
from fairprobe.lexicons.dictionary import BiasDictionary, load_dictionary
from fairprobe.models.uri import load_classifier
from fairprobe.text.mutate import atomic_mutants, iter_intersectional_mutants, mentions
from fairprobe.text.person import non_person_by_attribute, person_parser


def measure(d: BiasDictionary, focus: list[str], others: list[str], model: Any, nlp: Any) -> dict[str, Any]:
    records = [r for r in load_dataset("imdb-sample").records if any(mentions(r.text, d, a) for a in focus)]
    rows: list[tuple[str, str, str]] = []  # (original id, mutant text, attributes)
    skipped: Counter[str] = Counter()
    for r in records:
        by_attribute = non_person_by_attribute(r.text, d, focus + others, nlp)
        skipped.update({a: len(s) for a, s in by_attribute.items() if a in focus})
        skip = frozenset().union(*by_attribute.values())
        for a in focus:
            rows += [(r.id, m.text, a) for m in atomic_mutants(r.text, d, a, skip=skip)]
            for o in others:
                for m, _ in iter_intersectional_mutants(r.text, d, (a, o), skip=skip):
                    rows.append((r.id, m.text, f"{a}+{o}"))
    texts = list(dict.fromkeys([r.text for r in records] + [t for _, t, _ in rows]))
    labels = {}
    for i in range(0, len(texts), 256):
        batch = texts[i : i + 256]
        labels.update(zip(batch, (p.labels for p in model.predict(batch)), strict=True))
    original = {r.id: labels[r.text] for r in records}
    mutants: Counter[str] = Counter(key for _, _, key in rows)
    flips: Counter[str] = Counter(key for oid, text, key in rows if labels[text] != original[oid])
    by_text: Counter[str] = Counter(
        oid for oid, text, key in rows if "+" in key and labels[text] != original[oid]
    )
    return {
        "originals": len(records),
        "mutants": dict(mutants),
        "flips": dict(flips),
        "top_text_order2_flips": by_text.most_common(1)[0] if by_text else None,
        "skipped_not_person": dict(skipped),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the dictionary file before issue 39")
    ap.add_argument("--with", dest="others", default="gender,body", help="order-2 partners")
    args = ap.parse_args()
    others = args.others.split(",")
    model = load_classifier("embedded:imdb-sentiment")
    nlp = person_parser()
    sides = (
        ("before", load_dictionary(args.before), ["race"]),
        ("after", load_dictionary(), ["race", "nationality"]),
    )
    for name, d, focus in sides:
        start = time.perf_counter()
        r = measure(d, focus, others, model, nlp)
        print(
            f"[{name}] focus {', '.join(focus)}; {r['originals']} reviews ({time.perf_counter() - start:.0f} s)"
        )
        for key in sorted(r["mutants"], key=lambda k: (k.count("+"), k)):
            print(f"  {key}: {r['flips'].get(key, 0)} flips of {r['mutants'][key]} mutants")
        order2 = [k for k in r["mutants"] if "+" in k]
        print(
            f"  order 2: {sum(r['flips'].get(k, 0) for k in order2)} flips of "
            f"{sum(r['mutants'][k] for k in order2)} mutants"
        )
        print(f"  review with most order-2 flips: {r['top_text_order2_flips']}")
        print(f"  skipped_not_person: {r['skipped_not_person']}")


if __name__ == "__main__":
    main()
