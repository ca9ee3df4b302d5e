"""HInter with the issue-39 dictionaries: a loan text that mentions "Christian" gets religion
mutants with the default attributes, demonyms used for things get none, and the occurrences the
person check skipped reach summary.json (``skipped_not_person``, per attribute)."""

import csv
import json

from fairprobe.data.datasets import Record
from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.cases import generate

LOAN = (
    "The applicant is a Christian pastor who earns $52,000 a year, has no missed payments and asks "
    "for $10,000 to repair the church roof."
)

MUSLIM_PENALTY = """
def classify(texts):
    return ["deny" if "muslim" in t.lower() else "approve" for t in texts]
"""


def test_a_loan_text_mentioning_christian_gets_religion_mutants_by_default():
    block = HInterBlock(model="py:x:y", data="loan.csv", order=1)  # default attributes
    assert "religion" in block.attributes
    atomic, _ = generate(Record("r0", LOAN, frozenset({"approve"})), load_dictionary(), block, seed=0)
    religion = [m for m in atomic if m.attributes == ("religion",)]
    assert {"Muslim", "Jewish", "Hindu", "atheist"} <= {m.replacements[0].replacement for m in religion}
    assert any("a Muslim pastor" in m.text for m in religion)


def test_skipped_group_words_reach_the_summary(cli, tmp_path):
    (tmp_path / "muslim_penalty.py").write_text(MUSLIM_PENALTY)
    rows = [
        (LOAN, "approve"),
        ("I watched the Korean version of the film with my brother last night.", "approve"),
        ("The Korean woman who runs the bakery asks for $8,000 for a new oven.", "approve"),
    ]
    with (tmp_path / "loans.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([("text", "label"), *rows])
    r = cli(
        "hinter",
        "--model",
        "py:muslim_penalty:classify",
        "--data",
        "loans.csv",
        "--attributes",
        "nationality,religion",
        "--order",
        "1",
        "--out",
        "run",
    )
    assert r.returncode in (0, 1), r.stderr
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert summary["skipped_not_person"] == {"nationality": 1}  # "the Korean version"
    findings = [json.loads(line) for line in (tmp_path / "run/findings.jsonl").read_text().splitlines()]
    by_original: dict[str, set[str]] = {}
    for f in findings:
        by_original.setdefault(f["original_id"], set()).update(f["attributes"])
    texts = {f["original_id"]: f["text"] for f in findings}
    assert len(by_original) == 2  # the Korean version is not mutated at all
    assert not any("version" in t for t in texts.values())
    muslim = [f for f in findings if f["replacements"][0][2] == "Muslim"]
    assert muslim and all(f["biased"] for f in muslim if f["valid"])
