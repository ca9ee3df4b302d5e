import io

from fairprobe.run.progress import ProgressReporter


def test_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    with ProgressReporter("work", 10, stream=stream, interval=0.0) as bar:
        for _ in range(10):
            bar.advance()
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("work: 10/10 (100%)") and "/s" in lines[-1]
    assert len(lines) >= 10  # interval 0: a line per advance, plus the final one
    assert "\x1b[" not in stream.getvalue()  # no terminal control codes in logs


def test_bar_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    with ProgressReporter("work", 5, stream=stream) as bar:
        bar.advance(5)
    text = stream.getvalue()
    assert "5/5" in text and "work" in text


def test_a_log_never_goes_silent_while_nothing_advances():
    """Off a terminal, a heartbeat line comes while the first answers are still awaited, and stops
    with the reporter."""
    import io
    import time

    from fairprobe.run.progress import ProgressReporter

    stream = io.StringIO()
    with ProgressReporter("tests", 70, stream=stream, interval=0.1, heartbeat=0.2):
        time.sleep(0.75)
    lines = stream.getvalue().splitlines()
    beats = [line for line in lines if line.endswith("elapsed")]
    assert len(beats) >= 2 and beats[0].startswith("tests: 0/70 (0%)"), lines
    assert lines[-1] == "tests: 0/70 (0%) 0.0/s"  # the closing line, then nothing more
    time.sleep(0.3)
    assert stream.getvalue().splitlines() == lines


def test_an_llm_run_says_something_within_seconds_and_counts_answers_and_tokens(monkeypatch):
    """Issue 43: "0/10 (0%) 0.0/s" for 9 minutes. The first line comes FIRST_LINE_S after the start
    (not one heartbeat), and while chat models answer the line counts their answers and tokens/s:
    an original and its mutants are tens of requests, so the unit count alone stands still."""
    import time

    from fairprobe import progress
    from fairprobe.models import meter

    monkeypatch.setattr(progress, "FIRST_LINE_S", 0.3)
    stream = io.StringIO()
    with ProgressReporter("originals", 3, stream=stream, interval=60, heartbeat=15) as bar:
        time.sleep(0.8)
        first = stream.getvalue().splitlines()
        for _ in range(2):
            meter.record(prompt_tokens=100, completion_tokens=3)
        line = bar.status()
    assert first and first[0].startswith("originals: 0/3 (0%)"), first  # well before the 15 s heartbeat
    assert ", 2 LLM answers, " in line and line.endswith(" tok/s"), line
    tokens_per_s = float(line.rsplit(", ", 1)[1].split()[0])
    assert 100 < tokens_per_s < 206 / 0.8  # 206 tokens over the reporter's ~0.8 s (and no more)
