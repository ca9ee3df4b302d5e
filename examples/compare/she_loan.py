"""The same keyword loan scorer with a planted bias (docs/compare.md): it also denies every
application that mentions "she". `fairprobe compare` should name he→she as what got worse."""


def classify(texts: list[str]) -> list[str]:
    out = []
    for t in texts:
        words = set(t.lower().replace(".", " ").replace(",", " ").split())
        out.append("deny" if "late" in t.lower() or "she" in words else "approve")
    return out
