"""``WorldPackage``: the code a world is made of, as ``seahaven check`` reads it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["WorldPackage"]


@dataclass(frozen=True, slots=True)
class WorldPackage:
    """The code a world is made of: its package directory, or the one module it lives in."""

    # The dotted package name; for a world in a lone top-level module, that module's name.
    name: str
    # The package directory, or ``None`` for a lone module.
    directory: Path | None
    # The lone module's file, when there is no package directory.
    module_file: Path | None = None

    @property
    def location(self) -> Path:
        """Where a finding with nowhere more precise to point goes."""
        if self.directory is not None:
            return self.directory
        assert self.module_file is not None
        return self.module_file

    def python_files(self) -> list[Path]:
        """Every ``*.py`` file of the world's code, sorted."""
        if self.directory is None:
            return [self.module_file] if self.module_file is not None else []
        return sorted(
            path
            for path in self.directory.rglob("*.py")
            if not any(
                part == "__pycache__" or part.startswith(".")
                for part in path.relative_to(self.directory).parts
            )
        )

    def module_name(self, path: Path) -> str:
        """The dotted module name of one of this package's files."""
        if self.directory is None:
            return self.name
        parts = list(path.relative_to(self.directory).with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        return ".".join([self.name, *parts])

    def subdirectory(self, path: Path) -> str | None:
        """The first directory under the package that ``path`` sits in, such as ``tools``."""
        if self.directory is None:
            return None
        parts = path.relative_to(self.directory).parts
        return parts[0] if len(parts) > 1 else None
