"""Verdicts: fail conditions and their grammar (:mod:`.thresholds`), the technique's default gates
(:mod:`.gates`), the decision rule (:mod:`.verdict`), refused answers (:mod:`.refusals`) and the
headline figures the screen and report lead with (:mod:`.headline`)."""
