"""The progress line ``seahaven eval`` shows on a terminal while trials run."""

from __future__ import annotations

import io
import time

from seahaven.cli.model_options import status_line
from seahaven.cli.support import Progress


def test_the_line_says_trials_passed_errored_tokens_and_time_left() -> None:
    assert status_line(0, 156, 0, 0, 0, 0, time.monotonic()) == "trials 0/156"
    started = time.monotonic() - 10.0  # ten seconds in, 20 trials of this run done
    line = status_line(40, 156, 30, 2, 123_456, 20, started)
    # 116 trials left at 20 in 10 s (the other 20 were in the file already): 58 s.
    assert line == "trials 40/156, 30 passed, 2 errored, 123,456 tokens, 58s left"
    longer = status_line(40, 1000, 30, 0, 0, 20, started)
    assert longer.endswith(", 8m00s left")
    done = status_line(156, 156, 150, 0, 0, 156, started)
    assert done.startswith("trials 156/156, 150 passed, ") and done.endswith("/s")
    assert "errored" not in done and "tokens" not in done


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_goes_to_a_terminal_and_never_to_a_pipe() -> None:
    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        progress = Progress(stream)
        progress.show(status_line(1, 2, 1, 0, 10, 1, time.monotonic()))
        progress.clear()
    assert "trials 1/2, 1 passed, 10 tokens" in terminal.getvalue()
    assert pipe.getvalue() == ""
