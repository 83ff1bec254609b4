"""Install the shipped worlds from a package index, the way a user of a published world would.

The test builds wheels of ``seahaven``, of the four worlds and of the
first-party plugins from this checkout, lays them out as a PEP 503 index on
disk, makes a fresh virtual environment, and installs
``seahaven-world-company``, ``seahaven-world-projecttracker`` and ``seahaven[ray]`` from that
index, with the usual registry as an extra index for third-party packages (Ray among them). It
checks that the framework and every world came from the local index, then drives the
installed ``seahaven`` console script: ``worlds list`` names the four worlds,
``fixture create company acme`` works from the installed package, whose
fixtures travelled in the wheel, the reference world's examples run against its installed
fixtures, and ``episodes run`` (the Ray plugin's
command) runs the same episodes in process and on a local Ray cluster whose
workers find the world in the installed wheels. Nothing is cached between runs: every
wheel, the index and the environment are made in ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORLDS = ("payments", "chat", "company", "projecttracker")
PLUGINS = ("openenv", "ray")
TARGET = "seahaven-world-company"
# The world with its serve extra (which brings seahaven[serve]), and the Ray plugin.
TARGET_WITH_EXTRAS = "seahaven-world-company[serve]"
EXTRA = "seahaven[ray]"
TARGET_WORLD = "company"
TARGET_FIXTURE = "acme"
# The reference documentation's world, installed from its own wheel beside the company.
REFERENCE_WORLD = "seahaven-world-projecttracker"

# Build output and local state a copy of a project must not carry into a wheel.
IGNORED = shutil.ignore_patterns(
    "__pycache__",
    "*.pyc",
    "*.egg-info",
    "build",
    "dist",
    ".venv",
    ".tox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".pending-*",
)


def missing_worlds() -> list[str]:
    return [name for name in WORLDS if not (ROOT / "worlds" / name / "pyproject.toml").is_file()]


pytestmark = [
    pytest.mark.skipif(
        bool(missing_worlds()),
        reason=f"worlds/{', worlds/'.join(missing_worlds())} not written yet; the index test "
        "installs all four worlds",
    ),
    # Nothing here depends on the interpreter: the 3.11 pass runs it for the whole run.
    pytest.mark.once_per_run,
]


def normalize(name: str) -> str:
    """A project name as PEP 503 spells it in an index."""
    return re.sub(r"[-_.]+", "-", name).lower()


def run(argv: list[str], *, cwd: Path | None = None, timeout: float = 600) -> str:
    """Run a command, failing the test with its output if it fails; return its stdout."""
    result = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(argv)} exited {result.returncode}\n--- stdout\n{result.stdout}\n"
            f"--- stderr\n{result.stderr}",
            pytrace=False,
        )
    return result.stdout


def copy_sources(destination: Path) -> list[Path]:
    """Copy the framework and each world to ``destination``, so builds never touch the checkout."""
    core = destination / "seahaven"
    core.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, core / name)
    # The package links to docs/, and the copy keeps the link, so the wheel carries the docs.
    shutil.copytree(ROOT / "seahaven", core / "seahaven", symlinks=True, ignore=IGNORED)
    shutil.copytree(ROOT / "docs", core / "docs", ignore=IGNORED)
    projects = [core]
    for world in WORLDS:
        target = destination / f"world-{world}"
        shutil.copytree(ROOT / "worlds" / world, target, symlinks=True, ignore=IGNORED)
        projects.append(target)
    for plugin in PLUGINS:
        target = destination / f"plugin-{plugin}"
        shutil.copytree(ROOT / "plugins" / plugin, target, symlinks=True, ignore=IGNORED)
        projects.append(target)
    return projects


def build_wheels(projects: list[Path], wheels: Path) -> list[Path]:
    """Build a wheel of each project copy, with this environment's setuptools (the test extra's).

    Without build isolation pip makes no throwaway environment per project; the
    backend is the one each project names, so the wheels are the same.
    """
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            *map(str, projects),
        ]
    )
    built = sorted(wheels.glob("*.whl"))
    assert len(built) == len(projects), built
    return built


def wheel_project(wheel: Path) -> tuple[str, str]:
    """The (normalised name, version) a wheel's file name declares."""
    name, version = wheel.name.split("-")[:2]
    return normalize(name), version


def write_index(index: Path, wheels: list[Path]) -> str:
    """Lay ``wheels`` out as a PEP 503 simple index under ``index``; return its URL."""
    files = index / "files"
    files.mkdir(parents=True)
    by_project: dict[str, list[Path]] = {}
    for wheel in wheels:
        shutil.copy2(wheel, files / wheel.name)
        by_project.setdefault(wheel_project(wheel)[0], []).append(files / wheel.name)
    simple = index / "simple"
    simple.mkdir()
    links = []
    for project, project_files in sorted(by_project.items()):
        page = simple / project
        page.mkdir()
        anchors = []
        for file in project_files:
            digest = hashlib.sha256(file.read_bytes()).hexdigest()
            href = html.escape(f"../../files/{file.name}#sha256={digest}")
            anchors.append(f'<a href="{href}">{html.escape(file.name)}</a><br/>')
        (page / "index.html").write_text(_page(project, anchors), encoding="utf-8")
        links.append(f'<a href="{project}/">{project}</a><br/>')
    (simple / "index.html").write_text(_page("Simple index", links), encoding="utf-8")
    return simple.as_uri()


def _page(title: str, lines: list[str]) -> str:
    body = "\n".join(lines)
    return (
        f"<!DOCTYPE html>\n<html><head><title>{html.escape(title)}</title></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def usual_registry() -> str:
    """The index pip uses when told nothing: the environment's choice, else PyPI."""
    return os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"


def install(venv: Path, index_url: str, report: Path) -> dict[str, Any]:
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            # Byte-compiling every installed module (Ray's among them) was over a third of
            # the install; the modules the test runs are compiled as they are imported.
            "--no-compile",
            "--disable-pip-version-check",
            "--quiet",
            "--report",
            str(report),
            "--index-url",
            index_url,
            "--extra-index-url",
            usual_registry(),
            TARGET_WITH_EXTRAS,
            REFERENCE_WORLD,
            EXTRA,
        ]
    )
    loaded: dict[str, Any] = json.loads(report.read_text())
    return loaded


def installed_dist_info(venv: Path, project: str, version: str) -> Path:
    pattern = f"lib/python*/site-packages/{project.replace('-', '_')}-{version}.dist-info"
    found = list(venv.glob(pattern))
    assert len(found) == 1, (pattern, found)
    return found[0]


def test_the_company_world_installs_from_an_index_and_runs(tmp_path: Path) -> None:
    projects = copy_sources(tmp_path / "src")
    wheels = build_wheels(projects, tmp_path / "wheels")
    local = dict(wheel_project(wheel) for wheel in wheels)
    assert set(local) == {
        "seahaven",
        *(f"seahaven-world-{world}" for world in WORLDS),
        *(f"seahaven-{plugin}" for plugin in PLUGINS),
    }
    index_url = write_index(tmp_path / "index", wheels)
    venv = tmp_path / "venv"

    report = install(venv, index_url, tmp_path / "report.json")

    # The framework and every world came from the local index, as plain index installs, in
    # the versions just built; the rest (pydantic and friends) came from elsewhere.
    files_url = (tmp_path / "index" / "files").as_uri()
    chosen = {normalize(item["metadata"]["name"]): item for item in report["install"]}
    for project, version in local.items():
        assert project in chosen, f"{project} was not installed"
        item = chosen[project]
        assert item["download_info"]["url"].startswith(files_url + "/"), (project, item)
        assert item["is_direct"] is False
        assert item["metadata"]["version"] == version
        assert not (installed_dist_info(venv, project, version) / "direct_url.json").exists()
    assert chosen[TARGET]["requested"] is True
    assert chosen[REFERENCE_WORLD]["requested"] is True
    others = [item for name, item in chosen.items() if name not in local]
    assert any(normalize(item["metadata"]["name"]) == "pydantic" for item in others)
    assert any(normalize(item["metadata"]["name"]) == "ray" for item in others)
    assert any(normalize(item["metadata"]["name"]) == "openenv" for item in others)
    assert all(not item["download_info"]["url"].startswith(files_url) for item in others)

    script = venv / "bin" / "seahaven"
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()

    listed = json.loads(run([str(script), "worlds", "list", "--json"], cwd=workdir))
    by_name = {item["name"]: item for item in listed}
    assert set(WORLDS) <= set(by_name)
    for world in WORLDS:
        assert by_name[world]["distribution"] == f"seahaven-world-{world}"
        assert by_name[world]["problems"] == []
    assert by_name[TARGET_WORLD]["fixtures"] >= 1
    table = run([str(script), "worlds", "list"], cwd=workdir)
    assert {line.split()[0] for line in table.splitlines()[1:]} >= set(WORLDS)

    shown = json.loads(run([str(script), "worlds", "show", TARGET_WORLD, "--json"], cwd=workdir))
    expected_files = [node["file"] for node in shown["nodes"]]
    assert len(expected_files) >= 3
    into = tmp_path / "created"
    created = run(
        [str(script), "fixture", "create", TARGET_WORLD, TARGET_FIXTURE, "--into", str(into)],
        cwd=workdir,
    )
    assert [Path(line.split("\t")[0]).name for line in created.splitlines()] == expected_files
    for name in expected_files:
        assert (into / name).read_bytes()[:16] == b"SQLite format 3\x00"
    assert sorted(path.name for path in into.iterdir()) == sorted(expected_files)

    verified = run([str(script), "fixture", "verify", TARGET_WORLD], cwd=workdir)
    assert f"{TARGET_FIXTURE}: ok" in verified.splitlines()

    docs = Path(run([str(script), "docs"], cwd=workdir).strip())
    assert venv in docs.parents
    assert (docs / "publishing.md").is_file()

    reference_world(venv, workdir)
    episodes_run(venv, tmp_path)
    served(venv, tmp_path)


REFERENCE_EPISODE = """
import projecttracker

with projecttracker.world.instance("small_startup", clock_mode="fixed") as tracker:
    opened = tracker.call("get_issue", key="ENG-4")
    tracker.call("transition_issue", issue_id=opened["id"], status="canceled")
    document = tracker.state()
with projecttracker.world.instance("agency", seed=7) as tracker:
    found = tracker.call("search_issues", query="billing", limit=3)["issues"]
print(projecttracker.__file__)
print(document["fixture"]["id"], document["world"]["version"], len(found))
"""


def reference_world(venv: Path, workdir: Path) -> None:
    """projecttracker from its wheel: its fixtures travelled, and the documented calls work."""
    printed = run([str(venv / "bin" / "python"), "-c", REFERENCE_EPISODE], cwd=workdir)
    location, summary = printed.strip().splitlines()
    assert venv in Path(location).parents
    assert summary == "small_startup 1.0.0 3"
    verified = run([str(venv / "bin" / "seahaven"), "fixture", "verify", "projecttracker"])
    assert sorted(verified.splitlines()) == ["agency: ok", "empty: ok", "small_startup: ok"]


SERVED_EPISODE = """
import json, sys
from websockets.sync.client import connect

with connect(sys.argv[1] + "/ws") as ws:
    ws.send(json.dumps({"type": "reset", "data": {"fixture": "acme", "seed": 1}}))
    reset = json.loads(ws.recv())
    ws.send(json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "whoami",
                                                 "arguments": {}}}))
    call = json.loads(ws.recv())
    print(json.dumps({"reset": reset, "call": call}))
"""


def served(venv: Path, tmp_path: Path) -> None:
    """The serving plugin, installed by the world's serve extra: seahaven serve from the wheels."""
    log = tmp_path / "serve.log"
    script = venv / "bin" / "seahaven"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(script), "serve", "--world", TARGET_WORLD, "--port", "0", "--no-console"],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
    try:
        deadline = time.monotonic() + 120
        while not (found := re.search(r"at (http://127\.0\.0\.1:\d+)", log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        base = found.group(1)
        replies = json.loads(
            run([str(venv / "bin" / "python"), "-c", SERVED_EPISODE, base.replace("http", "ws")])
        )
    finally:
        process.terminate()
        process.wait(timeout=60)
    assert replies["reset"]["data"]["metadata"]["fixture"] == TARGET_FIXTURE
    assert replies["call"]["data"]["observation"]["error"] is None


def episodes_run(venv: Path, tmp_path: Path) -> None:
    """The Ray plugin's command, installed by seahaven[ray]: in process, then on a local cluster."""
    python = venv / "bin" / "python"
    imported = run(
        [
            str(python),
            "-c",
            "import seahaven.ray, seahaven_ray; print(seahaven.ray is seahaven_ray)",
        ]
    )
    assert imported.strip() == "True"
    episodes = tmp_path / "episodes.jsonl"
    calls = [{"tool": "whoami", "arguments": {}}, {"tool": "pay_get_balance", "arguments": {}}]
    episodes.write_text(
        "".join(
            json.dumps(
                {
                    "episode_id": f"e{n}",
                    "fixture": TARGET_FIXTURE,
                    "seed": n,
                    "clock_mode": "tick",
                    "calls": calls,
                }
            )
            + "\n"
            for n in range(3)
        ),
        encoding="utf-8",
    )
    script = venv / "bin" / "seahaven"
    documents = []
    for label, extra in (("here", []), ("ray", ["--ray", "local", "--workers", "1"])):
        out = tmp_path / f"results-{label}.jsonl"
        argv = [str(script), "episodes", "run", TARGET_WORLD, "--episodes", str(episodes)]
        printed = run([*argv, "--out", str(out), *extra], cwd=tmp_path, timeout=300)
        assert "3 episodes run (3 ok, 0 failed)" in printed
        results = sorted(
            (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()),
            key=lambda result: result["episode_id"],
        )
        documents.append(
            [
                {key: value for key, value in result["state"].items() if key != "episode_id"}
                for result in results
            ]
        )
        assert all(
            result["worker"].startswith("ray actor" if label == "ray" else "in-process")
            for result in results
        )
    assert documents[0] == documents[1]
