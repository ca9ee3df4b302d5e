"""CrowS-Pairs: fairprobe against lm-evaluation-harness, pair by pair, on the same model and pairs.

Usage::

    python bench/benchmark_crows_lmeval.py FAIRPROBE_RUN_DIR LM_EVAL_SAMPLES_JSONL

``FAIRPROBE_RUN_DIR`` is a ``fairprobe benchmark crows-pairs`` run folder (its ``findings.jsonl``);
the samples file is what ``lm_eval ... --log_samples`` wrote for a ``crows_pairs_english`` task
(see docs/benchmarks.md for the exact commands). Prints both pct_stereotype and likelihood_diff
over the pairs both scored, how many pairs got the same decision, and the mean absolute difference
of the sentence log-likelihoods.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(run_dir: str, samples: str) -> dict[str, float]:
    ours = {}
    for line in (Path(run_dir) / "findings.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("score_more") is not None:
            ours[r["sent_more"]] = (r["score_more"], r["score_less"])
    theirs = {}
    for line in Path(samples).read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        theirs[s["doc"]["sent_more"]] = tuple(float(x[0]) for x in s["filtered_resps"])
    both = [k for k in theirs if k in ours]
    n = len(both)
    if n == 0:
        raise SystemExit("the two runs share no pair; are they over the same CrowS-Pairs file?")
    return {
        "pairs_compared": n,
        "pct_stereotype_fairprobe": sum(ours[k][0] > ours[k][1] for k in both) / n,
        "pct_stereotype_lm_eval": sum(theirs[k][0] > theirs[k][1] for k in both) / n,
        "likelihood_diff_fairprobe": sum(abs(ours[k][0] - ours[k][1]) for k in both) / n,
        "likelihood_diff_lm_eval": sum(abs(theirs[k][0] - theirs[k][1]) for k in both) / n,
        "same_decision": sum((ours[k][0] > ours[k][1]) == (theirs[k][0] > theirs[k][1]) for k in both),
        "mean_abs_loglik_difference": sum(abs(ours[k][i] - theirs[k][i]) for k in both for i in (0, 1))
        / (2 * n),
    }


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(json.dumps(main(sys.argv[1], sys.argv[2]), indent=1))
