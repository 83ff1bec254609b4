"""Where a world's fixtures live by default, and fixtures that travel inside an installed wheel."""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

import seahaven

NOW = "2031-03-14T08:30:00.000Z"

WORLD_MODULE = """
import seahaven

world = seahaven.World(
    name="{name}",
    version="0.1.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
)
"""

Importer = Callable[[Path, str], ModuleType]


@pytest.fixture
def importer(monkeypatch: pytest.MonkeyPatch) -> Iterator[Importer]:
    """Import a module from a folder, and forget every module imported that way afterwards."""
    imported: list[str] = []

    def load(root: Path, module: str) -> ModuleType:
        monkeypatch.syspath_prepend(str(root))
        imported.append(module.partition(".")[0])
        return importlib.import_module(module)

    yield load
    for top in imported:
        for name in [n for n in sys.modules if n == top or n.startswith(f"{top}.")]:
            del sys.modules[name]


def write_world_package(root: Path, package: str, *, inside: str = "__init__.py") -> Path:
    """A world package under ``root``: its schema as package data, the world in ``inside``."""
    directory = root / package
    (directory / "schema").mkdir(parents=True)
    (directory / "schema" / "001_memos.sql").write_text(
        "CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;\n", encoding="utf-8"
    )
    (directory / "__init__.py").write_text("", encoding="utf-8")
    (directory / inside).write_text(WORLD_MODULE.format(name=package), encoding="utf-8")
    return directory


def no_pyproject_above(path: Path) -> bool:
    return not any((folder / "pyproject.toml").is_file() for folder in (path, *path.parents))


# --- the default ----------------------------------------------------------------------------------


def test_a_fixtures_folder_inside_the_package_wins(tmp_path: Path, importer: Importer) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "travel-a"\n', encoding="utf-8")
    package = write_world_package(tmp_path / "src", "travel_a")
    (package / "fixtures").mkdir()
    (tmp_path / "fixtures").mkdir()
    world = importer(tmp_path / "src", "travel_a").world
    assert world.fixtures_dir == package / "fixtures"


def test_a_world_in_a_submodule_finds_its_packages_fixtures(
    tmp_path: Path, importer: Importer
) -> None:
    package = write_world_package(tmp_path, "travel_b", inside="world.py")
    (package / "fixtures").mkdir()
    world = importer(tmp_path, "travel_b.world").world
    assert world.fixtures_dir == package / "fixtures"


def test_without_one_the_project_roots_fixtures_folder_is_used(
    tmp_path: Path, importer: Importer
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "travel-c"\n', encoding="utf-8")
    write_world_package(tmp_path / "src", "travel_c", inside="world.py")
    world = importer(tmp_path / "src", "travel_c.world").world
    assert world.fixtures_dir == tmp_path / "fixtures"


@pytest.mark.parametrize("inside", ["__init__.py", "world.py"])
def test_without_a_project_the_folder_beside_the_package_is_used(
    tmp_path: Path, importer: Importer, inside: str
) -> None:
    if not no_pyproject_above(tmp_path):
        pytest.skip("the temporary directory sits inside a project")
    name = f"travel_d_{inside.partition('.')[0].strip('_')}"
    write_world_package(tmp_path / "site", name, inside=inside)
    module = name if inside == "__init__.py" else f"{name}.world"
    world = importer(tmp_path / "site", module).world
    assert world.fixtures_dir == tmp_path / "site" / "fixtures"


def test_an_installed_package_does_not_adopt_the_project_around_its_environment(
    tmp_path: Path, importer: Importer
) -> None:
    # A virtualenv inside someone's project: the package is installed, not theirs.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "consumer"\n', encoding="utf-8")
    target = tmp_path / ".venv" / "site"
    write_world_package(target, "travel_e")
    (target / "travel_e-0.1.0.dist-info").mkdir()
    (target / "travel_e-0.1.0.dist-info" / "RECORD").write_text(
        "travel_e/__init__.py,,\n", encoding="utf-8"
    )
    world = importer(target, "travel_e").world
    assert world.fixtures_dir == target / "fixtures"


def test_an_explicit_fixtures_dir_wins_and_a_copy_can_move_its_own(
    tmp_path: Path, importer: Importer
) -> None:
    package = write_world_package(tmp_path, "travel_f")
    (package / "fixtures").mkdir()
    world = importer(tmp_path, "travel_f").world
    named = seahaven.World(
        name="named",
        version="1",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        fixtures_dir=str(tmp_path / "elsewhere"),
        state_format="seahaven.state/1",
    )
    assert named.fixtures_dir == tmp_path / "elsewhere"
    moved = copy.copy(world)
    moved.fixtures_dir = tmp_path / "scratch"
    assert moved.fixtures_dir == tmp_path / "scratch"
    assert world.fixtures_dir == package / "fixtures"


# --- the installed wheel --------------------------------------------------------------------------

# Used only where this environment's setuptools cannot build a wheel (it needs the
# `wheel` package before setuptools 70.1): a minimal PEP 517 backend, so pip still
# builds a real wheel from the source tree and installs it the ordinary way.
TINY_BACKEND = """
import base64, hashlib, os, zipfile

NAME, VERSION = "tinyworld", "0.1.0"
DIST_INFO = f"{NAME}-{VERSION}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def _digest(data):
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for folder, _, files in os.walk(NAME):
        for file in sorted(files):
            path = os.path.join(folder, file)
            if "__pycache__" not in path:
                with open(path, "rb") as handle:
                    entries.append((path.replace(os.sep, "/"), handle.read()))
    entries.append((f"{DIST_INFO}/METADATA",
                    f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n".encode()))
    wheel_file = "Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: true\\n"
    wheel_file += "Tag: py3-none-any\\n"
    entries.append((f"{DIST_INFO}/WHEEL", wheel_file.encode()))
    record = "".join(f"{name},{_digest(data)},{len(data)}\\n" for name, data in entries)
    record += f"{DIST_INFO}/RECORD,,\\n"
    entries.append((f"{DIST_INFO}/RECORD", record.encode()))
    filename = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as wheel:
        for name, data in entries:
            wheel.writestr(name, data)
    return filename
"""

SETUPTOOLS_PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tinyworld"
version = "0.1.0"

[tool.setuptools]
packages = ["tinyworld"]

[tool.setuptools.package-data]
tinyworld = ["schema/*.sql", "fixtures/*/*"]
"""

TINY_PYPROJECT = """
[build-system]
requires = []
build-backend = "tiny_backend"
backend-path = ["_build"]

[project]
name = "tinyworld"
version = "0.1.0"
"""

CHECK_INSTALLED = """
import json
import seahaven
import tinyworld

world = tinyworld.world
report = {
    "module": tinyworld.__file__,
    "fixtures_dir": str(world.fixtures_dir),
    "listed": [fixture.id for fixture in world.fixtures()],
}
with world.instance("shipped", clock_mode="fixed") as inst:
    report["rows"] = inst.inspect().rows("SELECT id, gist FROM memos ORDER BY id")
    report["now"] = inst.clock.iso()
    try:
        inst.freeze("again", "Into the installed package.")
        report["refusal"] = None
    except seahaven.WorldBug as error:
        report["refusal"] = str(error)
print(json.dumps(report))
"""


def setuptools_builds_wheels() -> bool:
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.once_per_run  # a wheel built and installed: once for the whole run
def test_a_fixture_inside_an_installed_wheel_makes_instances(
    tmp_path: Path, importer: Importer
) -> None:
    source = tmp_path / "source"
    package = write_world_package(source, "tinyworld")
    (package / "fixtures").mkdir()
    if setuptools_builds_wheels():
        (source / "pyproject.toml").write_text(SETUPTOOLS_PYPROJECT, encoding="utf-8")
    else:
        (source / "pyproject.toml").write_text(TINY_PYPROJECT, encoding="utf-8")
        (source / "_build").mkdir()
        (source / "_build" / "tiny_backend.py").write_text(TINY_BACKEND, encoding="utf-8")

    # Freeze into the source tree, the way a world's generator does.
    world = importer(source, "tinyworld").world
    assert world.fixtures_dir == package / "fixtures"
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        with inst.bulk() as loading:
            loading.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'packed')")
        inst.freeze("shipped", "A single memo that travels in the wheel.")

    wheels = tmp_path / "wheels"
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(wheels), str(source)],
        cwd=tmp_path,
    )  # fmt: skip
    (wheel,) = wheels.glob("tinyworld-0.1.0-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {
        "tinyworld/fixtures/shipped/fixture.yaml",
        "tinyworld/fixtures/shipped/state.sqlite",
        "tinyworld/schema/001_memos.sql",
    } <= names

    target = tmp_path / "installed"
    run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--target", str(target), str(wheel)],
        cwd=tmp_path,
    )  # fmt: skip

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PYTHONPATH"] = str(target)
    output = run([sys.executable, "-c", CHECK_INSTALLED], cwd=elsewhere, env=env)
    report = json.loads(output.strip().splitlines()[-1])

    installed_package = target / "tinyworld"
    assert Path(report["module"]).parent == installed_package
    assert report["fixtures_dir"] == str(installed_package / "fixtures")
    assert report["listed"] == ["shipped"]
    assert report["rows"] == [{"id": "m1", "gist": "packed"}]
    assert report["now"] == NOW
    assert report["refusal"] is not None
    assert "installed package" in report["refusal"]
    assert "World(fixtures_dir=...)" in report["refusal"]
    assert sorted(p.name for p in (installed_package / "fixtures").iterdir()) == ["shipped"]
