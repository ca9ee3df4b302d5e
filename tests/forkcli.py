"""The `fairprobe` executable for tests, without paying its start-up in every call: a fork server.

Each call of the ``cli`` fixture used to start the console script as a new process, and every one
paid Python's start-up, the imports of the command line (typer, pydantic, pyarrow, pandas, the
technique packages) and their teardown at exit: ~1.35 s of CPU for a 10-row ``fairprobe run`` whose
own work is ~0.16 s. Through this helper the same call costs ~0.27 s.
:class:`ForkCLI` starts two helper processes per test process (per xdist worker; calls alternate
between them, see :attr:`ForkCLI.HELPERS`) that import all of that once and then, for each call, **forks** a child that runs the console script's entry point
(``sys.exit(fairprobe.cli.main())``, as ``.venv/bin/fairprobe`` does) with the call's arguments,
working folder, environment and ``PYTHONPATH``, its stdin on ``/dev/null`` and stdout/stderr in
files. The child is a separate process like before: its exit status (or signal), its output, its
global state, its signal handlers and the modules it imports (a test's ``py:`` model) are its own
and gone when it exits; the interpreter's shutdown (atexit handlers, non-daemon threads) runs as in
any process, less the teardown of every module (:func:`_exit`). What is not exercised is the import
of the command line and that teardown: the tests of how a process starts and ends (Ctrl-C, SIGKILL,
signals) start the executable with ``subprocess``.

A child runs the real executable instead (``os.execve``, the same as ``subprocess.run``) when the
helper cannot stand in faithfully:

- the call's environment differs from the helper's in a variable a library may read at import time
  (anything but ``FAIRPROBE_*``, ``PYTEST_*`` and ``PYTHONPATH``, which fairprobe reads when used);
- a folder the call puts on ``PYTHONPATH`` holds a module the helper has already imported (a test
  that shadows a package to see how the command fails);
- the helper's imports printed something to stderr (a warning that a real call would print): then
  no call forks;
- ``FAIRPROBE_TEST_NO_FORK=1`` (set it to run every call as a real process, e.g. to compare);
  ``FORKCLI_LOG=FILE`` appends where each call ran, and why it did not fork.

The helper is started with the test process's environment and ``sys.executable``, so the package
(the worktree's ``src`` on ``PYTHONPATH``, or the installed copy) is the one a real call would load.
The protocol is one JSON line per call on the helper's stdin and one JSON line back.
"""

from __future__ import annotations

import json
import locale
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

EXE = Path(sys.executable).parent / "fairprobe"
"""The console script (the child's ``sys.argv[0]``, and what a fallback ``execve`` runs)."""

# Read by fairprobe (or pytest) when used, never at import: a call may change them and still fork.
RUNTIME_ENV_PREFIXES = ("FAIRPROBE_", "PYTEST_")
RUNTIME_ENV = {
    "PYTHONPATH",
    "PWD",
    "OLDPWD",
    "COLUMNS",
    "LINES",
    # set in the test process by libraries a test imported, and so in every child it starts:
    "KMP_DUPLICATE_LIB_OK",  # setdefault by threadpoolctl and scikit-learn: only Intel's OpenMP
    "KMP_INIT_AT_FORK",  # reads these (setdefault by scikit-learn, joblib); torch here uses GNU's
    "TORCHINDUCTOR_CACHE_DIR",  # torch's compiler (read when it compiles, which no command does)
}
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
"""Signals whose disposition a child takes from the test process at the time of the call, except
SIGINT: every call gets Python's Ctrl-C handling, as `fairprobe` typed in a terminal has, even when
the test process ignores SIGINT (a background ``make test &``; ``childenv.default_sigint`` does the
same for the tests that interrupt a child), so the command's own Ctrl-C handling is what is tested."""
# Imported by the helper before it serves: what nearly every command imports. Libraries that read
# settings from the environment at import time (huggingface_hub reads HF_HUB_OFFLINE, which
# fairprobe sets just before loading an embedder) are left for the child to import.
PRELOAD = (
    "fairprobe.cli.commands",
    "fairprobe.technique.registry",
    "fairprobe.run.runner",
    "fairprobe.report",
    "numpy",
    "pyarrow",
    "pyarrow.parquet",
    "spacy",
    "torch",
)


class ForkCLI:
    """Client: runs ``fairprobe ARGS`` through the helpers (:attr:`HELPERS` per instance, started on
    first use; one instance per test process)."""

    HELPERS = 2
    """Calls alternate between two helpers: each has its own string-hash seed (as every process has),
    so two calls of one test hash strings differently, and a result that depends on a set's order
    is caught as it would be between two real processes."""

    def __init__(self) -> None:
        self._procs: list[subprocess.Popen[bytes] | None] = [None] * self.HELPERS
        self._lock = threading.Lock()
        self._tmp = tempfile.TemporaryDirectory(prefix="forkcli-")
        self._n = 0
        self.forked = 0
        self.executed = 0

    def _start(self, i: int) -> subprocess.Popen[bytes]:
        proc = self._procs[i]
        if proc is None or proc.poll() is not None:
            proc = self._procs[i] = subprocess.Popen(
                [sys.executable, __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=dict(os.environ),
            )
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if json.loads(line or b"{}").get("ready") is not True:
                raise RuntimeError(f"the fairprobe fork helper did not start: {line[-500:]!r}")
        return proc

    def run(
        self, args: list[str], *, cwd: Path | str, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """As ``subprocess.run([EXE, *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout)``; raises :class:`subprocess.TimeoutExpired` the same way. A call made
        while another is running (a test's threads) is that ``subprocess.run``, so both run at once."""
        if not os.path.isdir(cwd):  # what subprocess raises, before any process starts
            raise FileNotFoundError(2, "No such file or directory", str(cwd))
        if not self._lock.acquire(blocking=False):
            self.executed += 1
            return subprocess.run(
                [str(EXE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
            )
        try:
            self._n += 1
            out = Path(self._tmp.name) / f"{self._n}.out"
            err = Path(self._tmp.name) / f"{self._n}.err"
            request = {
                "args": [str(a) for a in args],
                "cwd": str(cwd),
                "env": {str(k): str(v) for k, v in env.items()},
                "timeout": timeout,
                "stdout": str(out),
                "stderr": str(err),
                "exec": os.environ.get("FAIRPROBE_TEST_NO_FORK") == "1",
                # a child inherits the signals its parent ignores now (SIGINT aside: see SIGNALS)
                "ignored": [
                    name for name in SIGNALS[1:] if signal.getsignal(getattr(signal, name)) is signal.SIG_IGN
                ],
            }
            proc = self._start(self._n % self.HELPERS)
            proc.stdin.write(json.dumps(request).encode() + b"\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError("the fairprobe fork helper exited")
            reply = json.loads(line)
            if reply["forked"]:
                self.forked += 1
            else:
                self.executed += 1
            if os.environ.get("FORKCLI_LOG"):  # where each call ran, and why it did not fork
                with open(os.environ["FORKCLI_LOG"], "a", encoding="utf-8") as log:
                    how = "forked" if reply["forked"] else f"executed ({reply['why']})"
                    log.write(f"{how}\t{' '.join(request['args'][:2])}\n")
            stdout, stderr = _text(out), _text(err)
            out.unlink(missing_ok=True)
            err.unlink(missing_ok=True)
        finally:
            self._lock.release()
        argv = [str(EXE), *request["args"]]
        if reply["timed_out"]:
            raise subprocess.TimeoutExpired(argv, timeout, output=stdout, stderr=stderr)
        return subprocess.CompletedProcess(argv, reply["returncode"], stdout, stderr)

    def close(self) -> None:
        for i, proc in enumerate(self._procs):
            if proc is None:
                continue
            proc.kill()  # it has nothing to save: no need to spend its interpreter's shutdown
            proc.wait()
            proc.stdin.close()  # type: ignore[union-attr]
            proc.stdout.close()  # type: ignore[union-attr]
            self._procs[i] = None
        self._tmp.cleanup()


def _text(path: Path) -> str:
    """What ``subprocess.run(..., text=True)`` makes of the bytes: the locale's encoding, universal
    newlines."""
    data = path.read_bytes() if path.exists() else b""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------------------------- the helper


def _serve() -> None:  # pragma: no cover - runs in the helper process
    import importlib
    import select
    import signal

    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # children read nothing; a stray print while importing goes nowhere
    os.dup2(devnull, 1)
    os.close(devnull)
    started_env = dict(os.environ)
    started_pp = _pythonpath(started_env.get("PYTHONPATH", ""))
    # sys.path as a console script in venv/bin would have it, less PYTHONPATH (set per call)
    own = os.path.dirname(os.path.abspath(__file__))
    base = [p for p in sys.path[1:] if p not in started_pp and p != own]
    noise_file = tempfile.TemporaryFile()
    stderr = os.dup(2)
    os.dup2(noise_file.fileno(), 2)  # what the imports print: a real call would print it too
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from importlib.metadata import entry_points

    for ep in entry_points(group="fairprobe.techniques"):  # imported, not registered: the child does
        try:  # that (a plugin that fails to load warns in the child's stderr, as in any process)
            ep.load()
        except Exception:  # noqa: BLE001
            pass
    sys.stderr.flush()
    os.dup2(stderr, 2)
    os.close(stderr)
    noise_file.seek(0)
    noise = noise_file.read().decode(errors="replace")
    noise_file.close()
    if noise:  # every call runs the executable, which prints it itself
        print(f"forkcli: the imports printed to stderr, so no call forks:\n{noise}", file=sys.stderr)
    preloaded = {m.split(".")[0] for m in sys.modules}
    replies.write(b'{"ready": true}\n')
    while True:
        line = _readline(requests)
        if not line:
            return
        req = json.loads(line)
        reason = "the imports printed to stderr" if noise else None
        reason = reason or _exec_reason(req, started_env, set(base) | set(started_pp), preloaded)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            _child(req, base, reason is not None)  # never returns
        pidfd = os.pidfd_open(pid)
        ready, _, _ = select.select([pidfd], [], [], req["timeout"])
        timed_out = not ready
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        reply = {
            "returncode": os.waitstatus_to_exitcode(status),
            "timed_out": timed_out,
            "forked": reason is None,
            "why": reason,
        }
        replies.write(json.dumps(reply).encode() + b"\n")


def _readline(stream) -> bytes:  # pragma: no cover - helper process
    chunks = []
    while True:
        c = stream.read(1)
        if not c or c == b"\n":
            return b"".join(chunks)
        chunks.append(c)


def _pythonpath(value: str) -> list[str]:
    return [os.path.abspath(p) for p in value.split(os.pathsep) if p]


def _exec_reason(req: dict, started_env: dict, known: set[str], preloaded: set[str]) -> str | None:
    """Why this call must run the real executable (None: it can fork)."""
    if req["exec"]:
        return "FAIRPROBE_TEST_NO_FORK=1"
    env = req["env"]
    for key in set(env) | set(started_env):
        if env.get(key) == started_env.get(key) or key in RUNTIME_ENV:
            continue
        if not key.startswith(RUNTIME_ENV_PREFIXES):
            return f"environment variable {key} differs"
    for folder in _pythonpath(env.get("PYTHONPATH", "")):
        if folder in known or not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            name = entry.split(".")[0]
            package = entry == name and os.path.isfile(os.path.join(folder, entry, "__init__.py"))
            if name in preloaded and (package or entry.endswith((".py", ".so"))):
                return f"{os.path.join(folder, entry)} shadows the imported module {name}"
    return None


def _child(req: dict, base: list[str], exec_real: bool) -> None:  # pragma: no cover - forked child
    """Become ``fairprobe ARGS`` in the call's folder, environment and output files."""
    import importlib
    import types

    out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    os.chdir(req["cwd"])
    for name in SIGNALS:  # what the caller ignores is ignored; else what a new Python process has
        number = getattr(signal, name)
        if name in req["ignored"]:
            signal.signal(number, signal.SIG_IGN)
        else:
            signal.signal(number, signal.default_int_handler if name == "SIGINT" else signal.SIG_DFL)
    argv = [str(EXE), *req["args"]]
    if exec_real:
        os.execve(argv[0], argv, req["env"])
    os.environ.clear()
    os.environ.update(req["env"])
    path = [str(EXE.parent), *_pythonpath(req["env"].get("PYTHONPATH", "")), *base]
    sys.path[:] = list(dict.fromkeys(path))
    importlib.invalidate_caches()
    sys.argv = argv
    sys.orig_argv = [sys.executable, *argv]
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # a fresh process seeds numpy's global generator from the OS (random: Python)
        numpy.random.seed()
    main_module = types.ModuleType("__main__")  # the console script's: spawn re-imports it by path
    main_module.__file__ = str(EXE)
    sys.modules["__main__"] = main_module
    _exit(_run_main())


def _run_main() -> int:  # pragma: no cover - forked child
    """``sys.exit(main())`` as the console script runs it, and what the interpreter makes of how it
    ends: the exit status of a ``SystemExit``, a traceback and 1 for an uncaught exception; an
    uncaught Ctrl-C ends the process by SIGINT, as Python does."""
    from fairprobe.cli import main

    try:
        code = main()  # type: ignore[func-returns-value]
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        import signal
        import traceback

        traceback.print_exc()
        _exit(None, before=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        os.kill(os.getpid(), signal.SIGINT)
        raise
    except BaseException:  # noqa: BLE001 - what the interpreter prints for an uncaught exception
        sys.excepthook(*sys.exc_info())
        return 1
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message")
    return 1


def _exit(code: int | None, before=None) -> None:  # pragma: no cover - forked child
    """End the child as the interpreter ends a process (wait for its non-daemon threads, run the
    atexit handlers, flush stdout and stderr), less the teardown of every module, which in a process
    that has imported torch, spaCy and pyarrow is ~0.75 s of CPU (it touches every object, and after a
    fork every page it touches is copied): 0.2 s a call instead of 1.35 s. ``code`` None: return
    after the handlers (the caller ends the process another way)."""
    import atexit
    import threading

    try:
        threading._shutdown()  # type: ignore[attr-defined]
    except BaseException:  # noqa: BLE001
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    if before is not None:
        before()
    if code is not None:
        os._exit(code & 0xFF)  # what the OS keeps of sys.exit(256) or sys.exit(-1)


if __name__ == "__main__":
    _serve()
