"""Certificate metrics over zero sentences and over undecided sentences (issue 16: a rate over zero
cases is "no data", never [1, 1] or [0, 0]); the analysis must not crash on ``None`` values."""

from __future__ import annotations

from fairprobe.methods.certify.analysis import analyse
from fairprobe.methods.certify.block import CertifyBlock


def finding(i: int, certified: bool, eps: float | None = 1e-3, **extra):
    base = {
        "id": f"main:{i}",
        "sentence_id": str(i),
        "variant": "main",
        "label": i % 2,
        "prediction": i % 2,
        "correct": True,
        "eps_star": eps,
        "eps_star_ibp": None if eps is None else eps / 10,
        "certified_ibp": False,
        "threshold": 5e-4,
        "word_thresholds": {"female": 5e-4},
        "substitutes": {"female": [["male", 5e-4]]},
        "certified": certified,
        "seconds": 1.0,
        "model_accuracy": 0.8,
        "sentence": "sex is female",
    }
    return {**base, **extra}


def test_no_sentences_gives_no_data_not_a_rate():
    a = analyse(CertifyBlock(model="m"), [], seed=0)
    m = a.metrics
    assert m["cases"] == 0 and m["invalid"] == 0 and m["invalid_rate"] is None
    assert m["fairness_score"] is None and m["fairness_score_ci"] is None
    assert m["threshold"] is None and m["eps_star"] == {"min": None, "median": None, "max": None}


def test_only_invalid_sentences_give_no_fairness_score():
    bad = [finding(i, False, eps=None, invalid=True, error="MemoryError") for i in range(3)]
    m = analyse(CertifyBlock(model="m"), bad, seed=0).metrics
    assert m["cases"] == 3 and m["invalid"] == 3 and m["invalid_rate"] == 1.0
    assert m["fairness_score"] is None and m["fairness_score_ci"] is None
    assert "ibp" not in m and m["sentences"] == 0


def test_invalid_sentences_are_counted_apart_from_the_score():
    rows = [finding(0, True), finding(1, False, eps=1e-4), finding(2, False, eps=None, invalid=True)]
    a = analyse(CertifyBlock(model="m"), rows, seed=0)
    m = a.metrics
    assert (m["cases"], m["invalid"], m["sentences"]) == (3, 1, 2)
    assert m["invalid_rate"] == 1 / 3
    assert m["fairness_score"] == 0.5 and m["ibp"]["zonotope_over_ibp_median"] == 10.0
    table = next(s for s in a.sections if getattr(s, "title", "") == "Certificates")
    assert any("invalid" in str(row[7]) for row in table.rows)
