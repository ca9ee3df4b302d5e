"""Relaxations, interval operations, the contrastive loss, data serialisation and word lists."""

from __future__ import annotations

import pytest
import torch

from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.data import adult_sentence, load_toxicity
from fairprobe.methods.certify.interval import Box
from fairprobe.methods.certify.pretrain import contrastive_loss
from fairprobe.methods.certify.relax import exp_relax, reciprocal_relax, relu_relax, rsqrt_relax, square_relax

FUNCS = {
    "relu": (relu_relax, lambda x: x.clamp_min(0), (-3.0, 3.0)),
    "exp": (exp_relax, torch.exp, (-8.0, 4.0)),
    "reciprocal": (reciprocal_relax, lambda x: 1 / x, (1e-3, 20.0)),
    "rsqrt": (rsqrt_relax, torch.rsqrt, (1e-5, 20.0)),
    "square": (square_relax, lambda x: x * x, (-5.0, 5.0)),
}


@pytest.mark.parametrize("name", FUNCS)
def test_relaxation_encloses_the_function(name):
    relax, f, (a, b) = FUNCS[name]
    gen = torch.Generator().manual_seed(0)
    ends = a + (b - a) * torch.rand((2, 400), generator=gen, dtype=torch.float64)
    lo, hi = ends.min(0).values, ends.max(0).values
    lam, mu, beta = relax(lo, hi)
    t = torch.linspace(0, 1, 257, dtype=torch.float64)[:, None]
    x = lo + t * (hi - lo)
    err = f(x) - (lam * x + mu)
    assert bool((err.abs() <= beta).all())


def test_relaxation_check_can_fail():
    lam, mu, beta = square_relax(
        torch.tensor([-1.0], dtype=torch.float64), torch.tensor([2.0], dtype=torch.float64)
    )
    x = torch.linspace(-1, 2, 101, dtype=torch.float64)
    assert not bool(((x * x - (lam * x + mu)).abs() <= beta * 0.9).all())


def test_interval_ops_enclose_samples():
    gen = torch.Generator().manual_seed(1)
    c1, c2 = (
        torch.randn(3, 4, dtype=torch.float64, generator=gen),
        torch.randn(4, 5, dtype=torch.float64, generator=gen),
    )
    a, b = (
        Box(c1, torch.rand(3, 4, dtype=torch.float64, generator=gen)),
        Box(c2, torch.rand(4, 5, dtype=torch.float64, generator=gen)),
    )
    prod, soft = a.matmul(b), a.softmax()
    for _ in range(200):
        x = c1 + a.r * (2 * torch.rand(3, 4, dtype=torch.float64, generator=gen) - 1)
        y = c2 + b.r * (2 * torch.rand(4, 5, dtype=torch.float64, generator=gen) - 1)
        lo, hi = prod.bounds()
        assert bool(((x @ y >= lo - 1e-12) & (x @ y <= hi + 1e-12)).all())
        lo, hi = soft.bounds()
        assert bool(((x.softmax(-1) >= lo - 1e-12) & (x.softmax(-1) <= hi + 1e-12)).all())


def test_contrastive_loss_is_eq_2():
    e1 = torch.tensor([[0.0, 0.0], [0.0, 0.0]])
    e2 = torch.tensor([[3.0, 4.0], [0.3, 0.4]])  # D = 5 and 0.5
    similar = contrastive_loss(e1, e2, torch.tensor([0.0, 0.0]), alpha=2.0, margin=1.0)
    assert float(similar) == pytest.approx(((25 + 10) + (0.25 + 1.0)) / 2, rel=1e-5)
    dissimilar = contrastive_loss(e1, e2, torch.tensor([1.0, 1.0]), alpha=2.0, margin=1.0)
    assert float(dissimilar) == pytest.approx((0 + 0.25) / 2, rel=1e-5)


def test_adult_sentence_matches_appendix_b4():
    row = {
        "workclass": "Private",
        "education": "7th-8th",
        "education_num": "4",
        "occupation": "Machine-op-inspct",
        "sex": "Female",
        "marital_status": "Divorced",
        "relationship": "Unmarried",
        "race": "White",
        "native_country": "United-States",
        "hours_per_week": "40",
    }
    assert adult_sentence(row) == (
        "A person's workclass is Private, education is 7th-8th (number of years of education is 4), "
        "occupation is Machine-op-inspct, sex is female, marital status is Divorced, relationship is "
        "Unmarried, race is White, native country is United-States, and they work 40 hours per week."
    )


def test_toxicity_split_is_disjoint_and_has_both_classes():
    train, test = load_toxicity("train"), load_toxicity("test")
    assert not {e.id for e in train} & {e.id for e in test}
    assert {e.label for e in test} == {0, 1} and len(test) > 300


def test_word_lists():
    female, male = lexicon.gender_words()
    assert {"female", "woman", "she", "wife"} <= female and {"male", "man", "he", "husband"} <= male
    assert not female & male
    assert "fuck" in lexicon.toxic_terms()


def test_wordnet_pairs():
    if not lexicon.wordnet_available():
        pytest.skip("WordNet (Debian wordnet-base) is not installed: apt-get install -y wordnet-base")
    syn, ant = lexicon.wordnet_pairs(["good", "private"], lexicon.gender_specific(), 200, 0)
    assert len(syn) == 200 and ant
    assert not {w for p in syn for w in p} & lexicon.gender_specific()
