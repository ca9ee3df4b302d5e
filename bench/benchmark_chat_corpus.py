"""Build the labelled corpus of real chat answers that measures the benchmark's chat answer parser
(``fairprobe.methods.benchmark.chat``): BBQ multiple choice and DiscrimEval yes/no, asked exactly as
``fairprobe benchmark bbq|discrim-eval --mode chat`` asks them (same prompt, temperature, max_tokens
and seed, :func:`fairprobe.methods.benchmark.execute.chat_request`).

    python bench/benchmark_chat_corpus.py generate [--model embedded:smollm2] [--bbq 240] [--discrim 140]
    python bench/benchmark_chat_corpus.py label      # raw answers + the labelling rules -> the corpus
    python bench/benchmark_chat_corpus.py score [--show-errors]   # the parser on the corpus

``generate`` draws a seeded subset stratified by category (BBQ: every vendored category, both context
conditions; DiscrimEval: every decision question) and writes the raw answers to
``tests/data/benchmark/chat_answers_raw.jsonl`` (answers go through the global response cache, so a
re-run asks the model nothing). ``label`` applies the hand-written rules below, which were checked by
reading every answer, and writes ``tests/data/benchmark/chat_answers.jsonl``: one answer per line
with ``expected`` = the intended option index (0, 1, 2) / ``"yes"`` / ``"no"``, or ``null`` (INVALID:
the answer commits to no option, or to two).

The rules are deliberately not the parser: they are per-answer-form decisions written while reading
the answers (a table of the forms seen, and explicit per-answer labels where a form is not enough),
so that the corpus measures the parser rather than restating it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, whatever is installed

from fairprobe.methods.benchmark import data as bdata  # noqa: E402
from fairprobe.methods.benchmark import execute as bexec  # noqa: E402
from fairprobe.methods.benchmark.technique import subset  # noqa: E402

OUT = ROOT / "tests" / "data" / "benchmark"
RAW = OUT / "chat_answers_raw.jsonl"
CORPUS = OUT / "chat_answers.jsonl"
SEED = 44
HELD_OUT = "@t1.0"
"""Answers sampled at temperature 1.0, generated and labelled after the parser was final: the held-out
part, measured blind."""


def _items(n_bbq: int, n_discrim: int) -> list[tuple[str, dict]]:
    """The seeded stratified subsets, interleaved (round robin over the categories of both sets), so
    that a run stopped early still holds every category."""
    chosen = [("bbq", it) for it in subset(bdata.load("bbq").items, n_bbq, SEED)]
    chosen += [("discrim-eval", it) for it in subset(bdata.load("discrim-eval").items, n_discrim, SEED)]
    rank: dict[str, int] = {}
    keyed = []
    for name, it in chosen:
        group = f"{name}:{it['category']}"
        rank[group] = rank.get(group, -1) + 1
        keyed.append((rank[group], group, name, it))
    return [(name, it) for _, _, name, it in sorted(keyed, key=lambda k: (k[0], k[1]))]


def generate(args: argparse.Namespace) -> None:
    from fairprobe.cli.common import cached_chat

    chat = cached_chat(args.model)
    todo = _items(args.bbq, args.discrim)
    done = set()
    suffix = "" if args.temperature is None else f"@t{args.temperature}"
    if RAW.exists() and not args.fresh:
        done = {json.loads(line)["item_id"] for line in RAW.read_text(encoding="utf-8").splitlines()}
    start = time.perf_counter()
    with RAW.open("a" if done else "w", encoding="utf-8") as out:
        for k, (name, item) in enumerate(todo, 1):
            if item["id"] + suffix in done:
                continue
            request = bexec.chat_request(name, item, seed=0)
            if args.temperature is not None:  # a sampled slice: other answer forms of the same model
                request = dataclasses.replace(request, temperature=args.temperature, seed=SEED)
            (answer,) = chat.chat([request])
            row = {
                "item_id": item["id"] + suffix,
                "temperature": request.temperature,
                "benchmark": name,
                "category": item["category"],
                "prompt": bexec.chat_prompt(name, item),
                "text": answer.text,
            }
            if name == "bbq":
                row.update(condition=item["condition"], options=item["answers"], label=item["label"],
                           unknown=item["unknown"])  # fmt: skip
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            if k % 20 == 0:
                print(f"{k}/{len(todo)} answers, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print(f"model: {args.model}; {len(todo)} answers in {RAW.relative_to(ROOT)}", file=sys.stderr)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _previous_reading(entry: dict) -> str:
    """The reader the benchmark had before it was measured (fairprobe 44c0 execute.py): any lone
    letter A-C, any "yes"/"no" word; kept here to compare."""
    import re

    if entry["benchmark"] == "discrim-eval":
        words = set(re.findall(r"[a-z]+", entry["text"].lower()))
        return "INVALID" if ("yes" in words) == ("no" in words) else ("yes" if "yes" in words else "no")
    n = len(entry["options"])
    found = set(re.findall(rf"(?<![A-Za-z])([{'ABC'[:n]}])(?![A-Za-z])", entry["text"].strip()))
    return str("ABC".index(found.pop())) if len(found) == 1 else "INVALID"


def previous_at_8_tokens(entries: list[dict]) -> None:
    """The previous reader on the temperature-0 BBQ answers cut to their first 8 tokens (what the
    benchmark asked for before; greedy decoding makes the 8-token answer the 32-token one's start,
    re-tokenized here with the model's own tokenizer)."""
    from llama_cpp import Llama

    from fairprobe.methods.benchmark import chat_accuracy as acc
    from fairprobe.models.embedded import smollm2_gguf_path

    tok = Llama(model_path=str(smollm2_gguf_path()), vocab_only=True, verbose=False)
    rows = [e for e in entries if e["benchmark"] == "bbq" and e.get("temperature", 0.0) == 0.0]
    misread = listed = 0
    for e in rows:
        cut = tok.detokenize(tok.tokenize(e["text"].encode(), add_bos=False)[:8]).decode(errors="ignore")
        old = _previous_reading({**e, "text": cut})
        if old not in ("INVALID", acc.label(e)):
            misread += 1
            listed += e["labelled"] == "lists two or more options"
    print(
        f"previous reader on {len(rows)} temperature-0 BBQ answers cut to 8 tokens: {misread} misreads "
        f"({listed} of them a listed option set read as its first option)"
    )


def score(args: argparse.Namespace) -> None:
    from fairprobe.methods.benchmark import chat_accuracy as acc

    entries = acc.load(CORPUS)
    print(f"corpus: {len(entries)} labelled chat answers in {CORPUS.relative_to(ROOT)}")
    for name in ("bbq", "discrim-eval"):
        mine = [e for e in entries if e["benchmark"] == name]
        right = sum(_previous_reading(e) == acc.label(e) for e in mine)
        wrong = sum(_previous_reading(e) not in (acc.label(e), "INVALID") for e in mine)
        print(
            f"previous reader, {name}: accuracy {_pct(right / len(mine) if mine else None)}, misreads {wrong}"
        )
    for name in ("bbq", "discrim-eval"):
        s = acc.score(entries, name)
        print(
            f"\n{name}: {s.n} answers, accuracy {_pct(s.accuracy)}, misreads {s.misreads}, "
            f"missed {s.missed}, INVALID read {_pct(s.invalid_rate)} (labelled {_pct(s.labelled_invalid_rate)})"
        )
        print(f"  {'class':8} {'support':>7} {'precision':>9} {'recall':>7}")
        for c in s.classes:
            print(f"  {c:8} {s.support(c):7d} {_pct(s.precision(c)):>9} {_pct(s.recall(c)):>7}")
        held = acc.score([e for e in entries if e["id"].endswith(HELD_OUT)], name)
        if held.n:
            print(
                f"  held-out (ids *{HELD_OUT}): {held.n} answers, "
                f"accuracy {_pct(held.accuracy)}, misreads {held.misreads}, missed {held.missed}"
            )
        if args.show_errors:
            for e in s.errors:
                print(f"    {e['id']}: {e['text']!r} -> {e['reading']} (label {e['label']})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="ask the model; write the raw answers")
    g.add_argument("--model", default="embedded:smollm2")
    g.add_argument("--bbq", type=int, default=240, help="BBQ items (stratified by category)")
    g.add_argument("--discrim", type=int, default=140, help="DiscrimEval items (stratified by question)")
    g.add_argument("--fresh", action="store_true", help="start the raw file again")
    g.add_argument(
        "--temperature", type=float, help="sample at this temperature (default: the benchmark's, 0)"
    )
    sub.add_parser("label", help="apply the labelling rules; write the corpus")
    sc = sub.add_parser("score", help="measure the chat answer parser on the corpus")
    sc.add_argument("--show-errors", action="store_true")
    sc.add_argument("--previous-8-tokens", action="store_true", help="also the old reader on 8-token cuts")
    args = ap.parse_args()
    if args.command == "generate":
        generate(args)
    elif args.command == "score":
        score(args)
        if args.previous_8_tokens:
            from fairprobe.methods.benchmark import chat_accuracy as acc

            previous_at_8_tokens(acc.load(CORPUS))
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from chat_corpus_labels import label_all  # bench/chat_corpus_labels.py: the rules

        rows = [json.loads(x) for x in RAW.read_text(encoding="utf-8").splitlines() if x.strip()]
        label_all(rows, CORPUS)


if __name__ == "__main__":
    main()
