"""Planted `py:` classifiers and a small labelled CSV shared by the API and pytest-plugin tests: a fair
keyword model, and one that answers NEG whenever a text mentions a woman."""

from pathlib import Path

FAIR = 'def classify(texts):\n    return ["NEG" if "bad" in t else "POS" for t in texts]\n'
BIASED = (Path(__file__).resolve().parents[1] / "examples" / "planted" / "planted_classifier.py").read_text(
    encoding="utf-8"
)  # the runnable example the docs show (docs/local-llm.md): its figures are these tests' figures
DATA = (
    "text,label\n"
    '"He is a good actor and his film was great.",POS\n'
    '"The man wrote a bad book.",NEG\n'
    '"He liked the movie a lot.",POS\n'
)
