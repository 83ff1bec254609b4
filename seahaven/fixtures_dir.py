"""Where a world's fixtures live by default, and whether a directory is an installed package's.

``World.fixtures_dir`` resolves through ``default_fixtures_dir`` when the world
names no directory; freezing refuses a directory ``installed_location`` says
an installed distribution owns, since a reinstall would replace what it wrote.
"""

from __future__ import annotations

import importlib.resources
import site
import sys
import sysconfig
from pathlib import Path

__all__ = ["default_fixtures_dir", "installed_location"]


def _installed_roots() -> list[Path]:
    roots = {Path(p).resolve() for p in site.getsitepackages() if p}
    user = site.getusersitepackages()
    if user:
        roots.add(Path(user).resolve())
    for key in ("purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(Path(path).resolve())
    return sorted(roots)


def _installing_record(directory: Path) -> Path | None:
    """The ``RECORD`` of an installed distribution that owns the package ``directory`` sits in.

    This catches installs the interpreter's own site directories do not list,
    such as ``pip install --target``: the folder above the package holds a
    ``*.dist-info`` whose ``RECORD`` names the package's files.
    """
    for root in directory.parents:
        top = directory.relative_to(root).parts[0]
        try:
            records = sorted(root.glob("*.dist-info/RECORD"))
        except OSError:
            continue
        for record in records:
            try:
                lines = record.read_text(encoding="utf-8").splitlines()
            except OSError:
                continue
            for line in lines:
                recorded = line.split(",", 1)[0].replace("\\", "/")
                if recorded.split("/", 1)[0] == top:
                    return record
    return None


def installed_location(path: Path) -> str | None:
    """Say where ``path`` was installed from, when it lies inside an installed package."""
    resolved = path.resolve()
    for root in _installed_roots():
        if resolved == root or root in resolved.parents:
            return str(root)
    record = _installing_record(resolved)
    if record is not None:
        return f"{record.parent.name} owns it"
    return None


def default_fixtures_dir(module_name: str, module_file: str | None) -> Path:
    """The ``fixtures/`` folder a world constructed in ``module_name`` uses by default.

    A ``fixtures/`` folder inside the world's package wins, because it travels in
    the wheel; else the project's ``fixtures/`` beside ``pyproject.toml``; else
    ``fixtures/`` beside the package.
    """
    parts = module_name.split(".")
    for depth in range(len(parts), 0, -1):
        package = ".".join(parts[:depth])
        if not hasattr(sys.modules.get(package), "__path__"):
            continue
        try:
            candidate = importlib.resources.files(package).joinpath("fixtures")
        except (ModuleNotFoundError, TypeError, ValueError):
            continue
        if isinstance(candidate, Path) and candidate.is_dir():
            return candidate
    if module_file is None:
        return Path.cwd() / "fixtures"
    here = Path(module_file).resolve().parent
    # How many folders above ``here`` the top-level package sits: a package's
    # ``__init__`` is one level shallower than a module of the same dotted depth.
    is_package = Path(module_file).name.startswith("__init__.")
    depth = len(parts) - (1 if is_package else 2)
    top_package = None
    if depth >= 0:
        top_package = here
        for _ in range(depth):
            top_package = top_package.parent
    # An installed package is not inside the project above it, even when a
    # virtualenv sits in one: walking up would find someone else's pyproject.toml.
    if installed_location(top_package or here) is None:
        for folder in (here, *here.parents):
            if (folder / "pyproject.toml").is_file():
                return folder / "fixtures"
    if top_package is None:
        # A plain top-level module, such as a script: beside it.
        return here / "fixtures"
    return top_package.parent / "fixtures"
