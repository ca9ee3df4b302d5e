"""A keyword classifier for bench/scale.py's memory run (``py:bench.fastmodel:predict``): no model cost,
so the run measures the pipeline and the driver, not a neural network."""

import re

_NEGATIVE = re.compile(r"\b(women|woman|black|gay|old|poor|disabled)\b", re.IGNORECASE)


def predict(texts: list[str]) -> list[str]:
    return ["NEG" if _NEGATIVE.search(t) else "POS" for t in texts]
