"""One exception hierarchy. The CLI turns a :class:`FairprobeError` into one red line and exit 2
(3 for :class:`InternalError`; any other exception is a bug: its traceback goes to a log file, one
line to the screen, exit 3).

Every message says what is wrong *and* what to do about it. Anything that is not a
``FairprobeError`` is a bug and keeps its traceback.
"""

from __future__ import annotations


class FairprobeError(Exception):
    """Base class of every expected, user-facing error."""

    exit_code = 2


class InternalError(FairprobeError):
    """A bug caught at the edge of a run: its traceback is saved to ``error.log`` (exit 3)."""

    exit_code = 3


class SpecError(FairprobeError):
    """A spec file (or a block of one) is malformed or names something unknown."""


class DataError(FairprobeError):
    """A dataset, lexicon or other input file is missing, empty or malformed."""


class ModelError(FairprobeError):
    """A model cannot be loaded or called (bad URI, missing file, unreachable server, ...)."""


class ModelOutputError(ModelError):
    """A model answered, but its answer cannot be used (malformed JSON body, wrong count, ...)."""


class ModelCodeError(ModelError):
    """An in-process model's own code failed: it raised, called ``sys.exit`` or raised
    ``KeyboardInterrupt`` itself. The run is ``incomplete`` and its reports say why, even when it
    failed at the first call (a CI job must read "incomplete", never find no report)."""


class ContextLengthError(ModelError):
    """One request's prompt is longer than the model's context window; the model can still answer others."""


class RunStateError(FairprobeError):
    """A run directory conflicts with the requested run (different spec without --overwrite)."""


class UsageError(FairprobeError):
    """A command-line option or combination of options is invalid."""


class WorkerLostError(FairprobeError):
    """A distributed worker (or its node) died before its task finished; the work can be redone."""


class RunInterrupted(FairprobeError):
    """The user stopped a run (Ctrl-C): what is done is kept, the run is incomplete, a re-run resumes."""

    exit_code = 130
