"""Assertions shared by the reliability tests."""

from __future__ import annotations


def error_lines(stderr: str) -> list[str]:
    """The red error lines the CLI printed (``error: ...``)."""
    return [line for line in stderr.splitlines() if line.startswith(("error:", "internal error:"))]


def assert_one_red_line(result, *needles: str) -> str:
    """Exit 2, no traceback, exactly one error line, containing every needle."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
