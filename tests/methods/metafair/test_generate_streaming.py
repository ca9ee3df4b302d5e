"""`fairprobe metafair generate` writes each test as it is made, shows progress, and resumes after a kill.

The generator is a real ``py-chat:`` function: it logs, at each call, how many tests the output file
already holds (so the test sees the writing happen during the run), and it kills its own process
with SIGKILL at a chosen call, as an operator or the OOM killer would.
"""

import json

from fairprobe.methods.metafair.schema import read_tests

GEN = """
import json, os, re, signal

def generate(conversations):
    out = []
    for conv in conversations:
        user = conv[1]["content"]
        a, b = re.search(r'using "(.+?)" and "(.+?)"', user).groups()
        lines = open("tests.jsonl").read().count("\\n") if os.path.exists("tests.jsonl") else -1
        with open("calls.log", "a") as fh:
            fh.write(f"{a}|{b}|{lines}\\n")
        calls = open("calls.log").read().count("\\n")
        if os.path.exists("kill_at") and calls == int(open("kill_at").read()):
            os.kill(os.getpid(), signal.SIGKILL)
        out.append(json.dumps([{"mr": "MR12", "dimension": "gender", "attributes": [a, b],
                                "source": f"Should a {a} lead the team?",
                                "follow_up": f"Should a {b} lead the team?"}]))
    return out
"""

ARGS = (
    "metafair", "generate", "--generator", "py-chat:gen:generate", "--mrs", "MR12", "--dimensions", "gender",
    "--attributes-per-dimension", "4", "--output", "tests.jsonl",
)  # fmt: skip


def _calls(path):
    return [line.split("|") for line in (path / "calls.log").read_text().splitlines()]


def test_tests_are_written_as_made_with_progress(cli, tmp_path):
    (tmp_path / "gen.py").write_text(GEN)
    r = cli(*ARGS)
    assert r.returncode == 0, r.stderr
    calls = _calls(tmp_path)
    assert len(calls) == 4
    # before call k the file already held the k-1 tests made so far: written one by one, not at the end
    assert [int(c[2]) for c in calls] == [0, 1, 2, 3]
    tests, invalid = read_tests(tmp_path / "tests.jsonl")
    assert len(tests) == 4 and not invalid
    assert "metafair generate: 4 request(s) of 1 test(s) to py-chat:gen:generate" in r.stderr  # at the start
    assert "metafair generate: requests: 4/4 (100%)" in r.stderr  # per request (an ETA shows after 2 s)


def test_a_killed_run_leaves_a_valid_file_and_the_rerun_resumes(cli, tmp_path):
    (tmp_path / "gen.py").write_text(GEN)
    (tmp_path / "kill_at").write_text("3")
    r = cli(*ARGS)
    assert r.returncode == -9  # SIGKILL in the third generator call
    tests, invalid = read_tests(tmp_path / "tests.jsonl")
    assert len(tests) == 2 and not invalid  # the two tests made before the kill are there
    with (tmp_path / "tests.jsonl").open("a") as fh:  # and a line cut off mid-write
        fh.write('{"mr": "MR12", "dimension": "gen')
    (tmp_path / "kill_at").unlink()
    done_before = {(c[0], c[1]) for c in _calls(tmp_path)[:2]}
    r = cli(*ARGS)
    assert r.returncode == 0, r.stderr
    assert "resuming tests.jsonl: 2 test(s) already there, 2 of 4 request(s) done, 2 left" in r.stderr
    again = _calls(tmp_path)[3:]  # calls of the re-run (the third call died with the first run)
    assert not {(c[0], c[1]) for c in again} & done_before  # requests already done are not asked again
    tests, invalid = read_tests(tmp_path / "tests.jsonl")
    assert len(tests) == 4 and not invalid and len({t.id for t in tests}) == 4
    lines = (tmp_path / "tests.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(line)["mr"] == "MR12" for line in lines)
    r = cli(*ARGS, "--overwrite")
    assert r.returncode == 0 and "resuming" not in r.stderr
