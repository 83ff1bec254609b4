"""Freezing: minting a fixture from a live instance.

Under the instance's lock, freezing checks every store still has its world's
schema, checkpoints each store and copies it with ``VACUUM INTO`` into a
``FixtureWriter``'s pending directory, then writes the sidecar and publishes
the fixture in one rename. What touches the disk is ``seahaven.fixture_store``'s;
what is read from the instance is its documented interface (``lock``,
``check_usable``, ``runtimes``).

``rebuild`` freezes a fixture again over an existing one and keeps the old one
when the two differ only in ``created_at``, so rebuilding unchanged fixtures
changes nothing on disk (nor in version control).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from seahaven.clock import format_instant
from seahaven.errors import WorldBug
from seahaven.fixture_store import SIDECAR, Fixture, FixtureWriter, Sidecar, SidecarNode, load
from seahaven.names import check_fixture_id
from seahaven.schema import describe

if TYPE_CHECKING:
    from seahaven.instance import Instance

__all__ = ["freeze", "freeze_instance", "rebuild"]


def freeze_instance(instance: Instance, fixture_id: str, description: str) -> Fixture:
    """``inst.freeze(id, description)``: freeze into the world's own fixtures directory."""
    instance.calls.check_usable()
    instance.calls.refuse_inside("freeze cannot run inside bulk() or a call; leave the block first")
    # A freeze is a use of the tree, so a tree that no longer seals is refused here.
    instance.calls.routes()
    return freeze(instance, fixture_id, description, fixtures_dir=instance.world.fixtures_dir)


def freeze(
    instance: Instance, fixture_id: str, description: str, *, fixtures_dir: Path | str
) -> Fixture:
    """Mint a fixture from ``instance``: check, checkpoint, vacuum, hash, publish atomically."""
    check_fixture_id(fixture_id)
    if not isinstance(description, str):
        raise WorldBug("a fixture's description is a string, written for whoever chooses it")
    writer = FixtureWriter(fixtures_dir, fixture_id)
    with instance.calls.lock:
        instance.calls.check_usable()
        runtimes = instance.calls.runtimes
        for runtime in runtimes:
            actual = describe(runtime.conn).hash
            if actual != runtime.node.world.schema_hash:
                raise WorldBug(
                    f"the store at {runtime.path!r} (world {runtime.node.world.name!r}) no longer "
                    "matches its world's schema, so nothing was frozen; the schema of a store "
                    "is the world's to change"
                )
        with writer:
            hashes: dict[str, str] = {}
            for runtime in runtimes:
                file = writer.state_file(runtime.node.file_name)
                try:
                    runtime.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    runtime.conn.execute("VACUUM INTO ?", (str(file),))
                    hashes[runtime.path] = writer.seal(file)
                except (apsw.Error, OSError) as error:
                    reason = error.strerror if isinstance(error, OSError) else None
                    raise WorldBug(
                        f"the store at {runtime.path!r} could not be written into "
                        f"{writer.directory} ({reason or error}), so nothing was frozen; free "
                        "space on that disk, or freeze into another directory by naming it with "
                        "World(fixtures_dir=...)"
                    ) from None
            world = instance.world
            nodes = [
                SidecarNode(
                    path=runtime.path,
                    world=runtime.node.world.name,
                    world_version=runtime.node.world.version,
                    schema_hash=runtime.node.world.schema_hash,
                    scope=runtime.node.scope,
                    file=runtime.node.file_name,
                    file_sha256=hashes[runtime.path],
                    aliases=list(runtime.node.aliases),
                )
                for runtime in runtimes[1:]
            ]
            sidecar = Sidecar(
                format_version=2 if nodes else 1,
                id=fixture_id,
                world=world.name,
                world_version=world.version,
                schema_hash=world.schema_hash,
                now=instance.clock.iso(),
                parent_id=instance.fixture,
                file_sha256=hashes["main"],
                created_at=format_instant(time.time_ns() // 1_000_000),
                description=description,
                nodes=nodes or None,
            )
            target = writer.publish(sidecar)
    return load(target)


_PREVIOUS_PREFIX = ".previous-"


def rebuild(
    fixtures_dir: Path | str, fixture_id: str, build: Callable[[], Fixture]
) -> tuple[Fixture, bool]:
    """Build ``fixture_id`` again where it is; return the fixture in place and whether it changed.

    ``build()`` freezes the fixture into ``fixtures_dir``. The existing fixture
    is moved aside first (a dot-directory, which no listing reads) and put back
    when ``build`` fails, or when what it built is the same in every byte and
    every sidecar field but ``created_at``: ``created_at`` then stays the moment
    those bytes were first frozen. Otherwise the old one is removed.
    """
    target = Path(fixtures_dir) / fixture_id
    if not (target.exists() or target.is_symlink()):
        return build(), True
    aside = target.with_name(f"{_PREVIOUS_PREFIX}{fixture_id}-{secrets.token_hex(4)}")
    try:
        os.rename(target, aside)
    except OSError as error:
        raise WorldBug(
            f"fixture {fixture_id!r} could not be moved aside to be rebuilt "
            f"({error.strerror or error}); make {target.parent} writable"
        ) from None
    try:
        built = build()
    except BaseException:
        if target.exists() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        os.rename(aside, target)
        raise
    if _same_but_created_at(aside, target):
        shutil.rmtree(target)
        os.rename(aside, target)
        return load(target), False
    if aside.is_symlink() or not aside.is_dir():
        aside.unlink()
    else:
        shutil.rmtree(aside)
    return built, True


def _same_but_created_at(old: Path, new: Path) -> bool:
    """Whether two fixture directories hold the same files, bytes and sidecar but ``created_at``."""
    if old.is_symlink() or not old.is_dir():
        return False
    names = sorted(entry.name for entry in old.iterdir())
    if names != sorted(entry.name for entry in new.iterdir()) or SIDECAR not in names:
        return False
    for name in names:
        before, after = old / name, new / name
        if before.is_symlink() or not before.is_file():
            return False
        if name != SIDECAR and _digest(before) != _digest(after):
            return False
    try:
        previous, built = load(old), load(new)
    except WorldBug:
        return False
    return dataclasses.replace(previous, directory=new, created_at=built.created_at) == built


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
