"""Benchmark: the measured accuracy of fairprobe's oracles (answer parsers, refusal detector, ...).

Each oracle that reads model output is scored against a hand-labelled corpus in tests/oracles/corpus/
(the development part) and tests/oracles/corpus/heldout/ (answers never used while tuning the
parsers). Prints one table per section.

    python bench/oracles.py [--show-errors]

Adding an oracle: write a function ``rows(show_errors) -> (header, rows)`` and append
``(title, function)`` to ``SECTIONS`` below; each row is a list of cells.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # measure this checkout's parsers, whatever is installed

from fairprobe.oracles.parser_accuracy import (  # noqa: E402
    READERS,
    TITLES,
    load_corpus,
    score_parser,
    score_refusals,
)

CORPUS = ROOT / "tests" / "oracles" / "corpus"
SPLITS = (("dev", CORPUS), ("held-out", CORPUS / "heldout"))

Table = tuple[list[str], list[list[str]]]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _show(kind: str, items: list[dict]) -> None:
    for item in items:
        print(
            f"    {kind} {item['id']}: {item['text']!r} -> {item.get('reading')!r} (label {item['expected']!r})"
        )


def parser_rows(show_errors: bool = False) -> Table:
    """Per answer parser and split: corpus size, answerable, read %, missed, misreads."""
    header = ["parser", "split", "answers", "answerable", "read", "missed", "misreads"]
    rows = []
    for name in READERS:
        for split, folder in SPLITS:
            score = score_parser(name, load_corpus(folder / f"{name}.jsonl"))
            rows.append(
                [
                    TITLES[name],
                    split,
                    str(score.size),
                    str(score.answerable),
                    _pct(score.read_rate),
                    str(len(score.missed)),
                    str(len(score.misreads)),
                ]
            )
            if show_errors and split == "dev":  # held-out answers stay unseen while tuning
                _show("MISREAD", score.misreads)
                _show("missed", score.missed)
    return header, rows


def refusal_rows(show_errors: bool = False) -> Table:
    """The refusal detector per split: answers, refusals, precision, recall."""
    header = ["detector", "split", "answers", "refusals", "precision", "recall"]
    rows = []
    for split, folder in SPLITS:
        score = score_refusals(load_corpus(folder / "refusal.jsonl"))
        rows.append(
            [
                "refusal",
                split,
                str(score.size),
                str(score.tp + score.fn),
                _pct(score.precision),
                _pct(score.recall),
            ]
        )
        if show_errors and split == "dev":
            for e in score.errors:
                print(f"    WRONG {e['id']}: {e['text']!r} (refusal: {e['expected']})")
    return header, rows


def person_rows(show_errors: bool = False) -> Table:
    """HInter's person check ("this body adjective describes a person") per split of its corpus."""
    from fairprobe.text.person import evaluate_corpus

    corpus = ROOT / "tests" / "text" / "person_adjectives.jsonl"
    header = ["detector", "split", "sentences", "person uses", "precision", "recall"]
    rows = []
    for split in (None, "heldout", "heldout2"):
        score = evaluate_corpus(corpus, split=split)
        rows.append(
            [
                "person adjective",
                split or "all",
                str(score["n"]),
                str(score["tp"] + score["fn"]),
                _pct(score["precision"]),
                _pct(score["recall"]),
            ]
        )
        if show_errors and split is None:
            for w in score["wrong"]:
                print(f"    WRONG {w}")
    return header, rows


def judge_rows(uri: str) -> Table:
    """An LLM judge's accuracy on the 34 packaged control pairs (identical answers must be UNBIASED,
    planted bias BIASED): what every judged Meta-Fair run also measures on a sample of them."""
    from fairprobe.cli.common import cached_chat
    from fairprobe.methods.metafair.judge_eval import evaluate_controls
    from fairprobe.oracles.llm_judge import LLMJudge

    r = evaluate_controls([LLMJudge(cached_chat(uri), name=uri)], repeat=1)
    header = ["judge", "control pairs", "accuracy", "identical pairs", "planted biased"]

    def share(key: str) -> str:
        return f"{r[f'{key}_correct']}/{r[f'{key}_accuracy_n']}"

    return header, [
        [uri, share("control"), _pct(r["control_accuracy"]), share("identical"), share("planted")]
    ]


def benchmark_chat_rows(show_errors: bool = False) -> Table:
    """The benchmark's chat answer parser (BBQ multiple choice, DiscrimEval yes/no) on its corpus of
    real SmolLM2 answers (tests/data/benchmark/chat_answers.jsonl): per class, precision and recall."""
    from fairprobe.methods.benchmark import chat_accuracy as acc

    entries = acc.load(ROOT / "tests" / "data" / "benchmark" / "chat_answers.jsonl")
    header = ["parser", "class", "answers", "precision", "recall"]
    rows = []
    for name in ("bbq", "discrim-eval"):
        score = acc.score(entries, name)
        for c in score.classes:
            rows.append(
                [f"{name} chat", c, str(score.support(c)), _pct(score.precision(c)), _pct(score.recall(c))]
            )
        rows.append([f"{name} chat", "all (accuracy)", str(score.n), "", _pct(score.accuracy)])
        if show_errors:
            for e in score.errors:
                print(f"    WRONG {e['id']}: {e['text']!r} -> {e['reading']} (label {e['label']})")
    return header, rows


SECTIONS: list[tuple[str, Callable[[bool], Table]]] = [
    ("Answer parsers", parser_rows),
    ("Refusal detector", refusal_rows),
    ("Person check of body adjectives (spaCy parser + entities + WordNet person nouns)", person_rows),
    ("Benchmark chat answers (fairprobe benchmark bbq / discrim-eval --mode chat)", benchmark_chat_rows),
    # other oracles append here
]


def _print_table(title: str, table: Table) -> None:
    header, rows = table
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    for row in [header, ["-" * w for w in widths], *rows]:
        print(
            "  "
            + "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--show-errors",
        action="store_true",
        help="list the misread and missed answers of the development part",
    )
    ap.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="URI",
        help="also score this LLM judge on the packaged control pairs (repeatable; slow on CPU: "
        "SmolLM2-135M takes about 20 minutes)",
    )
    args = ap.parse_args()
    total = sum(len(load_corpus(p)) for _, folder in SPLITS for p in sorted(folder.glob("*.jsonl")))
    print(f"oracle corpus: {total} labelled answers in {CORPUS.relative_to(ROOT)}")
    for title, rows in SECTIONS:
        _print_table(title, rows(args.show_errors))
    for uri in args.judge:
        _print_table("LLM judge on control pairs", judge_rows(uri))


if __name__ == "__main__":
    main()
