"""HInter's invariant on the person check's pipeline: a run with both loads one spaCy pipeline, and the
invariant's parses (tags, dependencies) and verdicts are those of its own recogniser-free pipeline."""

from __future__ import annotations

import pytest

from fairprobe.text.invariant import InvariantChecker, literal_invariant

pytest.importorskip("spacy")


def _pairs() -> list[tuple[str, str]]:
    """(original, mutant) pairs of the bench's person sentences: names, nationalities and body words
    change, so the recogniser would have entities to find if it ran."""
    from fairprobe.lexicons.dictionary import load_dictionary
    from fairprobe.text.mutate import atomic_mutants, intersectional_mutants

    d = load_dictionary()
    texts = [
        "The white man told John a long story about his life in Paris. He smiled.",
        "A Chinese actor and his brother run a small shop near the station.",
        "My Irish uncle is a tall man who loves old movies, says Mary Smith.",
        "An old Indian man and his wife walked to the market in Delhi.",
    ]
    pairs: list[tuple[str, str]] = []
    for i, text in enumerate(texts):
        for m in atomic_mutants(text, d, "race", max_mutants=8, seed=i):
            pairs.append((text, m.text))
        for m, _ in intersectional_mutants(text, d, ("race", "gender"), max_mutants=8, seed=i):
            pairs.append((text, m.text))
    return pairs


def test_the_invariant_on_the_person_pipeline_parses_and_judges_as_its_own() -> None:
    from fairprobe.text.parser import load_parser
    from fairprobe.text.person import person_parser

    pairs = _pairs()
    with InvariantChecker() as own, InvariantChecker(with_ner=True) as shared:
        assert shared._nlp is person_parser()  # the person check's pipeline, not a second load
        assert "ner" in shared._nlp.pipe_names and "ner" not in own._nlp.pipe_names
        verdicts = shared.check(pairs)
        assert verdicts == own.check(pairs)
        assert shared._parses == own._parses  # every sentence: same tags and dependency labels
        assert shared.model_name == own.model_name
    assert 0 < sum(verdicts) < len(verdicts)  # both verdicts occur
    nlp = load_parser(None, minimal=True)[0]
    assert verdicts == [literal_invariant(c, m, nlp) for c, m in pairs]  # Algorithm 3 as written


def test_a_hinter_run_with_the_person_check_and_the_invariant_loads_one_pipeline() -> None:
    from fairprobe.lexicons.dictionary import load_dictionary
    from fairprobe.methods.hinter.block import HInterBlock
    from fairprobe.methods.hinter.cases import checker_for, needs_person_check
    from fairprobe.text.person import person_parser

    d = load_dictionary()
    both = HInterBlock(model="py:m:f", attributes=["race", "gender"], invariant=True)
    assert needs_person_check(d, both)
    assert checker_for(d, both, 1)._nlp is person_parser(both.spacy_model)
    alone = HInterBlock(
        model="py:m:f", attributes=["race", "gender"], invariant=True, person_adjectives=False
    )
    assert not needs_person_check(d, alone)
    assert "ner" not in checker_for(d, alone, 1)._nlp.pipe_names  # no recogniser loaded for nothing
