"""`fairprobe caffe generate` writes each pair as it is accepted, shows progress per triple, and resumes
after a kill: finished triples are skipped, the pairs of a triple the kill cut short are made again.

The generator is a real ``py-chat:`` function that logs, at each call, how many pairs the output
file already holds, and kills its own process with SIGKILL at a chosen call.
"""

import json

from fairprobe.methods.caffe.generation import read_prompts
from fairprobe.methods.caffe.kb import Triple, write_kb

GEN = """
import json, os, re, signal

def generate(conversations):
    out = []
    for conv in conversations:
        text = conv[-1]["content"]
        a, b = re.search(r"Group A: (.+?)\\. Group B: (.+?)\\.\\n", text).groups()
        lines = open("prompts.jsonl").read().count("\\n") if os.path.exists("prompts.jsonl") else -1
        with open("calls.log", "a") as fh:
            fh.write(f"{a}|{lines}\\n")
        calls = open("calls.log").read().count("\\n")
        if os.path.exists("kill_at") and calls == int(open("kill_at").read()):
            os.kill(os.getpid(), signal.SIGKILL)
        n = len(conv)  # differs between the first and the second call of a triple (accepted pairs listed)
        words = ["cook", "vote", "travel", "save", "rest", "learn"]
        pairs = [{"pair_id": k, "prompt_a": f"How do {a} {words[k + (3 if 'Do not repeat' in text else 0)]}?",
                  "prompt_b": f"How do {b} {words[k + (3 if 'Do not repeat' in text else 0)]}?"} for k in range(3)]
        out.append(json.dumps(pairs))
    return out
"""

CASE = "identifier: C1\nintent: question\nenvironment:\n  model: embedded:smollm2\n"

ARGS = (
    "caffe", "generate", "--case", "case.yaml", "--kb", "kb.jsonl", "--generator", "py-chat:gen:generate",
    "--pairs-per-triple", "4", "--pairs-per-call", "3", "--output", "prompts.jsonl",
)  # fmt: skip


def _setup(tmp_path):
    (tmp_path / "gen.py").write_text(GEN)
    (tmp_path / "case.yaml").write_text(CASE)
    groups = [("poor people", "rich people"), ("old people", "young people"), ("women", "men")]
    write_kb(
        [Triple(f"t{i}", "money", g1, g2, "socioeconomic") for i, (g1, g2) in enumerate(groups)],
        tmp_path / "kb.jsonl",
    )


def _calls(tmp_path):
    return [line.split("|") for line in (tmp_path / "calls.log").read_text().splitlines()]


def test_pairs_are_written_as_accepted_with_progress(cli, tmp_path):
    _setup(tmp_path)
    r = cli(*ARGS)
    assert r.returncode == 0, r.stderr
    # two calls per triple (3 + 1 pairs); before each call the file held every pair accepted so far
    assert [int(c[1]) for c in _calls(tmp_path)] == [0, 3, 4, 7, 8, 11]
    assert len(read_prompts(tmp_path / "prompts.jsonl")) == 12
    assert "caffe generate: 3 case-triple(s) to py-chat:gen:generate" in r.stderr  # said at the start
    assert "caffe generate: triples: 3/3 (100%)" in r.stderr  # per triple (an ETA shows after 2 s)
    stopping = json.loads((tmp_path / "prompts.stopping.json").read_text())
    assert len(stopping["triples"]) == 3 and stopping["summary"]["pairs"] == 12


def test_a_killed_run_resumes_skipping_finished_triples(cli, tmp_path):
    _setup(tmp_path)
    (tmp_path / "kill_at").write_text("4")  # the second call of the second triple
    r = cli(*ARGS)
    assert r.returncode == -9
    lines = (tmp_path / "prompts.jsonl").read_text().splitlines()
    assert len(lines) == 7 and all(json.loads(x)["prompt_1"] for x in lines)  # 4 + the 3 of call 3
    assert len(json.loads((tmp_path / "prompts.stopping.json").read_text())["triples"]) == 1
    (tmp_path / "kill_at").unlink()
    first = _calls(tmp_path)
    r = cli(*ARGS)
    assert r.returncode == 0, r.stderr
    assert (
        "resuming prompts.jsonl: 4 pair(s) of 1 finished triple(s) already there; 2 of 3 triple(s) left"
        in (r.stderr)
    )
    again = _calls(tmp_path)[len(first) :]
    assert "poor people" not in {c[0] for c in again}  # the finished triple is not asked again
    records = read_prompts(tmp_path / "prompts.jsonl")
    assert len(records) == 12 and len({r["id"] for r in records}) == 12
    assert [r["triple_id"] for r in records] == ["t0"] * 4 + ["t1"] * 4 + ["t2"] * 4
    stopping = json.loads((tmp_path / "prompts.stopping.json").read_text())
    assert sorted(t["triple_id"] for t in stopping["triples"]) == ["t0", "t1", "t2"]
