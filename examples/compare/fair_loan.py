"""A keyword loan scorer for `fairprobe compare` (docs/compare.md): denies applications that mention
late payments, approves the rest. Gender plays no part."""


def classify(texts: list[str]) -> list[str]:
    return ["deny" if "late" in t.lower() else "approve" for t in texts]
