"""fairprobe: test language models for unfair, biased behaviour.

Five published techniques (HInter, Meta-Fair, CAFFE, fairness certificates, BAFA) share one
spec format, one run store and one report format. See ``shared/DESIGN.md`` and the README.
"""

__version__ = "0.1.0"
