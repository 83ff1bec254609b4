"""From nothing to a served, published world, in a fresh virtual environment, as an author works.

The test builds wheels of ``seahaven`` and of the serving plugin from this checkout, lays them
out as a package index on disk, and installs the plugin from it into a new virtual environment
(third-party packages come from the usual registry, through pip's cache). Then, with that
environment's own commands:

1. ``seahaven new tidepool`` scaffolds a world from the templates inside the installed wheel,
   and ``pip install -e "tidepool[serve,test]"`` installs it as an author does;
2. the world's own tests pass, ``seahaven check`` is clean and ``seahaven worlds list`` names it;
3. ``seahaven fixture freeze`` builds a fixture with the scaffold's generator;
4. ``seahaven serve --world tidepool`` answers ``/health`` and a reset from that fixture;
5. ``seahaven hub`` writes its files, and a second ``seahaven hub`` writes nothing and names
   them; ``openenv validate`` reports only the missing reward block; the Dockerfile's ``CMD``
   and ``HEALTHCHECK``, run as written on a loopback port, serve the world.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_install_from_index import IGNORED, ROOT, build_wheels, usual_registry, write_index

WORLD = "tidepool"
NOW = "2026-06-01T09:00:00.000Z"
PIP_TIMEOUT = 900
ADDRESS = re.compile(r"at (http://127\.0\.0\.1:\d+)")

SERVED_EPISODE = """
import json, sys
from websockets.sync.client import connect

with connect(sys.argv[1] + "/ws", open_timeout=30) as ws:
    ws.send(json.dumps({"type": "reset", "data": {"fixture": "starter", "seed": 1}}))
    reset = json.loads(ws.recv(timeout=30))
    ws.send(json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "create_item",
                                                 "arguments": {"title": "Check the tide"}}}))
    call = json.loads(ws.recv(timeout=30))
    print(json.dumps({"reset": reset, "call": call}))
"""


def run(
    argv: list[str], *, cwd: Path, timeout: float = 300, expect: int = 0
) -> subprocess.CompletedProcess[str]:
    """Run a command of the new environment; fail the test with its output if it exits wrongly."""
    result = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == expect, (
        f"{' '.join(argv)} exited {result.returncode}, not {expect}\n--- stdout\n{result.stdout}"
        f"\n--- stderr\n{result.stderr}"
    )
    return result


def copy_framework_and_plugin(destination: Path) -> list[Path]:
    core = destination / "seahaven"
    core.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, core / name)
    shutil.copytree(ROOT / "seahaven", core / "seahaven", symlinks=True, ignore=IGNORED)
    shutil.copytree(ROOT / "docs", core / "docs", ignore=IGNORED)
    plugin = destination / "plugin-openenv"
    shutil.copytree(ROOT / "plugins" / "openenv", plugin, symlinks=True, ignore=IGNORED)
    return [core, plugin]


def pip_install(venv: Path, index_url: str, *requirements: str, cwd: Path) -> None:
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--disable-pip-version-check",
            "--quiet",
            "--index-url",
            index_url,
            "--extra-index-url",
            usual_registry(),
            *requirements,
        ],
        cwd=cwd,
        timeout=PIP_TIMEOUT,
    )


@contextmanager
def background(argv: list[str], *, cwd: Path, log: Path, ready: re.Pattern[str]) -> Iterator[str]:
    """Run a server until the block ends; yield the first group ``ready`` finds in its output."""
    with log.open("w") as out:
        process = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not (found := ready.search(log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def snapshot(project: Path) -> dict[str, bytes]:
    return {
        path.relative_to(project).as_posix(): path.read_bytes()
        for path in project.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and ".egg-info" not in str(path)
    }


# An install into a fresh environment: the 3.11 pass runs it for the whole run.
@pytest.mark.once_per_run
def test_a_new_world_installs_tests_serves_and_publishes(tmp_path: Path) -> None:
    wheels = build_wheels(copy_framework_and_plugin(tmp_path / "src"), tmp_path / "wheels")
    index_url = write_index(tmp_path / "index", wheels)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    pip_install(venv, index_url, "seahaven-openenv", cwd=tmp_path)
    bin_dir = venv / "bin"
    seahaven, python = str(bin_dir / "seahaven"), str(bin_dir / "python")

    # 1. Scaffold from the installed templates, and install the world as an author does.
    created = run([seahaven, "new", WORLD, "--dir", str(tmp_path)], cwd=tmp_path)
    project = tmp_path / WORLD
    assert f"Created the world '{WORLD}' in {project}" in created.stdout
    pip_install(venv, index_url, "-e", f"{project}[serve,test]", cwd=tmp_path)

    # 2. Its tests pass, the lints are clean, and the registry names it.
    tested = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project)
    assert "5 passed" in tested.stdout
    checked = run([seahaven, "check"], cwd=project)
    assert checked.stdout == "no findings: every lint passed\n"
    listed = json.loads(run([seahaven, "worlds", "list", "--json"], cwd=tmp_path).stdout)
    [entry] = [item for item in listed if item["name"] == WORLD]
    assert entry["distribution"] == f"seahaven-world-{WORLD}"
    assert (entry["tools"], entry["problems"]) == (2, [])

    # 3. A fixture frozen with the scaffold's generator, into the package.
    run(
        [
            seahaven,
            "fixture",
            "freeze",
            "starter",
            "--run",
            "fixtures_src.generate:starter",
            "--now",
            NOW,
            "--description",
            "Three items, two with a note.",
        ],
        cwd=project,
    )
    fixture_dir = project / "src" / WORLD / "fixtures" / "starter"
    assert sorted(path.name for path in fixture_dir.iterdir()) == ["fixture.yaml", "state.sqlite"]
    listed_fixtures = run([seahaven, "fixture", "list", "--world", WORLD], cwd=tmp_path).stdout
    assert listed_fixtures.startswith("starter\t-\t")

    # The generator itself rebuilds every fixture, and refuses a name it does not build.
    rebuilt = run([python, "fixtures_src/generate.py"], cwd=project).stdout.splitlines()
    assert [line.split(":")[0] for line in rebuilt] == ["built empty", "built starter"]
    refused = run([python, "fixtures_src/generate.py", "nope"], cwd=project, expect=2)
    assert refused.stderr == "unknown fixture nope; known: empty, starter\n"

    # 4. Served: /health, and a reset from the new fixture with a tool call after it.
    serve = [seahaven, "serve", "--world", WORLD, "--port", "0", "--no-console"]
    with background(serve, cwd=tmp_path, log=tmp_path / "serve.log", ready=ADDRESS) as base:
        assert get_json(base + "/health") == {"status": "healthy"}
        replies = json.loads(
            run([python, "-c", SERVED_EPISODE, base.replace("http", "ws", 1)], cwd=tmp_path).stdout
        )
    assert replies["reset"]["data"]["metadata"]["fixture"] == "starter"
    observation = replies["call"]["data"]["observation"]
    assert observation["error"] is None
    assert observation["result"]["title"] == "Check the tide"

    # 5. Published: the hub files, once; openenv's verdict; the image's own commands.
    before = snapshot(project)
    written = run([seahaven, "hub"], cwd=project).stdout.splitlines()
    assert [line.split()[-1] for line in written[:6]] == [
        "openenv.yaml",
        "Dockerfile",
        "__init__.py",
        "client.py",
        "models.py",
        "README.md",
    ]
    after = snapshot(project)
    assert {name for name in after if after[name] != before.get(name)} == {
        "openenv.yaml",
        "Dockerfile",
        "__init__.py",
        "client.py",
        "models.py",
        "README.md",
    }
    again = run([seahaven, "hub"], cwd=project, expect=1)
    assert again.stdout == ""
    for name in ("openenv.yaml", "Dockerfile", "__init__.py", "client.py", "models.py"):
        assert f"{name} exists" in again.stderr
    assert snapshot(project) == after

    report = json.loads(
        run(
            [str(bin_dir / "openenv"), "validate", str(project), "--json"], cwd=tmp_path, expect=1
        ).stdout
    )
    # The reference's one documented difference: no validation: block (it declares a reward,
    # and a world has none). Every other check is skipped because of it.
    results = report["results"]
    assert [(r["check_id"], r["evidence"]) for r in results if r["status"] != "skip"] == [
        ("static.manifest", ["openenv.yaml has no `validation:` block"])
    ]
    assert all(r["evidence"] == ["unmet dependency: valid manifest"] for r in results[1:])

    dockerfile = (project / "Dockerfile").read_text()
    [cmd_line] = [line for line in dockerfile.splitlines() if line.startswith("CMD ")]
    command = json.loads(cmd_line[len("CMD ") :])
    assert command[:2] == ["uvicorn", f"{WORLD}.openenv_app:app"]
    # The image's command on a loopback address and a free port, from an empty directory as the
    # image's WORKDIR is; the world is installed, as it is in the image.
    moved = [
        "127.0.0.1" if word == "0.0.0.0" else "0" if word == "8000" else word for word in command
    ]
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    uvicorn_ready = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")
    with background(
        [str(bin_dir / moved[0]), *moved[1:]],
        cwd=workdir,
        log=tmp_path / "image.log",
        ready=uvicorn_ready,
    ) as base:
        assert get_json(base + "/health") == {"status": "healthy"}
        health = dockerfile.split("HEALTHCHECK", 1)[1]
        check_line = next(line for line in health.splitlines() if "CMD" in line)
        healthcheck = json.loads(check_line.split("CMD", 1)[1])
        port = base.rsplit(":", 1)[1]
        probe = [word.replace("127.0.0.1:8000", f"127.0.0.1:{port}") for word in healthcheck]
        run([python, *probe[1:]], cwd=workdir)
        runtime = run([str(bin_dir / "openenv"), "validate", "--url", base], cwd=tmp_path)
        assert "Verdict: PASS" in runtime.stdout
