"""``gguf:PATH?server=1`` and ``embedded:smollm2?server=1``: the GGUF behind a llama.cpp server that
fairprobe starts, health-checks and stops itself (issue 43's optional speed path).

What happens:

1. ``python -m llama_cpp.server`` (llama-cpp-python's OpenAI-compatible server, the ``[server]``
   extra) starts on the GGUF file, on a free port of 127.0.0.1, in its own session (a Ctrl-C in the
   terminal reaches fairprobe, which stops the server itself). Its environment is cleaned of the
   variables the server would read as settings (``PORT``, ``HOST``, ``API_KEY``, ``N_CTX``, ...), so
   it runs with exactly the settings below. The context (``n_ctx``) and the threads (``n_threads``)
   default as for the in-process backend (:mod:`fairprobe.models.gguf_backend`).
2. ``GET /v1/models`` is polled until the server lists the model (it answers only once the model is
   loaded); a server that exits first is a one-line :class:`~fairprobe.errors.ModelError` with the
   end of its output, one that does not answer within ``startup_timeout`` seconds too. A port taken
   between choosing it and binding it is retried on another.
3. The model is asked through the OpenAI-compatible client (:class:`~fairprobe.models.openai_backend.OpenAIChat`):
   retries, timeouts, progress and token counts as for any server. Two requests are in flight (the
   server answers one at a time; the second is ready when the first ends).
4. The server is stopped (SIGTERM, then SIGKILL after 2 s) when the run ends (:meth:`ServedGGUFChat.close`,
   called by the run), when the model object is collected, and at interpreter exit, so also after
   Ctrl-C or an error; should fairprobe itself be killed, the server notices within half a second
   that its parent is gone and exits.

The fingerprint (backend ``llama.cpp-server``, the file's sha256, ``n_ctx``, the llama-cpp-python
version) is not the in-process one: the two evaluate prompts differently (the in-process backend in
two fixed parts, the server with its own prefix cache), and their answers are not guaranteed to be the
same, so each keeps its own cached answers.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import Any

from fairprobe.errors import ModelError
from fairprobe.models.base import Fingerprint
from fairprobe.models.hashing import file_sha256
from fairprobe.models.openai_backend import OpenAIChat

STARTUP_TIMEOUT = 180.0
"""Seconds the server may take to load the model and answer ``GET /v1/models``."""

_CHILD = """\
import os, sys, threading, time
parent = int(os.environ.pop("FAIRPROBE_PARENT_PID"))
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
from llama_cpp.server.settings import Settings
for name in list(os.environ):
    if name.lower() in Settings.model_fields or name in ("HOST", "PORT", "CONFIG_FILE"):
        del os.environ[name]
import runpy
sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""
"""The server's process: ``python -m llama_cpp.server ARGS`` run by :mod:`runpy`, after a watchdog
thread (exit when fairprobe is gone) and the clean environment (module docstring)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """One ``python -m llama_cpp.server`` process serving ``gguf`` as ``alias`` on 127.0.0.1."""

    def __init__(
        self, gguf: Path, alias: str, *, n_ctx: int, n_threads: int, startup_timeout: float = STARTUP_TIMEOUT
    ):
        self.gguf = gguf
        self.alias = alias
        self.args = [
            "--model", str(gguf), "--model_alias", alias, "--host", "127.0.0.1", "--n_ctx", str(n_ctx),
            "--n_threads", str(n_threads), "--n_threads_batch", str(n_threads),
        ]  # fmt: skip
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self._log: Any = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        """Start the server and wait until it lists the model; returns its ``/v1`` base URL."""
        for attempt in range(3):
            self.port = _free_port()
            self._log = tempfile.TemporaryFile()
            env = {**os.environ, "FAIRPROBE_PARENT_PID": str(os.getpid())}
            self.process = subprocess.Popen(
                [sys.executable, "-c", _CHILD, *self.args, "--port", str(self.port)],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # the terminal's Ctrl-C goes to fairprobe, which stops it
            )
            _RUNNING.add(self)
            try:
                ready = self._wait_ready()
            except BaseException:  # Ctrl-C or a timeout while it loads: never left running
                self.stop()
                raise
            if ready:
                return self.base_url
            output = self.output()
            self.stop()
            if "address already in use" in output.lower() and attempt < 2:
                continue  # the port was taken between choosing and binding it
            raise ModelError(
                f"the llama.cpp server for {self.gguf.name} exited while starting: {_last_line(output)}; "
                "check that llama-cpp-python[server] is installed (pip install 'llama-cpp-python[server]')"
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait_ready(self) -> bool:
        """Poll ``GET /v1/models`` until the model is listed (True) or the process exits (False)."""
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self.base_url}/models"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our own 127.0.0.1
                    ids = [m.get("id") for m in json.loads(response.read()).get("data", [])]
                if self.alias in ids:
                    return True
            except (urllib.error.URLError, OSError, ValueError, AttributeError):
                pass
            time.sleep(0.1)
        raise ModelError(
            f"the llama.cpp server for {self.gguf.name} did not answer GET /v1/models within "
            f"{self.startup_timeout:.0f} s: {_last_line(self.output())}; use the model without ?server=1"
        )

    def output(self) -> str:
        """What the server printed so far (the last 4 kB)."""
        if self._log is None:
            return ""
        try:
            self._log.flush()
            size = self._log.seek(0, os.SEEK_END)
            self._log.seek(max(0, size - 4096))
            return self._log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def stop(self) -> None:
        """Stop the server (SIGTERM, SIGKILL after 2 s) and wait for it; idempotent."""
        with self._lock:
            process, self.process = self.process, None
            _RUNNING.discard(self)
            if process is not None:
                try:
                    if process.poll() is None:
                        process.terminate()
                        try:  # uvicorn would wait for an answer in progress: 2 s, then SIGKILL
                            process.wait(timeout=2)
                        except subprocess.TimeoutExpired:
                            process.kill()
                            process.wait(timeout=5)
                except BaseException:  # a second Ctrl-C while it stops: kill it, then go on stopping
                    process.kill()
                    with contextlib.suppress(Exception):
                        process.wait(timeout=5)
                    raise
            if self._log is not None:
                with contextlib.suppress(OSError):
                    self._log.close()
                self._log = None


_RUNNING: weakref.WeakSet[LlamaServer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """At interpreter exit (after Ctrl-C, an error or a normal end): no server is left running."""
    for server in list(_RUNNING):
        with contextlib.suppress(Exception):
            server.stop()


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


class ServedGGUFChat(OpenAIChat):
    """A GGUF chat model answered by a llama.cpp server that this object starts and stops.

    Args:
        path: the GGUF file.
        n_ctx: context length in tokens; default as in-process: the model's trained context, at most
            :data:`~fairprobe.models.gguf_backend.AUTO_CTX_CAP`.
        n_threads: CPU threads of the server; default: the cores not already busy, at least 1.
        timeout, retries, concurrency: as for any OpenAI-compatible server (concurrency 2 by default).
        startup_timeout: seconds the server may take to load the model.
        model_id: name shown in the fingerprint (default: ``gguf:<file name>``).
    """

    closes_with_run = True
    """The run stops the server when it ends (:meth:`fairprobe.technique.context.RunContext.close_models`)."""

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        timeout: float = 300.0,
        retries: int = 2,
        concurrency: int = 2,
        startup_timeout: float = STARTUP_TIMEOUT,
        model_id: str | None = None,
    ):
        gguf = Path(path).expanduser()
        if not gguf.is_file():
            raise ModelError(f"GGUF file {gguf} does not exist; give the path of a .gguf model file")
        try:
            import llama_cpp
            import llama_cpp.server  # noqa: F401 - the [server] extra: fastapi, uvicorn, ...
        except ImportError as exc:
            raise ModelError(
                f"?server=1 needs llama-cpp-python's server ({exc.name} is missing): "
                "pip install 'llama-cpp-python[server]', or drop ?server=1 to run the model in-process"
            ) from None
        if n_threads is None:
            from fairprobe.run.threads import free_cores

            n_threads = free_cores()
        n_ctx = int(n_ctx) if n_ctx is not None else _default_ctx(gguf)
        self.n_ctx = n_ctx
        self.model_id_shown = model_id or f"gguf:{gguf.name}"
        self.server = LlamaServer(gguf, "fairprobe-gguf", n_ctx=n_ctx, n_threads=int(n_threads),
                                  startup_timeout=startup_timeout)  # fmt: skip
        base_url = self.server.start()
        try:
            super().__init__(
                base_url,
                self.server.alias,
                backend="llama.cpp-server",
                concurrency=concurrency,
                timeout=timeout,
                retries=retries,
            )
        except BaseException:
            self.server.stop()
            raise
        self._closed = False
        self._finalizer = weakref.finalize(self, self.server.stop)
        self.fingerprint = Fingerprint(
            backend="llama.cpp-server",
            model_id=self.model_id_shown,
            weights=file_sha256(gguf),
            params={"n_ctx": n_ctx, "llama_cpp_python": str(getattr(llama_cpp, "__version__", ""))},
        )
        print(
            f"{self.model_id_shown}: llama.cpp server started on 127.0.0.1:{self.server.port} "
            f"(pid {self.server.process.pid if self.server.process else '?'}); it stops when the run ends",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        """Close the connections and stop the server (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            super().close()
        finally:
            self.server.stop()

    def __repr__(self) -> str:
        return f"ServedGGUFChat({str(self.server.gguf)!r}, port={self.server.port})"


def _default_ctx(gguf: Path) -> int:
    """The in-process default: the model's trained context (read with the vocabulary only, no
    weights), at most :data:`~fairprobe.models.gguf_backend.AUTO_CTX_CAP`; the cap when it cannot be
    read (llama.cpp then runs the model past its trained length, with a warning in its output)."""
    import llama_cpp

    from fairprobe.models.gguf_backend import AUTO_CTX_CAP

    try:
        from llama_cpp._internals import LlamaModel

        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        model = LlamaModel(path_model=str(gguf), params=params, verbose=False)
        try:
            trained = int(model.n_ctx_train())
        finally:
            model.close()
    except Exception:  # noqa: BLE001 - llama-cpp-python's internals moved: the cap
        return AUTO_CTX_CAP
    return min(trained, AUTO_CTX_CAP) if trained > 0 else AUTO_CTX_CAP
