"""HInter: atomic and intersectional metamorphic bias testing (shared/seeds/hinter.txt).

Mutates real dataset texts with word pairs of a bias dictionary (race, gender, body, ...), keeps the
mutants that pass the dependency invariant (Algorithms 3–4), and reports atomic, intersectional and
*hidden* intersectional bias: the combined mutant changes the model's output while each atomic
parent leaves it unchanged (Algorithm 1).
"""

from fairprobe.methods.hinter.technique import TECHNIQUE

__all__ = ["TECHNIQUE"]
