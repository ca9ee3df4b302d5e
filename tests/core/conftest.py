import pytest

LABELLED_CSV = "id,text,label\n" + "\n".join(
    f"r{i},{'a good film' if i % 2 else 'a bad film'} number {i},{'POS' if i % 2 else 'NEG'}"
    for i in range(10)
)

# A py: classifier that logs every call (to count model calls) and is right except on r3's text.
COUNTING_MODEL = """
from pathlib import Path
LOG = Path(__file__).with_name("calls.log")
def classify(texts):
    with LOG.open("a") as fh:
        fh.write(f"{len(texts)}\\n")
    return ["NEG" if ("bad" in t or "number 3" in t) else "POS" for t in texts]
"""


@pytest.fixture
def calls(tmp_path):
    """Number of texts the counting model has been called on so far."""

    def count() -> int:
        log = tmp_path / "calls.log"
        return sum(int(x) for x in log.read_text().split()) if log.exists() else 0

    return count


@pytest.fixture
def labelled(tmp_path):
    (tmp_path / "data.csv").write_text(LABELLED_CSV)
    (tmp_path / "counting.py").write_text(COUNTING_MODEL)
    spec = tmp_path / "spec.yaml"
    spec.write_text("seed: 1\naccuracy:\n  model: py:counting:classify\n  data: data.csv\n")
    return spec
