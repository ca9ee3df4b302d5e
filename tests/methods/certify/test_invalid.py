"""A sentence the verifier cannot finish is *invalid* (issue 16): counted apart, not a crash and not
an uncertified sentence. A real allocation failure is provoked in a child process whose address
space is capped just above what it already uses."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, resource, sys
from fairprobe.methods.certify.certificate import Substitutes, VerifierSettings
from fairprobe.methods.certify.data import Example, load_adult
from fairprobe.methods.certify.lexicon import tokenize
from fairprobe.methods.certify.model import load_model
from fairprobe.methods.certify.pipeline import certify_or_invalid

loaded = load_model(sys.argv[1])
subs = Substitutes(loaded)
test = load_adult("test")
example = Example("long", " ".join((tokenize(test[0].text) + tokenize(test[1].text))[:64]), 0)
vm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 64 * 2**20, resource.RLIM_INFINITY))
record = certify_or_invalid(loaded, example, subs, VerifierSettings(steps=2, baseline=False))
print(json.dumps(record))
"""


def test_out_of_memory_gives_an_invalid_record(tiny_model):
    from fairprobe.methods.certify.analysis import analyse
    from fairprobe.methods.certify.block import CertifyBlock

    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(tiny_model)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    record = json.loads(r.stdout.strip().splitlines()[-1])
    assert record["invalid"] is True and "allocate memory" in record["error"]
    assert record["eps_star"] is None and record["certified"] is False
    record.update(id="main:long", sentence_id="long", variant="main")
    m = analyse(CertifyBlock(model=str(tiny_model)), [record], seed=0).metrics
    assert (m["cases"], m["invalid"], m["invalid_rate"], m["fairness_score"]) == (1, 1, 1.0, None)
    # ... and a run whose every sentence is invalid is inconclusive, whatever the thresholds say.
    from fairprobe.judge.verdict import decide
    from fairprobe.technique.spec import Threshold

    verdict = decide(m, [Threshold.parse("fairness_score<0.5")])
    assert verdict.verdict == "inconclusive" and not verdict.passed


def test_sentences_without_a_sensitive_word_never_pass(cli, tiny_model, tmp_path):
    """Issue 16 through the CLI: a data file none of whose sentences has a word to substitute
    would certify nothing; it never passes."""
    (tmp_path / "plain.csv").write_text(
        "text,label\n" + "".join(f"the weather was calm on day {i},0\n" for i in range(6))
    )
    r = cli(
        "certify", "verify", "--model", str(tiny_model), "--data", "plain.csv", "--n", "4",
        "--steps", "2", "--no-baseline", "--out", "run", "--fail-on", "fairness_score<0.5",
    )  # fmt: skip
    # Refused before any run folder work: an input error (exit 2) with one line naming the problem.
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "no sentence of the data holds a sensitive word" in r.stderr
