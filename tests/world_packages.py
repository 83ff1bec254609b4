"""Throwaway world packages and installed-distribution metadata, written into ``tmp_path``.

The registry, plugin and CLI tests need worlds that are importable and, for
some, published through entry points, without depending on ``worlds/``.
``write_world`` writes a package holding one small world; ``write_dist_info``
writes the ``.dist-info`` directory an installer would, so that a directory
on ``sys.path`` (or ``PYTHONPATH``) looks like a site-packages holding it.
Every module name is fresh, so tests never see each other's imports.
"""

from __future__ import annotations

import importlib
import itertools
import os
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from seahaven import registry

NOW = "2026-06-01T09:00:00.000Z"

_counter = itertools.count()


def fresh_module(stem: str) -> str:
    """A module name no other test in this process uses."""
    return f"{stem}_{os.getpid()}_{next(_counter)}"


def write_world(
    site: Path,
    module: str,
    *,
    name: str,
    version: str = "1.0.0",
    table: str = "notes",
    fixtures_dir: Path | None = None,
    adds: Sequence[tuple[str, str, Mapping[str, object]]] = (),
    extra: str = "",
) -> Path:
    """Write package ``module`` under ``site`` with a world ``name`` at attribute ``world``.

    ``adds`` is ``(module, attribute, add_world keywords)`` per world the new one
    adds. The world has one table and one tool, ``add_<table>``, which inserts a
    row. ``extra`` is appended to the module's source.
    """
    package = site / module
    package.mkdir(parents=True)
    fixtures = f"    fixtures_dir={str(fixtures_dir)!r},\n" if fixtures_dir is not None else ""
    source = (
        f'"""A throwaway world for the tests: {name}."""\n\n'
        "import seahaven\n" + "".join(f"import {added}\n" for added, _, _ in adds) + "\n"
        "world = seahaven.World(\n"
        f"    name={name!r},\n"
        f"    version={version!r},\n"
        f'    schema="CREATE TABLE {table} (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;",\n'
        '    state_format="seahaven.state/1",\n'
        f"{fixtures}"
        ")\n\n\n"
        "@world.tool\n"
        f"def add_{table}(ctx: seahaven.Ctx, id: str, body: str) -> str:\n"
        '    """Add one row."""\n'
        f'    ctx.db.execute("INSERT INTO {table} (id, body) VALUES (?, ?)", id, body)\n'
        "    return id\n\n\n"
        + "".join(
            f"world.add_world({added}.{attribute}, **{dict(keywords)!r})\n"
            for added, attribute, keywords in adds
        )
        + textwrap.dedent(extra)
    )
    (package / "__init__.py").write_text(source, encoding="utf-8")
    return package


def write_module(site: Path, module: str, source: str) -> Path:
    """Write a plain module ``module.py`` under ``site``."""
    path = site / f"{module}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def normalized(name: str) -> str:
    """A distribution name as wheel file and ``.dist-info`` names spell it."""
    return re.sub(r"[-_.]+", "_", name).lower()


def write_dist_info(
    site: Path,
    distribution: str,
    version: str = "1.0.0",
    *,
    worlds: Mapping[str, str] | None = None,
    plugins: Mapping[str, str] | None = None,
    scenarios: Mapping[str, str] | None = None,
    requires: Sequence[str] = (),
) -> Path:
    """Write the ``.dist-info`` of an installed ``distribution`` publishing these entry points."""
    dist_info = site / f"{normalized(distribution)}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {distribution}",
        f"Version: {version}",
        *(f"Requires-Dist: {requirement}" for requirement in requires),
    ]
    (dist_info / "METADATA").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    groups = []
    for group, entries in (
        ("seahaven.worlds", worlds),
        ("seahaven.plugins", plugins),
        ("seahaven.scenarios", scenarios),
    ):
        if entries:
            lines = [f"[{group}]", *(f"{key} = {value}" for key, value in entries.items())]
            groups.append("\n".join(lines))
    (dist_info / "entry_points.txt").write_text("\n\n".join(groups) + "\n", encoding="utf-8")
    return dist_info


@contextmanager
def on_sys_path(directory: Path) -> Iterator[Path]:
    """Put ``directory`` first on ``sys.path`` for the block, and forget it afterwards.

    The process's registry and plugin manager are refreshed on the way in, so the
    block sees what it publishes even when an earlier test built them, and on the
    way out, so nothing the block published is seen by a later test.
    """
    entry = str(directory)
    sys.path.insert(0, entry)
    importlib.invalidate_caches()
    registry.refresh()
    try:
        yield directory
    finally:
        sys.path.remove(entry)
        registry.refresh()


def composite(site: Path, fixtures: Path) -> dict[str, str]:
    """A company adding payments twice (once in scope eu) and chat, which adds payments too.

    Returns the module of each world by its name. Company's surface is add_staff,
    add_charges (payments), add_messages (chat) and eu_add_charges (eu_payments).
    """
    payments, chat, company = (fresh_module(stem) for stem in ("payments", "chat", "company"))
    write_world(site, payments, name="payments", table="charges")
    write_world(
        site,
        chat,
        name="chat",
        table="messages",
        adds=[(payments, "world", {"name": "payments", "tool_block_list": ["add_charges"]})],
    )
    write_world(
        site,
        company,
        name="company",
        version="3.1.0",
        table="staff",
        fixtures_dir=fixtures,
        adds=[
            (payments, "world", {"name": "payments"}),
            (chat, "world", {"name": "chat"}),
            (payments, "world", {"name": "eu_payments", "store": "eu", "tool_prefix": "eu_"}),
        ],
    )
    return {"payments": payments, "chat": chat, "company": company}
