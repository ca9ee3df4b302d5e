"""The vendored benchmark sets: complete, unmodified (sha256 of the upstream file), with a NOTICE and
licence each; a user's own copy is checked against the published row counts."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter

import pytest

from fairprobe.errors import DataError
from fairprobe.methods.benchmark import data as bdata
from fairprobe.methods.benchmark.technique import subset


def test_every_vendored_file_matches_its_manifest() -> None:
    m = bdata.manifest()
    for folder, entry in m.items():
        assert (bdata.DATA / folder / "NOTICE").is_file(), folder
        assert entry["license"]
        for name, f in entry["files"].items():
            raw = (bdata.DATA / folder / f["stored"]).read_bytes()
            raw = gzip.decompress(raw) if f["stored"].endswith(".gz") else raw
            assert hashlib.sha256(raw).hexdigest() == f["sha256"], name


def test_published_sizes() -> None:
    assert len(bdata.load("crows-pairs").items) == 1508
    assert len(bdata.load("winogender").items) == 720
    assert len(bdata.load("discrim-eval").items) == 9450
    bbq = bdata.load("bbq")
    counts = Counter(i["category"] for i in bbq.items)
    assert counts == {c: bdata.BBQ_PUBLISHED_ROWS[c] for c in counts}
    assert set(bbq.missing) == {"Race_ethnicity", "Race_x_SES", "Race_x_gender", "SES"}
    # every row names a stereotyped group among its answers, except 408 Gender_identity rows that pit
    # two groups of one gender (boy / man): those are left out of the bias score, kept in accuracy
    no_target = Counter(i["category"] for i in bbq.items if i["target"] is None)
    assert no_target == {"Gender_identity": 408}
    wb = bdata.load("winobias")
    lines = sum(bdata.manifest()["winobias"]["files"][f]["rows"] for f in wb.version)
    assert (
        lines == 3168 and len(wb.items) >= 3150
    )  # the few sentences whose occupations cannot be read are named
    assert Counter(i["stereo"] for i in wb.items).keys() == {"pro", "anti"}
    for items in (wb.items, bdata.load("winogender").items):  # the right referent is not always option A
        share = sum(i["label"] for i in items) / len(items)
        assert 0.45 < share < 0.55


def test_user_copy_is_checked(tmp_path) -> None:
    text = bdata._vendored("crows-pairs", "crows_pairs_anonymized.csv")[0]
    full = tmp_path / "crows_pairs_anonymized.csv"
    full.write_text(text, encoding="utf-8")
    ds = bdata.load("crows-pairs", str(full))
    assert ds.version == {"crows_pairs_anonymized.csv": bdata.manifest()["crows_pairs"]["files"][
        "crows_pairs_anonymized.csv"]["sha256"]}  # fmt: skip
    short = tmp_path / "short.csv"
    short.write_text("\n".join(text.splitlines()[:100]), encoding="utf-8")
    with pytest.raises(DataError, match="published file has 1508"):
        bdata.load("crows-pairs", str(short))
    bbq_dir = tmp_path / "bbq"
    bbq_dir.mkdir()
    rows = bdata._vendored("bbq", "Religion.jsonl")[0]
    (bbq_dir / "Religion.jsonl").write_text(rows, encoding="utf-8")
    ds = bdata.load("bbq", str(bbq_dir))
    assert {i["category"] for i in ds.items} == {"Religion"} and "Age" in ds.missing
    (bbq_dir / "Religion.jsonl").write_text(rows.replace("}\n", "\n", 1), encoding="utf-8")
    with pytest.raises(DataError, match="line 1 is not JSON"):
        bdata.load("bbq", str(bbq_dir))


def test_stratified_seeded_subset() -> None:
    items = bdata.load("crows-pairs").items
    a, b = subset(items, 100, 1), subset(items, 100, 1)
    assert [i["id"] for i in a] == [i["id"] for i in b] and len(a) == 100
    assert [i["id"] for i in subset(items, 100, 2)] != [i["id"] for i in a]
    full, part = Counter(i["category"] for i in items), Counter(i["category"] for i in a)
    for cat, n in full.items():
        assert abs(part[cat] - 100 * n / len(items)) < 1  # each category's share, to one item
    assert json.dumps(a[0])  # items are plain JSON (findings)
