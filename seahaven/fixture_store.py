"""Fixture storage: reading, checking, copying and writing the frozen files on disk.

A fixture is a directory holding one frozen SQLite file per node and a
``fixture.yaml`` sidecar: ``format_version: 1`` for a world that adds nothing,
``2`` with a ``nodes`` list for a composite. Fixtures are never written, only
copied: before the first copy a process makes of a file, the file is hashed
against its ``file_sha256`` and its schema read (read-only, as an immutable
file) against the ``schema_hash`` its sidecar records. A new fixture is written
through ``FixtureWriter``, into a pending directory published whole or not at all.
An instance is made from a fixture through ``prepare`` and ``copy_state_file``;
freezing one from an instance is ``seahaven.freezing``, and
``seahaven.fixtures`` holds the public names of both.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shutil
import stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import apsw
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from seahaven.clock import is_canonical, parse_instant
from seahaven.errors import WorldBug
from seahaven.fixtures_dir import installed_location
from seahaven.names import portable_name_problem
from seahaven.schema import describe
from seahaven.workdir import mark_is_live, open_new_file, process_mark

if TYPE_CHECKING:
    from seahaven.composition import Composition
    from seahaven.world import World

__all__ = [
    "COMPANION_SUFFIXES",
    "SIDECAR",
    "Fixture",
    "FixtureNode",
    "FixtureWriter",
    "PreparedFixture",
    "Sidecar",
    "SidecarNode",
    "copy_state_file",
    "file_schema_hash",
    "fixture_directory",
    "fixture_ids",
    "load",
    "load_all",
    "other_worlds_fixtures",
    "prepare",
    "refuse_journal",
    "refuse_links",
    "remove_stale_pending",
    "schema_problems",
    "shape_problems",
    "shared_directory_note",
    "sync_to_disk",
    "verify",
    "verify_file",
    "world_fixtures",
]

SIDECAR = "fixture.yaml"
ROOT_FILE = "state.sqlite"
_PENDING_PREFIX = ".pending-"


class SidecarNode(BaseModel):
    """One added node of a composite fixture, as its sidecar records it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    path: str
    world: str
    world_version: str
    schema_hash: str
    scope: str | None
    file: str
    file_sha256: str
    aliases: list[str] = Field(default_factory=list)

    @field_validator("file")
    @classmethod
    def _portable_file(cls, value: str) -> str:
        problem = portable_name_problem(value, max_length=None)
        if problem is not None or value in (".", ".."):
            raise ValueError(f"not a state file name: {problem or 'it is a dot name'}")
        return value


class Sidecar(BaseModel):
    """A fixture's ``fixture.yaml``: what ``load`` parses and ``FixtureWriter.publish`` renders."""

    model_config = ConfigDict(extra="forbid", strict=True)

    format_version: Literal[1, 2]
    id: str
    world: str
    world_version: str
    schema_hash: str
    now: str
    parent_id: str | None
    file_sha256: str
    created_at: str
    description: str
    nodes: list[SidecarNode] | None = None

    def render(self) -> str:
        """The sidecar as YAML, fields in their declared order; a root-only one has no nodes."""
        fields = self.model_dump(mode="json", exclude_none=False)
        if self.nodes is None:
            del fields["nodes"]
        return yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=100)

    def fixture(self, directory: Path) -> Fixture:
        """The ``Fixture`` this sidecar describes, found in ``directory``."""
        return Fixture(
            id=self.id,
            now=self.now,
            parent_id=self.parent_id,
            description=self.description,
            directory=directory,
            world=self.world,
            world_version=self.world_version,
            schema_hash=self.schema_hash,
            file_sha256=self.file_sha256,
            created_at=self.created_at,
            format_version=self.format_version,
            nodes=tuple(
                FixtureNode(**{**node.model_dump(), "aliases": tuple(node.aliases)})
                for node in self.nodes or ()
            ),
        )


@dataclass(frozen=True, slots=True)
class FixtureNode:
    """One added node of a composite fixture, as its sidecar describes it."""

    path: str
    world: str
    world_version: str
    schema_hash: str
    scope: str | None
    file: str
    file_sha256: str
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Fixture:
    """A fixture on disk, as its sidecar describes it. Reading one never opens the state file."""

    id: str
    now: str
    parent_id: str | None
    description: str
    directory: Path
    world: str
    world_version: str
    schema_hash: str
    file_sha256: str
    created_at: str
    format_version: int
    nodes: tuple[FixtureNode, ...]

    @property
    def state_path(self) -> Path:
        """The root's frozen state file."""
        return self.directory / ROOT_FILE

    def files(self) -> dict[str, tuple[Path, str]]:
        """Every node's state file and its recorded hash, keyed by path, root first."""
        found = {"main": (self.state_path, self.file_sha256)}
        for node in self.nodes:
            found[node.path] = (self.directory / node.file, node.file_sha256)
        return found


# libyaml's loader where PyYAML was built with it: a sidecar is read on every create.
_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(fixture_dir: Path | str, *, require_canonical_now: bool = True) -> Fixture:
    """Read one fixture's sidecar, without opening its state file.

    ``seahaven check`` passes ``require_canonical_now=False`` to report a bad
    ``now`` as its own finding (SH404) rather than as a sidecar that does not load.
    """
    directory = Path(fixture_dir)
    sidecar_path = directory / SIDECAR
    try:
        text = sidecar_path.read_text(encoding="utf-8")
    except OSError as error:
        raise WorldBug(f"{sidecar_path}: cannot be read: {error.strerror or error}") from None
    try:
        raw = yaml.load(text, Loader=_YamlLoader)
    except yaml.YAMLError as error:
        raise WorldBug(f"{sidecar_path}: is not valid YAML: {error}") from None
    if not isinstance(raw, dict):
        raise WorldBug(f"{sidecar_path}: is not a mapping of sidecar fields")
    version = raw.get("format_version")
    if version not in (1, 2):
        raise WorldBug(
            f"{sidecar_path}: format_version {version!r} is not one this Seahaven reads (1 or 2)"
        )
    try:
        sidecar = Sidecar.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, item['loc'])) or 'sidecar'}: {item['msg']}"
            for item in error.errors(include_url=False)
        )
        raise WorldBug(f"{sidecar_path}: does not validate: {problems}") from None
    shape = _sidecar_shape_problems(sidecar, require_canonical_now)
    if shape:
        raise WorldBug(f"{sidecar_path}: does not validate: {'; '.join(shape)}")
    return sidecar.fixture(directory)


def _sidecar_shape_problems(sidecar: Sidecar, require_canonical_now: bool = True) -> list[str]:
    problems = []
    if sidecar.format_version == 1 and sidecar.nodes is not None:
        problems.append("nodes: a format_version 1 sidecar has no nodes; a composite is version 2")
    if sidecar.format_version == 2 and not sidecar.nodes:
        problems.append("nodes: a format_version 2 sidecar lists at least one added node")
    if require_canonical_now and not is_canonical(sidecar.now):
        problems.append(f"now: {sidecar.now!r} is not canonical (2026-06-01T09:00:00.000Z)")
    paths: set[str] = set()
    files = {ROOT_FILE}
    for node in sidecar.nodes or ():
        if node.path in paths or node.path == "main":
            problems.append(f"nodes: path {node.path!r} appears twice")
        paths.add(node.path)
        if node.file in files:
            problems.append(f"nodes: state file {node.file!r} is named twice")
        files.add(node.file)
    return problems


def load_all(fixtures_dir: Path | str) -> dict[str, Fixture]:
    """Every fixture in a directory, keyed by id. Dot-directories are skipped."""
    directory = Path(fixtures_dir)
    found: dict[str, Fixture] = {}
    if not directory.is_dir():
        return found
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if not (entry / SIDECAR).exists():
            continue
        fixture = load(entry)
        earlier = found.get(fixture.id)
        if earlier is not None:
            raise WorldBug(
                f"{entry / SIDECAR}: claims fixture id {fixture.id!r}, which "
                f"{earlier.directory / SIDECAR} claims too; fixture ids are unique"
            )
        found[fixture.id] = fixture
    return found


def world_fixtures(world: World) -> list[Fixture]:
    """Every fixture of ``world`` in its fixtures directory, sorted by id (``world.fixtures()``)."""
    directory = world.fixtures_dir
    if not directory.is_dir():
        return []
    # A directory shared with another world still lists only this world's own.
    own = (fixture for fixture in load_all(directory).values() if fixture.world == world.name)
    return sorted(own, key=lambda fixture: fixture.id)


# What verification depends on, for each file verified so far in this process: the
# file itself (where it is and every stat field an edit moves) and what it was
# held to (its recorded hash and schema hash). Editing either side misses the cache.
_verified: set[tuple[object, ...]] = set()
_verified_lock = threading.Lock()

# What a state file must not have beside it: SQLite's write-ahead log and its
# index, and a rollback journal. Each means the file was opened for writing after
# freezing, and what such a file holds is not covered by the hash: a hot journal
# would be rolled back into the copy the first time the copy is opened.
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")

_RESTORE = (
    "fixtures are immutable, so restore the file (from version control, say) or regenerate "
    "the fixture: delete its directory and freeze it again with seahaven fixture freeze or fork"
)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def file_schema_hash(file: Path) -> str:
    """The schema hash of a frozen state file, read without writing anything beside it.

    The file is opened read-only as immutable, so SQLite takes no lock, reads no
    journal and creates no ``-wal`` or ``-shm`` file.
    """
    from urllib.parse import quote

    uri = f"file:{quote(str(file.resolve()))}?mode=ro&immutable=1"
    conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        return describe(conn).hash
    finally:
        conn.close()


def _recorded_schema_hash(fixture: Fixture, path: str) -> str:
    if path == "main":
        return fixture.schema_hash
    for node in fixture.nodes:
        if node.path == path:
            return node.schema_hash
    raise WorldBug(f"fixture {fixture.id!r} has no node {path!r}")


def refuse_links(fixture_id: str, directory: Path) -> None:
    """Refuse a fixture whose directory or sidecar is a symbolic link.

    A fixture is the files in its own directory. A link would let every check
    pass against files that live somewhere else, which the next write there
    changes without the fixture's hashes knowing.
    """
    label = f"fixture {fixture_id!r}"
    for what, candidate in (("directory", directory), (SIDECAR, directory / SIDECAR)):
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            raise WorldBug(f"{label}: its {what} is missing; regenerate the fixture") from None
        if stat.S_ISLNK(info.st_mode):
            raise WorldBug(
                f"{label}: {candidate} is a symbolic link; a fixture is the files in its own "
                "directory, so move the real fixture into the fixtures directory, or freeze it "
                "again"
            )


def verify_file(fixture: Fixture, path: str, file: Path, expected: str) -> None:
    """Refuse a state file that is a link, lies outside the fixture, or fails its hash or schema."""
    label = f"fixture {fixture.id!r}, node {path!r} ({file.name})"
    if file.parent != fixture.directory:
        raise WorldBug(f"{label} lies outside the fixture's directory")
    try:
        # One lstat answers every question, and never follows a link.
        info = os.lstat(file)
    except FileNotFoundError:
        raise WorldBug(f"{label} is missing; regenerate the fixture") from None
    if stat.S_ISLNK(info.st_mode):
        raise WorldBug(
            f"{label} is a symbolic link; a fixture's files are the files in its own directory. "
            "Copy the file in, or freeze the fixture again"
        )
    if not stat.S_ISREG(info.st_mode):
        raise WorldBug(f"{label} is not a regular file")
    schema_hash = _recorded_schema_hash(fixture, path)
    # ctime too: an edit that restores the mtime still moves it.
    key = (
        str(file),
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        expected,
        schema_hash,
    )
    with _verified_lock:
        if key in _verified:
            return
    actual = _hash_file(file)
    if actual != expected:
        raise WorldBug(
            f"{label} does not match its file_sha256 (it was changed after freezing); {_RESTORE}"
        )
    try:
        found = file_schema_hash(file)
    except apsw.Error as error:
        raise WorldBug(
            f"{label} is not a SQLite database SQLite can read ({error}); {_RESTORE}"
        ) from None
    if found != schema_hash:
        raise WorldBug(
            f"{label} does not have the schema its sidecar records (schema {schema_hash[:12]} "
            f"recorded, {found[:12]} in the file), so its file_sha256 was recomputed after the "
            f"file was changed; {_RESTORE}"
        )
    with _verified_lock:
        _verified.add(key)


def refuse_journal(fixture: Fixture, path: str, file: Path) -> None:
    """Refuse a state file with a ``-wal``, ``-shm`` or ``-journal`` file beside it (SH405).

    Checked on every copy rather than remembered, because the hash cannot see
    what sits in a journal.
    """
    for suffix in COMPANION_SUFFIXES:
        companion = file.with_name(file.name + suffix)
        try:
            # One lstat: anything by that name, a dangling link too, is refused.
            os.lstat(companion)
        except (FileNotFoundError, NotADirectoryError):
            continue
        raise WorldBug(
            f"fixture {fixture.id!r}, node {path!r} ({file.name}) has a {file.name}{suffix} "
            "file beside it, so it was opened for writing after freezing; regenerate it "
            "with seahaven fixture freeze or seahaven fixture fork"
        )


def verify(fixture: Fixture) -> None:
    """Raise unless the fixture is safe to copy: no links or journals; hashes and schemas hold."""
    refuse_links(fixture.id, fixture.directory)
    for path, (file, expected) in fixture.files().items():
        refuse_journal(fixture, path, file)
        verify_file(fixture, path, file, expected)


# --- making an instance from a fixture ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PreparedFixture:
    """A fixture checked against the world it is about to be copied for."""

    fixture: Fixture
    now_ms: int
    files: dict[str, Path]
    file_hashes: dict[str, str]
    frozen_versions: dict[str, str]


def shape_problems(fixture: Fixture, composition: Composition) -> list[str]:
    """How the sidecar's nodes differ from what the world resolves to now, one sentence each."""
    problems: list[str] = []
    world_nodes = {node.path: node for node in composition.nodes if not node.is_root}
    fixture_nodes = {node.path: node for node in fixture.nodes}
    for path in world_nodes.keys() - fixture_nodes.keys():
        problems.append(
            f"node added: the world has a store at {path!r} (world "
            f"{world_nodes[path].world.name!r}) that the fixture does not hold"
        )
    for path in fixture_nodes.keys() - world_nodes.keys():
        problems.append(
            f"node removed: the fixture holds a store at {path!r} (world "
            f"{fixture_nodes[path].world!r}) that the world no longer has"
        )
    for path in sorted(world_nodes.keys() & fixture_nodes.keys()):
        node, frozen = world_nodes[path], fixture_nodes[path]
        if node.world.name != frozen.world:
            problems.append(
                f"shape changed: the store at {path!r} is world {node.world.name!r} now and was "
                f"{frozen.world!r} when frozen"
            )
        if node.scope != frozen.scope:
            problems.append(
                f"shape changed: the store at {path!r} is in scope {node.scope!r} now and was in "
                f"{frozen.scope!r} when frozen"
            )
        if sorted(node.aliases) != sorted(frozen.aliases):
            problems.append(
                f"shape changed: the store at {path!r} is also reached by {sorted(node.aliases)} "
                f"now and was by {sorted(frozen.aliases)} when frozen"
            )
    expected_version = 2 if len(composition.nodes) > 1 else 1
    if not problems and fixture.format_version != expected_version:
        problems.append(
            f"shape changed: the fixture is format_version {fixture.format_version} and a world "
            f"with {len(composition.nodes)} store(s) is format_version {expected_version}"
        )
    return sorted(problems)


def schema_problems(fixture: Fixture, composition: Composition) -> list[str]:
    """Nodes whose recorded schema hash is not their world's, one sentence each."""
    problems = []
    recorded = {"main": fixture.schema_hash} | {n.path: n.schema_hash for n in fixture.nodes}
    for node in composition.nodes:
        frozen = recorded.get(node.path)
        if frozen is not None and frozen != node.world.schema_hash:
            problems.append(
                f"schema drifted: the store at {node.path!r} (world {node.world.name!r}) was "
                f"frozen from schema {frozen[:12]} and the world now declares "
                f"{node.world.schema_hash[:12]}; regenerate the fixture"
            )
    return problems


def fixture_ids(fixtures_dir: Path) -> list[str]:
    """The names of the directories in ``fixtures_dir`` that hold a sidecar, sorted.

    Nothing is read, so a fixture whose sidecar does not load is still named.
    """
    if not fixtures_dir.is_dir():
        return []
    return sorted(
        entry.name
        for entry in fixtures_dir.iterdir()
        if not entry.name.startswith(".") and (entry / SIDECAR).is_file()
    )


def other_worlds_fixtures(world: World) -> dict[str, str]:
    """The fixtures in ``world``'s fixtures directory that another world froze: id to world.

    Two worlds that leave ``fixtures_dir`` at its default in one project share a
    directory; each lists, verifies and checks only its own, and this says what
    else is there. A sidecar that does not load is not counted here.
    """
    found: dict[str, str] = {}
    for fixture_id in fixture_ids(world.fixtures_dir):
        try:
            fixture = load(world.fixtures_dir / fixture_id)
        except WorldBug:
            continue
        if fixture.world != world.name:
            found[fixture_id] = fixture.world
    return found


def shared_directory_note(world: World, others: dict[str, str]) -> str:
    """One sentence saying that ``world`` shares its fixtures directory, and how to stop it."""
    names = ", ".join(sorted(set(others.values())))
    return (
        f"{len(others)} fixture(s) in {world.fixtures_dir} belong to other worlds ({names}), "
        f"so world {world.name!r} shares that directory; give each world its own with "
        "World(fixtures_dir=...)"
    )


def fixture_directory(world: World, fixture_id: str) -> Path:
    """Where ``fixture_id`` of ``world`` lives, or a ``WorldBug`` naming the ways out."""
    directory = world.fixtures_dir / fixture_id
    if not (directory / SIDECAR).is_file() and not (directory / SIDECAR).is_symlink():
        existing = fixture_ids(world.fixtures_dir)
        listing = f"it has {', '.join(existing)}" if existing else "it has no fixtures yet"
        raise WorldBug(
            f"world {world.name!r} has no fixture {fixture_id!r} in {world.fixtures_dir} "
            f"({listing}); name one of those, freeze one, or name the directory with "
            "World(fixtures_dir=...)",
            # A server's client may not see the directory, nor freeze anything.
            client_text=f"world {world.name!r} has no fixture {fixture_id!r} ({listing}); "
            "name one of those, or none for a blank instance",
        )
    return directory


_loaded: dict[tuple[str, int, int, int, int, int], Fixture] = {}


def _load_unchanged(directory: Path) -> Fixture:
    """``load``, remembered until the sidecar file changes: a sidecar is read on every create."""
    sidecar = directory / SIDECAR
    try:
        info = os.stat(sidecar)
    except OSError:
        return load(directory)
    key = (
        str(sidecar),
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )
    fixture = _loaded.get(key)
    if fixture is None:
        fixture = _loaded[key] = load(directory)
    return fixture


def prepare(world: World, composition: Composition, fixture_id: str) -> PreparedFixture:
    """Every check creation makes before a file is copied."""
    directory = fixture_directory(world, fixture_id)
    # Before the sidecar is read: a linked directory or sidecar is refused unread.
    refuse_links(fixture_id, directory)
    fixture = _load_unchanged(directory)
    label = f"fixture {fixture_id!r} of world {world.name!r}"
    if fixture.id != fixture_id:
        raise WorldBug(f"{label}: its sidecar says id {fixture.id!r}; rename one to match")
    if fixture.world != world.name:
        raise WorldBug(
            f"{label} was frozen from world {fixture.world!r}; a world makes instances only of "
            "fixtures it froze itself. When two worlds share one fixtures directory, give each "
            "its own with World(fixtures_dir=...); else freeze this one from the world that "
            "uses it"
        )
    problems = shape_problems(fixture, composition) + schema_problems(fixture, composition)
    if problems:
        raise WorldBug(f"{label} cannot be used: " + "; ".join(problems))
    files: dict[str, Path] = {}
    hashes: dict[str, str] = {}
    for path, (file, expected) in fixture.files().items():
        refuse_journal(fixture, path, file)
        verify_file(fixture, path, file, expected)
        files[path] = file
        hashes[path] = expected
    frozen_versions: dict[str, str] = {}
    recorded = {"main": fixture.world_version} | {n.path: n.world_version for n in fixture.nodes}
    for node in composition.nodes:
        if recorded[node.path] != node.world.version:
            frozen_versions[node.path] = recorded[node.path]
    return PreparedFixture(
        fixture=fixture,
        now_ms=parse_instant(fixture.now),
        files=files,
        file_hashes=hashes,
        frozen_versions=frozen_versions,
    )


_FICLONE = 0x40049409


def copy_state_file(source: Path, target: Path) -> None:
    """Copy a frozen file the cheapest correct way: a reflink where the filesystem has one.

    ``target`` must not exist; it is made readable by its owner only (``0600``).
    """
    with open(source, "rb") as src, open(open_new_file(target), "wb") as dst:
        if sys.platform == "linux":
            try:
                import fcntl

                fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
                return
            except OSError:
                pass
            try:
                remaining = os.fstat(src.fileno()).st_size
                while remaining > 0:
                    copied = os.copy_file_range(src.fileno(), dst.fileno(), remaining)
                    if copied == 0:
                        break
                    remaining -= copied
                if remaining == 0:
                    return
            except OSError as error:
                if error.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
            src.seek(0)
            dst.seek(0)
            dst.truncate()
        shutil.copyfileobj(src, dst, 1 << 20)


# --- writing a fixture ---------------------------------------------------------------------------


def _refuse_unwritable(fixtures_dir: Path) -> None:
    installed = installed_location(fixtures_dir)
    if installed is not None:
        raise WorldBug(
            f"{fixtures_dir} is inside an installed package ({installed}); freeze into a "
            "directory of your own by naming it with World(fixtures_dir=...)"
        )
    resolved = fixtures_dir.resolve()
    existing = resolved
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        raise WorldBug(
            f"{fixtures_dir} is read-only; freeze into a writable directory by naming it "
            "with World(fixtures_dir=...)"
        )


def _mark_write_ahead(file: Path) -> None:
    """Record write-ahead logging in the frozen file's header.

    Every fixture a release has frozen carries this mark, and a fixture's bytes
    (and so its hash, and a generator's rebuild) must not change with the
    release, so it stays, though an instance's store now starts with its journal
    in memory and rewrites its copy's header once, unsynced, on first use. The
    last connection to close checkpoints and removes the -wal and -shm files, so
    the frozen file stands alone.
    """
    conn = apsw.Connection(str(file))
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()


class FixtureWriter:
    """One fixture being written: into a pending directory, published whole or not at all.

    Making one refuses a directory that an installed package owns or that
    cannot be written, and an id that is taken. As a ``with`` block it makes
    the pending directory (clearing what dead freezes left beside it) and
    removes it again if anything is raised; inside, each state file is written
    to ``state_file(name)`` and finished by ``seal``, and ``publish`` writes the
    sidecar and renames the directory into place in one step.
    """

    def __init__(self, fixtures_dir: Path | str, fixture_id: str) -> None:
        self.directory = Path(fixtures_dir)
        _refuse_unwritable(self.directory)
        self.target = self.directory / fixture_id
        if self.target.exists() or self.target.is_symlink():
            raise WorldBug(
                f"fixture {fixture_id!r} already exists in {self.directory}; fixtures are "
                "immutable, so freeze under a new id (a fork) or delete the directory to "
                "regenerate it"
            )
        self.fixture_id = fixture_id
        # The pending name carries this process's mark, so a later freeze can tell a
        # directory an interrupted freeze left behind from one a live freeze is writing.
        self.pending = self.directory / (
            f"{_PENDING_PREFIX}{process_mark()}-{fixture_id}-{secrets.token_hex(4)}"
        )

    def __enter__(self) -> FixtureWriter:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            remove_stale_pending(self.directory)
            self.pending.mkdir()
        except OSError as error:
            raise WorldBug(
                f"{self.directory} cannot be written ({error.strerror or error}), so nothing "
                "was frozen; freeze into a writable directory by naming it with "
                "World(fixtures_dir=...)"
            ) from None
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            shutil.rmtree(self.pending, ignore_errors=True)

    def state_file(self, name: str) -> Path:
        """Where the state file ``name`` is written, inside the pending directory."""
        return self.pending / name

    def seal(self, file: Path) -> str:
        """Finish a state file written into the pending directory; return its ``file_sha256``.

        An ``apsw.Error`` or ``OSError`` is raised as it came, for the caller to
        name the store whose file it was.
        """
        _mark_write_ahead(file)
        digest = _hash_file(file)
        file.chmod(0o444)
        sync_to_disk(file)
        return digest

    def publish(self, sidecar: Sidecar) -> Path:
        """Write ``sidecar`` and move the fixture into place; return its directory."""
        try:
            (self.pending / SIDECAR).write_text(sidecar.render(), encoding="utf-8")
            # Everything inside is on the disk before the rename makes it visible.
            sync_to_disk(self.pending / SIDECAR)
            sync_to_disk(self.pending)
        except OSError as error:
            raise WorldBug(
                f"the sidecar could not be written into {self.directory} "
                f"({error.strerror or error}), so nothing was frozen; free space on that "
                "disk, or freeze into another directory by naming it with "
                "World(fixtures_dir=...)"
            ) from None
        try:
            os.rename(self.pending, self.target)
        except OSError as error:
            raise WorldBug(
                f"fixture {self.fixture_id!r} could not be published in {self.directory}: "
                f"{error.strerror or error}"
            ) from None
        # And the rename itself, so a published fixture stays published after a crash.
        with contextlib.suppress(OSError):
            sync_to_disk(self.directory)
        return self.target


def sync_to_disk(path: Path) -> None:
    """Wait until ``path`` (a file, or a directory's entries) is on the disk.

    Freezing is the one path that must survive a crash, so it is the one path
    that syncs. A platform that cannot open a directory (Windows) skips it.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except (IsADirectoryError, PermissionError):
        if path.is_dir():
            return
        raise
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def remove_stale_pending(fixtures_dir: Path) -> list[Path]:
    """Remove the pending directories of freezes whose process no longer runs; return them.

    A pending directory is named ``.pending-<process mark>-<id>-<token>``. One
    whose process still runs may be a freeze in progress, and one whose name
    carries no mark cannot be told apart from one, so both are left alone.
    """
    removed: list[Path] = []
    try:
        entries = list(fixtures_dir.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(_PENDING_PREFIX):
            continue
        pid, _, rest = entry.name[len(_PENDING_PREFIX) :].partition("-")
        start = rest.partition("-")[0]
        if mark_is_live(f"{pid}-{start}") is False and not entry.is_symlink() and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed
