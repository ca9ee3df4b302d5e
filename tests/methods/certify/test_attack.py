"""The attack radius beside each certificate: proven ε* ≤ true robust radius ≤ attack radius.

On a model whose robust radius is known in closed form (no transformer block: the logits are a
linear map of the mean token embedding) both bounds must close in on it; on the trained model the
attack radius must never fall below the verified ε* (that would make the verifier unsound)."""

from __future__ import annotations

import pytest

from fairprobe.methods.certify.attack import AttackSettings, attack, box_attack_radius
from fairprobe.methods.certify.model import ModelConfig, build_model
from fairprobe.methods.certify.network import max_verified_eps


def linear_model():
    """vocab: 0 pad, 1 'a' = (1, 0), 2 'b' = (0, 1), 3 'c' = (0.9, 0.1); logits = mean embedding.

    For the sentence 'a a' the margin is mean(x0 − x1) = 1 at the centre and 1 − 2r at the worst
    corner of the box of radius r: the true robust radius is exactly 0.5."""
    import torch

    m = build_model(ModelConfig(vocab_size=4, dim=2, heads=1, ff=2, blocks=0, max_len=4)).double().eval()
    with torch.no_grad():
        m.tok.weight[:] = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.9, 0.1]])
        m.pos.weight.zero_()
        m.head.weight[:] = torch.eye(2)
        m.head.bias.zero_()
    return m


def test_both_bounds_close_in_on_the_exact_radius():
    import torch

    m = linear_model()
    e = m.tok.weight[torch.tensor([1, 1])].detach()
    proven = max_verified_eps(m, e, 0, "zonotope", steps=12).eps_star
    upper, calls = box_attack_radius(m, e, 0, 0.1, AttackSettings())
    assert calls > 1
    assert proven <= 0.5 < upper <= 0.5 * 2 ** (1 / 32)
    assert proven > 0.49  # an exact verifier on a linear model


def test_real_substitutions_flip_at_their_own_distance():
    m = linear_model()
    repl = [("a", "b", 1.0, [1], [2]), ("a", "c", 0.1, [1], [3])]
    res = attack(m, [1, 1], 0, 0.4, repl, AttackSettings())
    assert res.substitutions_tried == 2
    assert res.substitution_flips == [["a", "b", 1.0]]  # 'b b' is class 1; 'c c' stays class 0
    assert res.substitution_radius == 1.0
    assert res.upper == res.radius < 1.0  # the box attack finds a closer flip than the substitution


def test_attack_never_beats_the_verifier_on_a_trained_model(loaded):
    from fairprobe.methods.certify.certificate import (
        Substitutes,
        VerifierSettings,
        certify,
        choose_sentences,
    )
    from fairprobe.methods.certify.data import load_eval_data

    subs = Substitutes(loaded, 50)
    sentences = choose_sentences(load_eval_data(None, loaded.cfg.task)[:1500], subs, 3, 0)
    for example in sentences:
        r = certify(loaded, example, subs, VerifierSettings(steps=4, baseline=False))
        assert r["substitutions_tried"] > 0
        if r["attack_radius"] is not None:
            assert r["attack_radius"] >= r["eps_star"]
            assert r["verifier_gap"] == pytest.approx(r["attack_radius"] / r["eps_star"])
            assert r["certifiable"] == (r["attack_radius"] > r["threshold"])
