"""HInter metrics from findings (issue 20): intervals resample originals, the hidden share per pair
has an interval, RQ4.1 is reported both ways, and "generated" counts what existed before sampling."""

from fairprobe.methods.hinter.analysis import analyse
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.stats import rate_with_ci

BLOCK = HInterBlock(model="py:x:y", attributes=["race", "gender"])


def _finding(orig, kind, key, biased=False, hidden=False, parents=(), attributes=None, population=None):
    attrs = attributes or (["race"] if kind == "atomic" else ["race", "gender"])
    f = {
        "id": f"{orig}|{key}",
        "original_id": orig,
        "kind": kind,
        "order": len(attrs),
        "attributes": attrs,
        "key": key,
        "valid": True,
        "invalid": False,
        "biased": biased,
        "hidden": hidden,
        "parents": list(parents),
        "original_output": ["POS"],
        "mutant_output": ["NEG" if biased else "POS"],
    }
    if population is not None:
        f["population"] = population
    f.update(original_text="the x m", text="the q w", spans=[[4, 5]])
    return f


def _demo_shaped():
    """40 originals with 20 intersectional mutants each; one original holds 18 of 24 biased ones."""
    findings = []
    for o in range(40):
        for j in range(20):
            biased = (o == 0 and j < 18) or (o in (5, 9, 13) and j < 2)
            findings.append(_finding(f"r{o}", "intersectional", f"k{j}", biased=biased, parents=()))
    return findings


def test_error_rate_interval_resamples_originals():
    findings = _demo_shaped()
    m = analyse(BLOCK, findings, seed=0).metrics
    er = m["error_rate"]
    flags = [f["biased"] for f in findings]
    _, naive = rate_with_ci(flags, seed=0)
    lo, hi = er["intersectional_ci"]
    assert er["intersectional"] == sum(flags) / len(flags)
    assert lo <= er["intersectional"] <= hi
    # Mutants of one review are correlated: the honest interval is much wider than the naive one.
    assert hi - lo > 2 * (naive[1] - naive[0])
    assert er["by_pair"]["race+gender_ci"] == er["intersectional_ci"]
    assert m["hidden_share_by_pair"]["race+gender"] == 0.0
    assert m["hidden_share_by_pair"]["race+gender_n"] == sum(flags)


def test_rq4_1_both_directions():
    findings = [
        _finding("a", "atomic", "race:x>y", biased=True),
        _finding("a", "atomic", "race:x>z", biased=True),
        _finding("a", "atomic", "gender:m>w", attributes=["gender"]),
        _finding("a", "intersectional", "i1", biased=True, parents=["race:x>y", "gender:m>w"]),
        _finding("a", "intersectional", "i2", biased=True, hidden=True, parents=["race:x>q", "gender:m>w"]),
        _finding("a", "intersectional", "i3", parents=["race:x>z", "gender:m>w"]),
        # same key in another original does not match across originals
        _finding("b", "atomic", "race:x>z", biased=True),
        _finding("b", "intersectional", "i1", biased=True, parents=["race:x>y", "gender:m>w"]),
    ]
    rq = analyse(BLOCK, findings, seed=0).metrics["rq4_1"]
    # biased atomic: a/x>y (has biased child i1), a/x>z (child i3 not biased), b/x>z (none)
    assert rq["atomic_with_intersectional"] == 1 / 3 and rq["atomic_with_intersectional_n"] == 3
    # biased intersectional: a/i1 (parent biased), a/i2 (no biased parent), b/i1 (parent x>y not in b)
    assert rq["intersectional_without_atomic"] == 2 / 3


def test_generated_counts_do_not_shrink_under_sampling():
    findings = [_finding("a", "atomic", f"race:k{j}", population=30) for j in range(5)]
    findings += [_finding("b", "atomic", "race:only")]  # no sampling ran for b
    mutants = analyse(BLOCK, findings, seed=0).metrics["mutants"]["atomic"]
    assert mutants["generated"] == 31 and mutants["sampled"] == 6


def test_sampling_records_the_population_it_sampled_from():
    from fairprobe.data.datasets import Record
    from fairprobe.lexicons.dictionary import load_dictionary
    from fairprobe.methods.hinter.cases import count_generated, generate_lazy

    block = HInterBlock(model="py:x:y", attributes=["race", "gender"], max_mutants_per_text=2)
    record = Record("r", "The white man and his Irish wife met a Chinese woman.", None)
    population: dict = {}
    atomic, inter = generate_lazy(record, load_dictionary(), block, 0, population)
    inter = list(inter)
    assert len(inter) == 2 and len(atomic) <= 2 + 2 * 2  # sample + the parents of kept mutants
    assert population["atomic"] > 2 and population["intersectional"] > 2
    assert population["atomic"] + population["intersectional"] == count_generated(
        record, load_dictionary(), block
    )
