"""The ε* search (§3.3 binary search): it must resolve radii far below the first guess (issue 20:
Adult's IBP ε* fell under the old 1e-9 stop and the zonotope/IBP ratio showed as null)."""

from __future__ import annotations

import pytest

from fairprobe.methods.certify.network import TINY, search_eps


@pytest.mark.parametrize("truth", [0.37, 2.5e-3, 4e-10, 3e-15, 1e-100, 7e-300])
def test_search_finds_the_largest_verified_radius_at_any_scale(truth):
    calls = []

    def ok(eps: float) -> bool:
        calls.append(eps)
        return eps <= truth

    found = search_eps(ok, eps0=1e-3, steps=12)
    assert found <= truth  # sound: only a radius that verified is returned
    assert found >= truth * (1 - 2**-11)  # and tight to the bisection's precision
    assert len(calls) <= 12 + 12 + 12  # log-space bracket (~10) + bisection: stays cheap


def test_nothing_verifies_gives_zero_and_the_floor_is_float64s():
    assert search_eps(lambda eps: False, eps0=1e-3, steps=8) == 0.0
    assert TINY == pytest.approx(2.2250738585072014e-308)
    assert search_eps(lambda eps: eps <= TINY, eps0=1e-3, steps=8) == TINY


def test_search_stops_at_eps_max_and_respects_a_known_floor():
    assert search_eps(lambda eps: True, eps0=1e-3, steps=5, eps_max=1.0) == pytest.approx(0.512)
    seen = []

    def ok(eps: float) -> bool:
        seen.append(eps)
        return eps <= 0.3

    found = search_eps(ok, eps0=1e-3, steps=10, floor=0.2)
    assert 0.3 * (1 - 2**-9) <= found <= 0.3 and min(seen) > 0.2


def test_a_radius_just_below_a_known_failure_costs_few_calls():
    """certify() first asks the verifier at the threshold t; when that fails, ε* is usually a
    little below t, and the search must not bisect all the way from the float64 floor."""
    calls = []

    def ok(eps: float) -> bool:
        calls.append(eps)
        return eps <= 6e-4

    found = search_eps(ok, eps0=1e-3, steps=10, upper=1e-3)
    assert 6e-4 * (1 - 2**-9) <= found <= 6e-4
    assert len(calls) <= 1 + 10
