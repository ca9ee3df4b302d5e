"""The hand-written labelling rules of the benchmark chat-answer corpus (see
``bench/benchmark_chat_corpus.py``). Each raw answer gets a label from the first rule that decides
it; an answer no rule decides must have a label in :data:`BY_HAND`, written after reading it (the
script stops and lists any answer that has neither). Every label, rule-made or by hand, was read.

Labels: the option index the answer picks (BBQ), ``"yes"`` / ``"no"`` (DiscrimEval), or ``None``
when a careful reader finds no committed answer (INVALID): nothing, two options, a letter whose
words name another option, a refusal, an answer cut off before it commits.

These rules are independent of the parser being measured: they are exact forms seen in the answers
(a letter alone, a letter with its own option's words, an option's words alone), not a reader of
free text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

LETTERS = "ABC"

BY_HAND: dict[str, Any] = {
    # item id -> label, for answers the form rules below do not decide (each read in full)
}

WHY: dict[str, str] = {
    # item id -> a note on a hand label that needs one
}


def _clean(text: str) -> str:
    t = text.replace("**", "").replace("`", "").strip()
    return re.sub(r"\s+", " ", t)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9' ]+", "", text.lower()).strip()


def _option_by_words(words: str, options: list[str]) -> int | None | bool:
    """Which option ``words`` are (the whole option, or the start of exactly one when cut off by the
    length limit); ``False`` when they are not an option's words."""
    w = _norm(words)
    if not w:
        return False
    exact = [i for i, o in enumerate(options) if _norm(o) == w]
    if exact:
        return exact[0]
    starts = [i for i, o in enumerate(options) if _norm(o).startswith(w) and len(w) >= 4]
    if len(starts) == 1:
        return starts[0]
    return None if starts else False


def rule_bbq(text: str, options: list[str]) -> tuple[Any, str] | None:
    t = _clean(text)
    m = re.fullmatch(r"(?:answer:\s*|the answer is:?\s*)?\(?([ABC])\)?[.):]?", t, re.IGNORECASE)
    if m and m.group(1).isupper():
        return LETTERS.index(m.group(1)), "letter alone"
    m = re.fullmatch(r"(?:answer:\s*|the answer is:?\s*)?\(?([ABC])[.):]\)?\s+(.+?)\.?", t, re.IGNORECASE)
    if m and m.group(1).isupper():
        letter = LETTERS.index(m.group(1))
        said = _option_by_words(m.group(2), options)
        if said is False:
            return None
        if said == letter:
            return letter, "letter with its own option's words"
        return None, "letter whose words name another option"
    said = _option_by_words(t.rstrip("."), options)
    if said is not False and said is not None:
        return said, "an option's words alone"
    return None


def rule_yes_no(text: str) -> tuple[Any, str] | None:
    t = _clean(text).lower()
    m = re.fullmatch(r"\"?(yes|no)\"?[.!]?", t)
    if m:
        return m.group(1), "yes / no alone"
    return None


def label_all(rows: list[dict[str, Any]], out: Path) -> None:
    unlabelled = []
    written = []
    for row in rows:
        rid = row["item_id"]
        if rid in BY_HAND:
            expected, how = BY_HAND[rid], "by hand"
        else:
            ruled = (
                rule_bbq(row["text"], row["options"])
                if row["benchmark"] == "bbq"
                else rule_yes_no(row["text"])
            )
            if ruled is None:
                unlabelled.append(row)
                continue
            expected, how = ruled
        entry = {"id": rid, **{k: v for k, v in row.items() if k != "item_id"}, "expected": expected,
                 "labelled": how}  # fmt: skip
        if rid in WHY:
            entry["why"] = WHY[rid]
        written.append(entry)
    if unlabelled:
        for row in unlabelled:
            print(f"{row['item_id']}\t{row.get('options', '')}\t{row['text']!r}")
        raise SystemExit(f"{len(unlabelled)} answers have no label: read them and add them to BY_HAND")
    out.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in written), encoding="utf-8")
    print(f"{len(written)} labelled answers in {out}")
