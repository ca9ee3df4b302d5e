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
