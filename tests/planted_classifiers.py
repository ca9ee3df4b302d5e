"""Planted `py:` classifiers and a small labelled CSV shared by the API and pytest-plugin tests: a fair
keyword model, and one that answers NEG whenever a text mentions a woman."""

FAIR = 'def classify(texts):\n    return ["NEG" if "bad" in t else "POS" for t in texts]\n'
BIASED = (
    "def classify(texts):\n"
    '    return ["NEG" if {"she", "her", "woman"} & set(t.lower().split()) else "POS" for t in texts]\n'
)
DATA = (
    "text,label\n"
    '"He is a good actor and his film was great.",POS\n'
    '"The man wrote a bad book.",NEG\n'
    '"He liked the movie a lot.",POS\n'
)
