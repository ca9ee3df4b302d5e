"""Fairness regression between two models: ``fairprobe compare BASE NEW`` (see :mod:`.core`)."""

from fairprobe.compare.core import Comparison, compare_runs, load_run
from fairprobe.compare.pairing import Outcome, Pairing

__all__ = ["Comparison", "Outcome", "Pairing", "compare_runs", "load_run"]
