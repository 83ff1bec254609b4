"""Two checkouts timed in one run: this code's ``seahaven`` and another's, a process each.

A benchmark that compares against another checkout (``--against DIR``, a ``git worktree`` of an
older commit) runs itself again as a child for each side, with ``--serve ...`` and, for the other
side, ``--against DIR``; the child imports that checkout's ``seahaven`` first
(``load_checkout``), prints a ready line, then answers each line on its stdin with one round's
figures as a JSON line. ``Side`` is the parent's handle on one such child, so the parent can
alternate rounds between the two.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load_checkout(checkout: Path) -> None:
    """Import ``seahaven`` from ``checkout`` ahead of the installed (editable) one."""
    load_package("seahaven", checkout / "seahaven")


def load_package(name: str, package: Path) -> None:
    """Import package ``name`` from the directory ``package``, ahead of the installed one."""
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


class Side:
    """A child running ``script`` with ``arguments`` (and ``--against checkout``), one round a line.

    ``loaded_from`` is the ``seahaven`` package file the child imported, from its ready line.
    """

    def __init__(self, name: str, script: str, arguments: list[str], checkout: Path | None) -> None:
        self.name = name
        command = [sys.executable, script, *arguments]
        if checkout is not None:
            command += ["--against", str(checkout)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        self.loaded_from = self._read()["seahaven"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.name} side stopped")
        result: dict[str, Any] = json.loads(line)
        return result

    def round(self) -> dict[str, Any]:
        """Ask the child for one round and return its figures."""
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        """End the child (its stdin closes) and wait for it."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
