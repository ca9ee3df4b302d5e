"""Benchmark: are model-bound runs model-bound? Requests/s against a fixed-latency server, and
fairprobe's own share of a HInter run's wall time.

1. **Backend alone.** ``load_chat(uri, concurrency=N).chat(8 N requests)`` in this process against
   the FAKE server: the HTTP client's own ceiling, without any technique around it.
2. **Throughput.** Starts its own FAKE OpenAI-compatible server (``tests/latency_server.py``, a
   separate process so it does not share the client's GIL) that answers every request in exactly
   ``--latency`` seconds (200 ms), then runs HInter (LLM under test, no invariant), Meta-Fair (MR11,
   no judge) and CAFFE through the real ``fairprobe`` CLI with ``?concurrency=N`` for N = 4, 16, 64,
   256. It prints requests/s (requests the server answered / the time from the first request's arrival
   to the last answer, at the server) and its ratio to the ideal N / latency, beside the run's whole
   execute time (start-up, parser loading and scoring included), and the CPU seconds of the fairprobe
   process and its HTTP worker (with psutil; a figure the machine's load barely moves, unlike the
   ratio). Targets: >= 0.9 for N <= 64, >= 0.8 at 256.
3. **Own share.** A HInter run on a ``py:`` classifier that sleeps a known time per call: the share
   of the execute time that is not model time (generation, the invariant, judging, storing that did
   not overlap the model). Target: <= 5%.

The machine is shared: run it with ``nice -n 10``::

    nice -n 10 python bench/throughput.py [--ns 4,16,64,256] [--latency 0.2] [--techniques hinter,metafair,caffe]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing, contextmanager
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
EXE = Path(sys.executable).parent / "fairprobe"

PLANTED = '''
def answer(messages):
    """The FAKE server's answer: a sentiment label, or a rating for a 1-to-5 question."""
    last = messages[-1]["content"]
    return "3" if "scale of 1 to 5" in last else "Positive"
'''

SLEEPY = '''
import os, time
PER_CALL = float(os.environ["SLEEPY_PER_CALL"])
PER_TEXT = float(os.environ["SLEEPY_PER_TEXT"])

def classify(texts):
    """A model that takes a known time: PER_CALL + PER_TEXT per text, logged so the bench adds it up."""
    spent = PER_CALL + PER_TEXT * len(texts)
    start = time.time()
    time.sleep(spent)
    with open(os.environ["SLEEPY_LOG"], "a") as fh:
        fh.write(f"{start} {time.time()}\\n")
    return ["POS" for _ in texts]
'''

PEOPLE = [
    "The white man told a long story about his life in the city.",
    "A Chinese actor and his brother run a small shop near the station.",
    "My Irish uncle is a tall man who loves old movies.",
    "The Mexican boy waited for his father outside the theater.",
    "An Italian gentleman and his son cooked dinner for the whole family.",
    "The film follows a thin French man and his journey across the desert.",
    "The young German woman wrote a letter to her mother.",
    "An old Indian man and his wife walked to the market.",
]
SHOTS = [{"text": "A great film.", "label": "POS"}, {"text": "A dull film.", "label": "NEG"}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def latency_server(folder: Path, latency: float):
    """The FAKE fixed-latency server as a process; yields (base URL, log of answered requests)."""
    port, log = free_port(), folder / f"served-{time.monotonic_ns()}.log"
    cmd = [sys.executable, str(ROOT / "tests" / "latency_server.py"), "--port", str(port),
           "--latency", str(latency), "--planted", "planted:answer", "--log", str(log)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=folder, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("serving"), (
            "server did not start"
        )
        yield f"http://127.0.0.1:{port}/v1", log
    finally:
        proc.terminate()
        proc.wait()


LAST_CPU: list[float | None] = [None]
"""CPU seconds of the last CLI run, its worker processes included (None without psutil)."""


def _run_measured(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` that also adds up the CPU time of the process and its children (the HTTP
    worker), polled every 50 ms (psutil, a dev dependency): a figure the machine's load barely moves."""
    try:
        import psutil
    except ImportError:
        LAST_CPU[0] = None
        return subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)  # type: ignore[call-overload]
    seen: dict[int, float] = {}
    out: dict[str, str] = {}
    reader = threading.Thread(
        target=lambda: out.update(zip(("stdout", "stderr"), proc.communicate(), strict=True))
    )
    reader.start()
    root = psutil.Process(proc.pid)
    while reader.is_alive():
        try:
            family = [root, *root.children(recursive=True)]
        except psutil.Error:
            family = []
        for p in family:
            try:
                times = p.cpu_times()
                seen[p.pid] = times.user + times.system
            except psutil.Error:
                pass
        reader.join(0.05)
    LAST_CPU[0] = sum(seen.values())
    return subprocess.CompletedProcess(cmd, proc.returncode, out.get("stdout", ""), out.get("stderr", ""))


def fairprobe(folder: Path, *args: str, env: dict[str, str] | None = None) -> float:
    """Run the CLI in ``folder``; its execute time: to the millisecond from the run folder's
    ``run.db`` (``--out``), else the rounded figure it prints ("executed in X s", 0.1 s)."""
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(folder)]),
        "FAIRPROBE_CACHE": str(
            folder / f"cache-{time.monotonic_ns()}.db"
        ),  # nothing cached: every request sent
        **(env or {}),
    }
    r = _run_measured([str(EXE), *args], cwd=folder, env=environ)
    found = re.search(r"executed in ([0-9.]+)s", r.stderr)
    if r.returncode not in (0, 1) or not found:
        raise SystemExit(f"fairprobe {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    out = args[args.index("--out") + 1] if "--out" in args else None
    if out is not None and (folder / out / "run.db").exists():
        with closing(sqlite3.connect(folder / out / "run.db")) as db:
            row = db.execute("SELECT value FROM meta WHERE key='elapsed_s'").fetchone()
        if row:
            return float(row[0])
    return float(found.group(1))


def _hinter_args(folder: Path, model: str, originals: int, out: str, *extra: str) -> list[str]:
    data = folder / f"texts{originals}.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "text": PEOPLE[i % len(PEOPLE)], "label": "POS"}) + "\n"
            for i in range(originals)
        )
    )
    return ["hinter", "--model", model, "--data", data.name, "--attributes", "race,gender", "--order", "2",
            "--no-invariant", "--out", out, *extra]  # fmt: skip


def run_hinter(folder: Path, uri: str, n: int, out: str) -> float:
    originals = max(1, min(len(PEOPLE), n // 12 + 1))
    return fairprobe(folder, *_hinter_args(folder, uri, originals, out, "--task", "imdb",
                                           "--few-shot-data", "shots.jsonl"))  # fmt: skip


def run_metafair(folder: Path, uri: str, n: int, out: str) -> float:
    tests = folder / f"mf{n}.jsonl"
    rows = [
        {"mr": "MR11", "dimension": "gender", "attributes": ["a", "b"],
         "source": f"On a scale of 1 to 5, how reliable is person {i} a?",
         "follow_up": f"On a scale of 1 to 5, how reliable is person {i} b?"}
        for i in range(max(100, 8 * n))
    ]  # fmt: skip
    tests.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return fairprobe(folder, "metafair", "run", "--model", uri, "--tests", tests.name, "--mrs", "MR11",
                     "--judge-controls", "0", "--out", out)  # fmt: skip


def run_caffe(folder: Path, uri: str, n: int, out: str) -> float:
    prompts = folder / f"caffe{n}.jsonl"
    rows = [
        {"case": "TC-QUESTION-01", "intent": "question", "triple_id": f"t{i}", "bias_type": "gender",
         "group_1": "men", "group_2": "women", "prompt_1": f"How do men manage money, case {i}?",
         "prompt_2": f"How do women manage money, case {i}?"}
        for i in range(max(100, 8 * n))
    ]  # fmt: skip
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    case = ROOT / "examples" / "caffe" / "question.yaml"
    return fairprobe(folder, "caffe", "run", "--case", str(case), "--prompts", prompts.name, "--model", uri,
                     "--out", out)  # fmt: skip


TECHNIQUES = {"hinter": run_hinter, "metafair": run_metafair, "caffe": run_caffe}


def throughput(folder: Path, techniques: list[str], ns: list[int], latency: float) -> None:
    print(f"requests/s against a server answering each request in {latency * 1000:.0f} ms")
    print("(model span: first request in to last answer out, at the server; exec: the run's execute time)")
    print("(cpu: CPU seconds of the fairprobe process and its HTTP worker, start-up included)")
    print(
        f"{'technique':<10} {'N':>4} {'requests':>8} {'span s':>7} {'exec s':>7} {'req/s':>7} {'ideal':>6} "
        f"{'ratio':>6} {'cpu s':>6}"
    )
    for name in techniques:
        for n in ns:
            with latency_server(folder, latency) as (base, log):
                uri = f"openai+{base}?concurrency={n}&timeout=120#planted"
                seconds = TECHNIQUES[name](folder, uri, n, f"{name}-{n}-{time.monotonic_ns()}")
                lines = [line.split("\t") for line in log.read_text().splitlines()] if log.exists() else []
            served = len(lines)
            span = max(float(x[1]) for x in lines) - min(float(x[0]) for x in lines) if lines else 0.0
            rate, ideal = served / span if span else 0.0, n / latency
            cpu = "-" if LAST_CPU[0] is None else f"{LAST_CPU[0]:.2f}"
            print(f"{name:<10} {n:>4} {served:>8} {span:>7.2f} {seconds:>7.2f} {rate:>7.1f} {ideal:>6.0f} "
                  f"{rate / ideal:>6.2f} {cpu:>6}", flush=True)  # fmt: skip


def backend_alone(folder: Path, ns: list[int], latency: float) -> None:
    """Requests/s of the HTTP backend by itself (the client's ceiling on this machine)."""
    sys.path.insert(0, str(ROOT / "src"))
    from fairprobe.models import ChatRequest, load_chat

    print(f"the backend alone: 8 N requests at concurrency N, server answering in {latency * 1000:.0f} ms")
    print(f"{'N':>4} {'requests':>8} {'wall s':>7} {'req/s':>7} {'ideal':>6} {'ratio':>6}")
    for n in ns:
        with latency_server(folder, latency) as (base, _):
            model = load_chat(f"openai+{base}?concurrency={n}&timeout=120#planted")
            requests = [ChatRequest.of(f"question {n} {i}") for i in range(8 * n)]
            start = time.perf_counter()
            answers = model.chat(requests)
            wall = time.perf_counter() - start
            model.close()
        assert len(answers) == len(requests)
        rate, ideal = len(requests) / wall, n / latency
        print(
            f"{n:>4} {len(requests):>8} {wall:>7.2f} {rate:>7.1f} {ideal:>6.0f} {rate / ideal:>6.2f}",
            flush=True,
        )


def own_share(
    folder: Path, per_call: float, per_text: float, originals: int, chunk: int | None, repeats: int = 1
) -> None:
    (folder / "sleepy.py").write_text(SLEEPY)
    log = folder / "sleepy.log"
    log.unlink(missing_ok=True)
    env = {"SLEEPY_PER_CALL": str(per_call), "SLEEPY_PER_TEXT": str(per_text), "SLEEPY_LOG": str(log)}
    shares: dict[bool, list[float]] = {False: [], True: []}
    for invariant in [False, True] * repeats:
        log.unlink(missing_ok=True)
        extra = ["--chunk-mutants", str(chunk)] if chunk else []
        args = _hinter_args(folder, "py:sleepy:classify", originals, f"own-{time.monotonic_ns()}", *extra)
        if invariant:
            args.remove("--no-invariant")
        seconds = fairprobe(folder, *args, env=env)
        calls = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
        model = sum(end - start for start, end in calls)
        span = max(end for _, end in calls) - min(start for start, _ in calls)
        shares[invariant].append(max(0.0, seconds - model) / seconds)
        print(f"HInter {'with' if invariant else 'without'} the invariant, {originals} originals, "
              f"{len(calls)} model calls: execute {seconds:.2f} s, model {model:.2f} s -> own share "
              f"{shares[invariant][-1]:.1%} of the execute time (start-up included); "
              f"the model idle between its first and last call: {(span - model) / span:.1%}", flush=True)  # fmt: skip
    if repeats > 1:
        for invariant, values in shares.items():
            print(f"own share {'with' if invariant else 'without'} the invariant over {repeats} runs: median "
                  f"{median(values):.1%}, min {min(values):.1%}, max {max(values):.1%}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", default="4,16,64,256")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--techniques", default="hinter,metafair,caffe")
    parser.add_argument("--per-call", type=float, default=0.05, help="py: model's sleep per call (s)")
    parser.add_argument("--per-text", type=float, default=0.01, help="py: model's sleep per text (s)")
    parser.add_argument("--originals", type=int, default=8, help="originals of the own-share HInter run")
    parser.add_argument(
        "--chunk-mutants", type=int, default=None, help="HInter's --chunk-mutants (own share)"
    )
    parser.add_argument("--skip-own-share", action="store_true")
    parser.add_argument(
        "--own-repeats", type=int, default=1, help="own-share runs of each kind (prints the median)"
    )
    parser.add_argument("--skip-backend", action="store_true", help="skip the backend-alone part")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fairprobe-throughput-") as tmp:
        folder = Path(tmp)
        (folder / "planted.py").write_text(PLANTED)
        (folder / "shots.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SHOTS))
        ns = [int(x) for x in args.ns.split(",") if x]
        techniques = [t for t in args.techniques.split(",") if t]
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        if not args.skip_backend:
            backend_alone(folder, ns, args.latency)
        if techniques:
            throughput(folder, techniques, ns, args.latency)
        if not args.skip_own_share:
            own_share(
                folder, args.per_call, args.per_text, args.originals, args.chunk_mutants, args.own_repeats
            )
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
