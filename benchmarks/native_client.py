"""The load generator in C (``wsload.c``), driven by the same session scripts as the Python clients.

A script (``lean_client.Script``) yields frames and is sent each parsed answer. For
``wsload`` the frames must be known before the run, so a script is first played
against stand-in answers whose ``id`` is a marker, ``@@reply<N>.id@@``, that
``wsload`` replaces with the real ``id`` of answer N when it sends the frame.
After the run every session's script is played again against the answers the
server really gave: each frame it yields must be the frame ``wsload`` sent, and
its checks (its own calls, its own rows) must pass, or the session is a problem.

``wsload`` is compiled once per source version with the machine's C compiler
(``$CC``, else ``cc``) into a private directory under the temp directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lean_client import Script

SOURCE = Path(__file__).with_name("wsload.c")


def find_compiler() -> str | None:
    """The C compiler to build ``wsload`` with: ``$CC``, else ``cc`` or ``gcc`` on the path."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def build() -> Path:
    """The compiled ``wsload``, built now if this version of its source has not been."""
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"seahaven-bench-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    binary = folder / f"wsload-{digest}"
    if binary.exists():
        return binary
    compiler = find_compiler()
    if compiler is None:
        raise RuntimeError(
            "the native load generator needs a C compiler (cc or gcc, or $CC); install one, "
            "or choose --client protocol"
        )
    # Another process may build the same version at once: each writes its own file first.
    partial = binary.with_name(f"{binary.name}.{os.getpid()}.partial")
    subprocess.run(
        [compiler, "-O2", "-Wall", "-o", str(partial), str(SOURCE)],
        check=True,
        capture_output=True,
    )
    partial.replace(binary)
    return binary


def _stand_in(frame: dict[str, Any], index: int) -> dict[str, Any]:
    """An answer to ``frame`` whose ``id`` is the marker for answer ``index``."""
    if frame.get("type") == "state":
        return {"type": "state", "data": {"episode_id": None, "call_count": -1, "state": {}}}
    marker = f"@@reply{index}.id@@"
    return {
        "type": "observation",
        "data": {"observation": {"result": {"id": marker}, "error": None}},
    }


def plan_of(script: Script) -> list[str]:
    """The frames a script sends, as text, with markers where it uses an earlier answer's id."""
    frames: list[str] = []
    try:
        frame = next(script)
        while True:
            frames.append(json.dumps(frame))
            frame = script.send(_stand_in(frame, len(frames) - 1))
    except (StopIteration, KeyError, TypeError):
        # The script has sent its frames; its checks of stand-in answers mean nothing.
        return frames


@dataclass
class NativeRun:
    """What ``wsload`` measured: per frame, and for the whole run."""

    latencies: list[float]
    kinds: list[str]
    problems: list[str]
    seconds: float
    cpu_seconds: float


def _read_output(path: Path) -> dict[int, list[tuple[float, bytes, bytes]]]:
    sessions: dict[int, list[tuple[float, bytes, bytes]]] = {}
    with path.open("rb") as output:
        while header := output.readline():
            session, _, seconds, sent_length, answer_length = header.split()
            sent = output.read(int(sent_length))
            output.read(1)
            answer = output.read(int(answer_length))
            output.read(1)
            sessions.setdefault(int(session), []).append((float(seconds), sent, answer))
    return sessions


def run(url: str, scripts: Callable[[], list[Script]], timeout: float = 300) -> NativeRun:
    """Play one script per session at once against ``url`` with ``wsload``; check every answer.

    ``scripts`` makes the sessions' scripts; it is called twice, once to plan and
    once to check, since a script is played only once.
    """
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    planned = [plan_of(script) for script in scripts()]
    lines = [f"{parts.hostname or '127.0.0.1'} {parts.port or 80} {path or '/'} {len(planned)}"]
    for frames in planned:
        lines.append(str(len(frames)))
        lines.extend(frames)
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "answers"
        finished = subprocess.run(
            [str(build()), str(output)],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            timeout=timeout + 30,
            check=False,
        )
        if finished.returncode != 0:
            raise RuntimeError(f"wsload failed ({finished.returncode}): {finished.stderr[-2000:]}")
        wall, user, system, _failed = finished.stdout.split()
        recorded = _read_output(output)
    latencies, kinds, problems = check(scripts(), recorded)
    if finished.stderr.strip():
        problems.append(finished.stderr.strip().splitlines()[0])
    return NativeRun(latencies, kinds, problems, float(wall), float(user) + float(system))


def check(
    scripts: list[Script], recorded: dict[int, list[tuple[float, bytes, bytes]]]
) -> tuple[list[float], list[str], list[str]]:
    """Play each session's script against the answers ``wsload`` recorded for it.

    Answers the round trips and kinds of the frames that were the script's, and
    every problem: a frame sent that is not the one the script sends, a session
    that ended early, and whatever the script's own checks found.
    """
    latencies: list[float] = []
    kinds: list[str] = []
    problems: list[str] = []
    for index, script in enumerate(scripts):
        frames = recorded.get(index, [])
        try:
            wanted = next(script)
            for seconds, sent, answer in frames:
                if json.loads(sent) != wanted:
                    problems.append(f"session {index}: wsload sent {sent!r}, not {wanted}")
                    break
                latencies.append(seconds)
                kinds.append(wanted["type"])
                wanted = script.send(json.loads(answer))
            else:
                problems.append(f"session {index}: it ended after {len(frames)} frames")
        except StopIteration as ended:
            problems.extend(f"session {index}: {problem}" for problem in ended.value)
    return latencies, kinds, problems
