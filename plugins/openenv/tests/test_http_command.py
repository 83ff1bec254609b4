"""``seahaven.http.main``: a world's ``serve_http.py`` run as a user runs it, in a real process.

The script serves the shelf world of ``shelf.py`` with its fixture frozen in the test's own
directory; each test reads the address the script prints, talks to it over loopback with a
real HTTP client, and stops it with SIGINT.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shelf import freeze_stocked, make_shelf

HERE = Path(__file__).resolve().parent
ADDRESS = re.compile(r"Serving shelf at (http://127\.0\.0\.1:\d+)/worlds/\{id\}")
RESET_VARIABLES = (
    "SEAHAVEN_FIXTURE",
    "SEAHAVEN_SEED",
    "SEAHAVEN_NOW",
    "SEAHAVEN_CLOCK_MODE",
    "SEAHAVEN_RESET_OPTIONS",
)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """A serve_http.py for the shelf world, with the fixture ``stocked`` beside it."""
    freeze_stocked(make_shelf(tmp_path / "fixtures"))
    path = tmp_path / "serve_http.py"
    path.write_text(
        textwrap.dedent(
            f"""\
            import sys
            from pathlib import Path

            sys.path.insert(0, {str(HERE)!r})

            import seahaven.http
            from shelf import handle, make_shelf

            world = make_shelf(Path(__file__).parent / "fixtures")

            if __name__ == "__main__":
                seahaven.http.main(world, handle)
            """
        ),
        encoding="utf-8",
    )
    return path


def environment(tmp_path: Path, **variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RESET_VARIABLES}
    return {**env, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1", **variables}


def run(script: Path, *argv: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """Run the script to its end (it fails before serving)."""
    return subprocess.run(
        [sys.executable, str(script), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(script.parent, **variables),
        check=False,
    )


@contextmanager
def serving(
    script: Path, *argv: str, **variables: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    log = script.parent / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, str(script), "--port", "0", *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            env=environment(script.parent, **variables),
        )
    try:
        deadline = time.monotonic() + 60
        while not (found := ADDRESS.search(log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield found.group(1), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_the_script_serves_from_the_fixture_and_stops_cleanly_on_ctrl_c(script: Path) -> None:
    with serving(script, "--fixture", "stocked", "--max-instances", "1") as (base, process):
        with httpx.Client(timeout=30) as client:
            books = client.get(f"{base}/worlds/test1/v1/books").json()
            assert sorted(book["title"] for book in books) == ["Middlemarch", "Moby-Dick"]
            over = client.get(f"{base}/worlds/test2/v1/books")
            assert over.status_code == 503
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    # Stopping destroyed the instance: nothing is left in the temporary directory.
    assert list(script.parent.glob("seahaven-*/shelf/*/*")) == []


def test_the_reset_options_come_from_the_environment_too(script: Path) -> None:
    variables = {
        "SEAHAVEN_SEED": "7",
        "SEAHAVEN_CLOCK_MODE": "tick",
        "SEAHAVEN_NOW": "2030-01-01T00:00:00Z",
    }
    with serving(script, **variables) as (base, _), httpx.Client(timeout=30) as client:
        first = client.get(f"{base}/worlds/a/v1/test/echo").json()
        second = client.get(f"{base}/worlds/b/v1/test/echo").json()
    # The same seed in both instances, a tick clock from the given instant.
    assert first["id"] == second["id"]
    assert (first["clock_mode"], first["now"]) == ("tick", "2030-01-01T00:00:01.000Z")


def test_reset_options_as_one_json_object(script: Path) -> None:
    options = '{"fixture": "stocked", "seed": 3, "clock_mode": "fixed"}'
    with serving(script, "--reset-options", options) as (base, _), httpx.Client(timeout=30) as c:
        assert len(c.get(f"{base}/worlds/a/v1/books").json()) == 2
        assert c.get(f"{base}/worlds/a/v1/test/echo").json()["clock_mode"] == "fixed"


@pytest.mark.parametrize(
    ("argv", "variables", "says"),
    [
        (["--reset-options", "{}", "--seed", "1"], {}, "not taken together with --seed"),
        (["--reset-options", "{}"], {"SEAHAVEN_FIXTURE": "stocked"}, "--fixture"),
        (["--reset-options", "[1]"], {}, "must be a JSON object"),
        (["--reset-options", "{nope"], {}, "not JSON"),
        (["--reset-options", '{"control_tools": true}'], {}, "never have them"),
        (["--clock-mode", "sideways"], {}, "not a clock mode"),
        (["--port", "70000"], {}, "--port"),
        (["--seed", "seven"], {}, "--seed"),
    ],
)
def test_a_malformed_option_is_a_usage_error(
    script: Path, argv: list[str], variables: dict[str, str], says: str
) -> None:
    result = run(script, *argv, **variables)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stderr


def test_options_the_world_refuses_are_one_line_and_exit_1(script: Path) -> None:
    result = run(script, "--fixture", "no_such_fixture", "--port", "0")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("error: the server's reset options are refused")
    assert "no_such_fixture" in line
