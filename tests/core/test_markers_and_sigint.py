"""Review follow-ups (issue 43): one definition of the block-field markers, marked fields computed once
per class, and one module that owns SIGINT. Each test pins the behaviour the change must keep."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from pydantic import Field, ValidationError

from fairprobe import interrupts
from fairprobe.judge.refusals import max_asymmetric_invalid_field
from fairprobe.models import stop
from fairprobe.technique import block, markers
from fairprobe.technique.block import MODEL_URI, BlockBase, marked_fields, verdict_only_fields


class _Block(BlockBase):
    model: str = Field(default="py:m:f", json_schema_extra=MODEL_URI)
    max_asymmetric_invalid_rate: float = max_asymmetric_invalid_field()


class _More(_Block):
    judge: str | None = Field(default=None, json_schema_extra=MODEL_URI)


def test_the_verdict_only_marker_has_one_definition():
    assert block.VERDICT_ONLY is markers.VERDICT_ONLY and block.MODEL_URI is markers.MODEL_URI
    field = _Block.model_fields["max_asymmetric_invalid_rate"]
    assert field.json_schema_extra is markers.VERDICT_ONLY  # refusals' field uses the same marker
    # ... so it is still left out of the resume check and of compare's same-inputs check
    assert {"max_asymmetric_invalid_rate", "thresholds", "allow_empty"} <= verdict_only_fields(_Block)
    assert "model" not in verdict_only_fields(_Block)


def test_marked_fields_are_computed_once_per_class_and_validation_is_unchanged():
    first = marked_fields(_Block, "model_uri")
    assert first == {"model"} and marked_fields(_Block, "model_uri") is first  # cached, not recomputed
    assert marked_fields(_More, "model_uri") == {"model", "judge"}  # a subclass has its own entry
    assert marked_fields(_Block, "model_uri") is first
    # a model URI is still checked in every marked field, and only there
    assert _More(model="embedded:smollm2", judge="py:a:b").judge == "py:a:b"
    with pytest.raises(ValidationError, match="unknown model URI scheme"):
        _More(judge="nope:x")
    with pytest.raises(ValidationError, match="unknown model URI scheme"):
        _Block(model="nope:x")
    assert _Block(name="x").name == "x"  # an unmarked string field is not read as a URI


def _sigint_self() -> None:
    os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_one_module_owns_sigint_and_the_stop_flag_is_only_a_flag():
    # the flag module installs nothing
    assert not hasattr(stop, "stop_on_sigint") and not hasattr(stop, "signal")
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # a run from Python: the handler is interrupts', for the run only; Ctrl-C raises the flag and
        # KeyboardInterrupt; the press is not recorded as a command-line user's
        stop.request_stop()
        with pytest.raises(KeyboardInterrupt):
            with interrupts.stop_on_sigint():
                assert not stop.stop_requested()  # a new run starts un-stopped
                assert signal.getsignal(signal.SIGINT) is interrupts._handler
                _sigint_self()
        assert stop.stop_requested() and not interrupts.user_pressed()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        stop.clear_stop()

        # the command line: install() first; a run inside keeps that handler; Ctrl-C is the user's
        interrupts.install()
        with pytest.raises(KeyboardInterrupt):
            with interrupts.stop_on_sigint():
                assert signal.getsignal(signal.SIGINT) is interrupts._handler
                _sigint_self()
        assert stop.stop_requested() and interrupts.user_pressed()
        assert signal.getsignal(signal.SIGINT) is interrupts._handler  # left as the command line set it
        assert interrupts.model_stop(KeyboardInterrupt(), "m") is None  # the user's, not the model's
    finally:
        interrupts._installed.clear()
        interrupts._pressed.clear()
        stop.clear_stop()
        signal.signal(signal.SIGINT, before)
