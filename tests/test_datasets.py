"""Tests of fairprobe.data.datasets: local files, the bundled IMDB sample and the HuggingFace column maps.

The hf: loader is exercised on datasets built in memory or loaded from local files (never the network).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from fairprobe.data.datasets import Dataset, Record, from_hf_dataset, from_rows, load_dataset, parse_hf_source
from fairprobe.errors import DataError, UsageError


def write_csv(path, rows: list[dict]) -> str:
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


# ------------------------------------------------------------------------------------------ imdb-sample


def test_imdb_sample_is_the_bundled_200_reviews_with_sentiment_labels():
    ds = load_dataset("imdb-sample")
    assert isinstance(ds, Dataset) and len(ds) == 200
    assert ds.text_col == "text" and ds.label_col == "label" and not ds.is_multilabel
    assert ds.label_set == ["NEG", "POS"]
    counts = {lab: sum(r.labels == frozenset([lab]) for r in ds) for lab in ds.label_set}
    assert counts == {"NEG": 97, "POS": 103}  # the CSV holds 97 zeros and 103 ones
    assert [r.id for r in ds][:3] == ["0", "1", "2"]
    assert ds[0].text.startswith("Just as a reminder to anyone")
    assert all(len(r.text) > 20 for r in ds)


def test_limit_takes_the_first_records_and_sample_is_seeded():
    full = load_dataset("imdb-sample")
    first = load_dataset("imdb-sample", limit=7)
    assert [r.id for r in first] == [str(i) for i in range(7)]
    a, b, c = full.sample(20, seed=3), full.sample(20, seed=3), full.sample(20, seed=4)
    assert [r.id for r in a] == [r.id for r in b] != [r.id for r in c]
    assert [int(r.id) for r in a] == sorted(int(r.id) for r in a)  # source order kept
    assert set(a.records) <= set(full.records)
    assert [r.id for r in full.sample(20)] == [r.id for r in load_dataset("imdb-sample", seed=0).sample(20)]
    assert len(full.sample(500)) == 200
    with pytest.raises(UsageError):
        full.sample(0)
    with pytest.raises(UsageError):
        load_dataset("imdb-sample", limit=0)


# ------------------------------------------------------------------------------------------ local files


def test_csv_with_json_list_labels_is_multilabel(tmp_path):
    path = write_csv(
        tmp_path / "cases.csv",
        [
            {
                "id": "c1",
                "facts": "The applicant was detained.",
                "labels": json.dumps(["5", "6"]),
                "year": 2001,
            },
            {"id": "c2", "facts": "The court ruled.", "labels": "[]", "year": 2002},
            {"id": "c3", "facts": "A fine was imposed.", "labels": '["P1-1"]', "year": 2003},
        ],
    )
    ds = load_dataset(path, text_col="facts")
    assert ds.is_multilabel and ds.name == "cases" and ds.label_col == "labels"
    assert [r.id for r in ds] == ["c1", "c2", "c3"]
    assert ds[0].labels == frozenset({"5", "6"}) and ds[1].labels == frozenset() and ds[1].label is None
    assert ds[2].extra == {"year": "2003"}  # CSV cells stay strings
    assert ds.label_set == ["5", "6", "P1-1"]


def test_csv_single_label_ids_groups_and_missing_labels(tmp_path):
    path = write_csv(
        tmp_path / "s.csv",
        [
            {"sentence": "I loved it.", "sentiment": 1, "gender": "f"},
            {"sentence": "Dull.", "sentiment": "", "gender": ""},
            {"sentence": "   ", "sentiment": 0, "gender": "m"},
            {"sentence": "Not bad at all.", "sentiment": 0, "gender": "m"},
        ],
    )
    ds = load_dataset(path, group_col="gender")
    assert ds.text_col == "sentence" and ds.label_col == "sentiment" and not ds.is_multilabel
    assert [r.id for r in ds] == ["0", "1", "3"] and ds.skipped == 1  # ids are source row indices
    assert [r.labels for r in ds] == [frozenset({"1"}), None, frozenset({"0"})]
    assert [r.group for r in ds] == ["f", None, "m"]
    assert ds[0].extra == {}


def test_jsonl_json_and_parquet_give_the_same_records(tmp_path):
    rows = [
        {"id": 10, "text": "The tenant must pay rent.", "label": ["Payments", "Terms"], "src": "a"},
        {"id": 11, "text": "This agreement is governed by law.", "label": ["Governing Laws"], "src": "b"},
    ]
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    (tmp_path / "d.json").write_text(json.dumps(rows))
    (tmp_path / "wrapped.json").write_text(json.dumps({"data": rows}))
    (tmp_path / "lines.json").write_text("\n".join(json.dumps(r) for r in rows))
    pd.DataFrame(rows).to_parquet(tmp_path / "d.parquet")
    loaded = [load_dataset(str(tmp_path / f)) for f in ("d.jsonl", "d.json", "wrapped.json", "lines.json")]
    loaded.append(load_dataset(str(tmp_path / "d.parquet")))
    for ds in loaded:
        assert ds.is_multilabel
        assert [(r.id, r.text, r.labels, r.extra) for r in ds] == [
            ("10", rows[0]["text"], frozenset({"Payments", "Terms"}), {"src": "a"}),
            ("11", rows[1]["text"], frozenset({"Governing Laws"}), {"src": "b"}),
        ]


def test_parquet_integer_labels_become_strings(tmp_path):
    pd.DataFrame({"review": ["good", "bad", "fine"], "target": [1, 0, 1]}).to_parquet(tmp_path / "p.parquet")
    ds = load_dataset(str(tmp_path / "p.parquet"))
    assert [r.labels for r in ds] == [frozenset({"1"}), frozenset({"0"}), frozenset({"1"})]
    assert not ds.is_multilabel


def test_text_column_detection_rules(tmp_path):
    both = write_csv(tmp_path / "both.csv", [{"question": "Why?", "text": "Because.", "label": "x"}])
    assert load_dataset(both).text_col == "text"  # an exact `text` column wins
    amb = write_csv(tmp_path / "amb.csv", [{"review": "Nice.", "sentence": "Nice!", "label": "x"}])
    with pytest.raises(
        DataError, match=r"ambiguous text column.*review, sentence.*available: review, sentence, label"
    ):
        load_dataset(amb)
    assert load_dataset(amb, text_col="review")[0].text == "Nice."
    none = write_csv(tmp_path / "none.csv", [{"sent_more": "a", "sent_less": "b"}])
    with pytest.raises(DataError, match="no text column found among sent_more, sent_less"):
        load_dataset(none)
    with pytest.raises(DataError, match="no text column 'body'; available columns: sent_more, sent_less"):
        load_dataset(none, text_col="body")
    with pytest.raises(DataError, match="no label column 'gold'"):
        load_dataset(none, text_col="sent_more", label_col="gold")
    unl = load_dataset(none, text_col="sent_more")
    assert unl.label_col is None and unl[0].labels is None and unl[0].extra == {"sent_less": "b"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.csv", "", "is empty"),
        ("header.csv", "text,label\n", "has no rows"),
        ("blank.csv", 'text,label\n"",1\n"  ",0\n', "no non-empty text"),
        ("empty.jsonl", "\n", "has no rows"),
        ("bad.jsonl", '{"text": "a"}\n{"text": \n', r"bad.jsonl:2: not valid JSON"),
        ("scalar.jsonl", '"just a string"\n', "not a JSON object"),
        ("bad.json", '{"a": 1}', "give a list of row objects"),
        ("dup.csv", "id,text\n1,a\n1,b\n", "id '1' appears twice"),
        ("badlist.csv", 'text,label\nhello,"[1, 2,]"\n', "looks like a JSON list"),
        ("data.xlsx", "x", "unknown file type '.xlsx'"),
    ],
)
def test_malformed_files_raise_one_line_data_errors(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(DataError, match=message) as err:
        load_dataset(str(tmp_path / name))
    assert "\n" not in str(err.value)


def test_missing_file_and_bad_parquet(tmp_path):
    with pytest.raises(DataError, match="not found; give a .csv"):
        load_dataset(str(tmp_path / "nope.csv"))
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        load_dataset(str(tmp_path / "x.parquet"))


def test_from_rows_and_record_type():
    ds = from_rows([{"text": "a b", "label": "x", "k": 1}, {"text": "c", "label": "y"}], name="mem")
    assert ds.name == "mem" and ds.texts == ["a b", "c"]
    assert ds[0] == Record("0", "a b", frozenset({"x"}), None, {"k": 1})
    assert ds[1].extra == {"k": None} and ds[1].label == "y"
    assert hash(ds[0]) == hash(Record("0", "a b", frozenset({"x"})))  # extra is left out of hash/eq


# ------------------------------------------------------------------------------------------ HuggingFace


def test_parse_hf_source():
    assert parse_hf_source("hf:lex_glue:ecthr_a:test") == ("lex_glue", "ecthr_a", "test")
    assert parse_hf_source("hf:coastalcph/lex_glue:ledgar") == ("coastalcph/lex_glue", "ledgar", "test")
    assert parse_hf_source("hf:imdb:train") == ("imdb", None, "train")
    assert parse_hf_source("hf:imdb:test[:100]") == ("imdb", None, "test[:100]")
    assert parse_hf_source("hf:imdb") == ("imdb", None, "test")
    for bad in ("hf:", "hf:a:b:c:d", "hf:a::test"):
        with pytest.raises(DataError, match="hf:NAME"):
            parse_hf_source(bad)


hf = pytest.importorskip("datasets")


def test_hf_ecthr_paragraphs_joined_and_articles_named():
    # Features as declared by the LexGLUE loading script for ecthr_a.
    articles = ["2", "3", "5", "6", "8", "9", "10", "11", "14", "P1-1"]
    features = hf.Features(
        {"text": hf.Sequence(hf.Value("string")), "labels": hf.Sequence(hf.ClassLabel(names=articles))}
    )
    raw = hf.Dataset.from_dict(
        {"text": [["1. The applicant.", "2. He was held."], ["3. No facts."]], "labels": [[1, 9], []]},
        features=features,
    )
    ds = from_hf_dataset(raw, "coastalcph/lex_glue", "ecthr_a")
    assert ds.is_multilabel and ds.name == "coastalcph/lex_glue/ecthr_a"
    assert ds[0].text == "1. The applicant.\n2. He was held."
    assert ds[0].labels == frozenset({"Article 3", "Article 1 of Protocol 1"})
    assert ds[1].labels == frozenset()  # the "+1" class of Table 3: no violation


def test_hf_single_label_configs_use_feature_names():
    scotus = hf.Dataset.from_dict(
        {"text": ["An opinion.", "Another."], "label": [0, 13]},
        features=hf.Features(
            {"text": hf.Value("string"), "label": hf.ClassLabel(names=[str(i) for i in range(1, 15)])}
        ),
    )
    ds = from_hf_dataset(scotus, "lex_glue", "scotus")
    assert not ds.is_multilabel and [r.label for r in ds] == ["Criminal Procedure", "Private Action"]
    ledgar = hf.Dataset.from_dict(
        {"text": ["Notices shall be in writing."], "label": [1]},
        features=hf.Features(
            {"text": hf.Value("string"), "label": hf.ClassLabel(names=["Adjustments", "Agreements"])}
        ),
    )
    assert from_hf_dataset(ledgar, "lex_glue", "ledgar")[0].labels == frozenset({"Agreements"})
    imdb = hf.Dataset.from_dict(
        {"text": ["Great.", "Awful."], "label": [1, 0]},
        features=hf.Features({"text": hf.Value("string"), "label": hf.ClassLabel(names=["neg", "pos"])}),
    )
    assert [r.label for r in from_hf_dataset(imdb, "stanfordnlp/imdb")] == ["POS", "NEG"]


def test_hf_local_json_file_through_datasets_load_dataset(tmp_path):
    rows = [
        {"text": "Regulation on fishing quotas.", "labels": [3, 7], "celex_id": "31999R0001"},
        {"text": "Directive on air transport.", "labels": [12], "celex_id": "31999L0002"},
        {"text": "", "labels": [1], "celex_id": "31999L0003"},
    ]
    path = tmp_path / "eurlex.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    raw = hf.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
    ds = from_hf_dataset(raw, "lex_glue", "eurlex", limit=5, seed=7)
    assert ds.is_multilabel and len(ds) == 2 and ds.skipped == 1 and ds.seed == 7
    assert [r.labels for r in ds] == [frozenset({"3", "7"}), frozenset({"12"})]  # no ClassLabel: ids as text
    assert ds[0].extra == {"celex_id": "31999R0001"}
    with pytest.raises(DataError, match="no text column 'facts'"):
        from_hf_dataset(raw, "lex_glue", "eurlex", text_col="facts")
