"""BAFA: query-efficient active fairness auditing of black-box models with C-ERM intervals.

Implements Hartmann et al., "Audit Me If You Can" (shared/seeds/bafa.txt): C-ERM bounds on a
fairness gap over a version space of surrogates (§3 S1, App. A.2.2, :mod:`.cerm`), active query
selection by bound disagreement or disagreement-anchored BO (S2, App. A.2.3–A.2.4,
:mod:`.selection`), the loop of Algorithm 1 with a working stopping rule (:mod:`.engine`), the
passive baselines of App. A.3, and the evaluation protocol of App. A.5.1 (:mod:`.evaluate`).
"""

from fairprobe.methods.audit.technique import TECHNIQUE

__all__ = ["TECHNIQUE"]
