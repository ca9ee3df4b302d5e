"""The one-sentence summary of a certify run says what was proven, and never claims a proof for
sentences that were not certified."""

from fairprobe.methods.certify.ranking import headline


def test_no_certificate_is_not_described_as_a_proof():
    text = headline({"sentences": 10, "certified": 0})
    assert text.startswith("0 of 10 sentences were certified fair (0%)")
    assert "for none could the verifier prove" in text
    assert "no substitution of their sensitive words can change" not in text


def test_every_sentence_certified_states_the_proof():
    text = headline({"sentences": 4, "certified": 4})
    assert text == (
        "4 of 4 sentences were certified fair (100%): no substitution of their sensitive words can change "
        "the prediction"
    )


def test_some_certified_separates_proven_from_unproven():
    text = headline({"sentences": 5, "certified": 2})
    assert "for these, no substitution" in text and "for the others the verifier could not prove it" in text


def test_nothing_decided_measures_nothing():
    assert headline({"sentences": 0}) == "no sentence was decided by the verifier: nothing was measured"
