"""Episode files and result files: JSON lines, read with line numbers in every error.

An episode file holds one episode per line::

    {"episode_id": "e1", "fixture": "acme", "seed": 7, "now": "2026-06-01T09:00:00.000Z",
     "clock_mode": "tick", "setup_sql": null, "startup": {"principal": "..."},
     "calls": [{"tool": "whoami", "arguments": {}}]}

Every key but ``calls`` may be left out; ``calls`` is the list
``seahaven episodes run --calls`` reads. An episode without an id is
``line-<n>``, after its line number. A result file holds one
``EpisodeResult`` per line, appended as each episode finishes; ``read_done``
reads back which episodes it already holds, so an interrupted run can resume.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from seahaven.episodes.model import Episode
from seahaven.errors import WorldBug

__all__ = [
    "LINE_KEYS",
    "DoneSoFar",
    "EpisodeFileError",
    "parse_episode_line",
    "read_done",
    "read_episodes",
]

LINE_KEYS = (
    "episode_id",
    "fixture",
    "seed",
    "now",
    "clock_mode",
    "setup_sql",
    "startup",
    "calls",
    "storage",
)
"""The keys an episode line may have; ``calls`` is the one it must have."""


class EpisodeFileError(WorldBug):
    """A line of an episode or result file is not what it must be; names the file and line."""

    def __init__(self, path: Path | str, line: int, message: str) -> None:
        super().__init__(f"{path} line {line}: {message}")
        self.path = str(path)
        self.line = line


def _validation_message(error: ValidationError) -> str:
    problems = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item["loc"])
        problems.append(f"{where}: {item['msg']}" if where else str(item["msg"]))
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def parse_episode_line(text: str, *, world: str, line: int, path: Path | str) -> Episode:
    """One episode line as an ``Episode`` of ``world``, or an ``EpisodeFileError``."""
    try:
        item: Any = json.loads(text)
    except json.JSONDecodeError as error:
        raise EpisodeFileError(
            path, line, f"is not JSON ({error.msg} at column {error.colno})"
        ) from None
    if not isinstance(item, dict):
        raise EpisodeFileError(path, line, f"is a JSON {type(item).__name__}, not an object")
    unknown = sorted(set(item) - set(LINE_KEYS))
    if unknown:
        raise EpisodeFileError(
            path,
            line,
            f"has the key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; an episode line "
            f"has {', '.join(LINE_KEYS)}",
        )
    if "calls" not in item:
        raise EpisodeFileError(
            path, line, 'has no "calls"; give the list of {"tool", "arguments"} to make'
        )
    if item.get("startup") is None:
        item.pop("startup", None)
    item.setdefault("episode_id", f"line-{line}")
    try:
        return Episode.model_validate({**item, "world": world})
    except ValidationError as error:
        raise EpisodeFileError(path, line, _validation_message(error)) from None


def read_episodes(path: Path | str, *, world: str) -> list[tuple[int, Episode]]:
    """Every episode of an episode file, with its line number; blank lines are skipped.

    Raises ``EpisodeFileError`` for the first bad line, and for an episode id
    given twice (naming both lines); ``OSError`` if the file cannot be read.
    """
    found: list[tuple[int, Episode]] = []
    first_line: dict[str, int] = {}
    with Path(path).open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            episode = parse_episode_line(text, world=world, line=number, path=path)
            earlier = first_line.setdefault(episode.episode_id, number)
            if earlier != number:
                raise EpisodeFileError(
                    path,
                    number,
                    f"episode id {episode.episode_id!r} is already used on line {earlier}; give "
                    "every episode an id of its own",
                )
            found.append((number, episode))
    return found


@dataclass(frozen=True)
class DoneSoFar:
    """What a result file already holds: the episode ids, and how many bytes of it are whole."""

    ids: frozenset[str]
    # Bytes up to the end of the last complete line; a run killed mid-write leaves a partial
    # line after it, which resuming cuts off before appending.
    whole_bytes: int
    size: int


def read_done(path: Path | str) -> DoneSoFar:
    """The episode ids a result file holds; a missing file holds none.

    A last line without its newline is an interrupted write and is not
    counted; any other line that is not a result raises ``EpisodeFileError``.
    """
    file = Path(path)
    if not file.exists():
        return DoneSoFar(frozenset(), 0, 0)
    data = file.read_bytes()
    ids: set[str] = set()
    offset = 0
    whole = 0
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        offset += len(raw)
        if not raw.endswith(b"\n"):
            break  # the partial last line of an interrupted write
        whole = offset
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise EpisodeFileError(
                file, number, "is not a result line (JSON); is this the --out of another command?"
            ) from None
        if not isinstance(item, dict) or not isinstance(item.get("episode_id"), str):
            raise EpisodeFileError(file, number, 'is not a result line: it has no "episode_id"')
        ids.add(item["episode_id"])
    return DoneSoFar(frozenset(ids), whole, len(data))
