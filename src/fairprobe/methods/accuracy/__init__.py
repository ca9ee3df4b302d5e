"""Accuracy check: a labelled dataset through a classifier, accuracy with a bootstrap CI.

Not a fairness technique by itself: it is the sanity baseline every audit starts from ("does the
model under test do its task at all?"), and it exercises the whole pipeline (generate → execute →
judge → analyse → report) on any classifier URI.
"""

from fairprobe.methods.accuracy.technique import TECHNIQUE

__all__ = ["TECHNIQUE"]
