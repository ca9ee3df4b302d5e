"""Standard bias benchmarks scored exactly as published: BBQ, CrowS-Pairs, StereoSet (intrasentence),
WinoBias, Winogender and DiscrimEval (explicit), from vendored offline copies, with 95% cluster
bootstrap intervals, INVALID answers counted apart, default gates and item-paired comparison."""

from fairprobe.methods.benchmark.technique import TECHNIQUE

__all__ = ["TECHNIQUE"]
