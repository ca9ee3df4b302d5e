"""A black-box classifier's score outside [0, 1] is an invalid answer, counted, never clipped into a
plausible probability (issue 40): through a real `py:` classifier that returns Predictions."""

from __future__ import annotations

import sys

import numpy as np

from fairprobe.methods.audit.blackbox import BlackBox
from fairprobe.models.uri import load_classifier

MODEL = """
from fairprobe.models.base import Prediction

def score(texts):
    values = {"low": 0.2, "high": 0.9, "over": 1.5, "under": -0.3}
    return [Prediction(frozenset({"pos"}), {"pos": values[t]}) for t in texts]
"""


class _Context:
    """The one thing BlackBox asks of a run context: the classifier at a URI."""

    def classifier(self, uri: str):
        return load_classifier(uri)


def test_scores_outside_the_unit_interval_are_invalid_not_clipped(tmp_path, monkeypatch):
    (tmp_path / "scoring_model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("scoring_model", None)
    box = BlackBox(_Context(), "py:scoring_model:score", positive_label="pos")
    scores = box(["low", "over", "high", "under"])
    assert box.answers == 4 and box.invalid == 2
    assert scores[0] == 0.2 and scores[2] == 0.9
    # the two out-of-range answers are not read as probabilities 1.0 and 0.0
    assert not np.isclose(scores[1], 1.0) and not np.isclose(scores[3], 0.0)
