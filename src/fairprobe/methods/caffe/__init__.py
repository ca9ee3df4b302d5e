"""CAFFE: structured, intent-aware counterfactual fairness test cases (shared/seeds/caffe.txt).

Test cases follow the paper's Table 1 (:mod:`.case`); a stereotype knowledge base of
(topic, disadvantaged group, advantaged group) triples comes from CrowS-Pairs (:mod:`.kb`); a
generator LLM writes counterfactual prompt pairs per intent, stopped by the entropy-rate rule
(:mod:`.generation`, :mod:`.diversity`); responses are compared with LSA, LDA and embedding
similarity (:mod:`fairprobe.oracles.similarity`) against the case's threshold, with optional
calibrated verdicts (:mod:`.verdicts`).
"""

from fairprobe.methods.caffe.technique import TECHNIQUE

__all__ = ["TECHNIQUE"]
