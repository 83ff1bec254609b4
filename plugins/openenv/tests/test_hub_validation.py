"""``seahaven hub`` on a world that publishes a pack: a truthful ``validation:`` block.

The project is one ``seahaven new`` made, with a pack of two scenarios added as
an author adds one (YAML in the package, a ``seahaven.scenarios`` entry point).
What is checked, with OpenEnv's own code:

- ``openenv validate --level static`` (the command) passes on what hub wrote;
- the runtime level passes its checks that need no Docker (``runtime.startup``,
  ``runtime.reward_well_formed``, ``runtime.observation_schema``,
  ``runtime.state_contract``): OpenEnv's ``run_validation`` builds nothing here,
  its provider being one that serves the project's own app with uvicorn on a
  loopback port, and runs its collector with the plan hub wrote;
- ``openenv validate --url`` (the command) passes against a running server of the pack.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from openenv.validation import Level, run_validation
from openenv.validation.providers import ExecResult, StartupError
from openenv.validation.types import ProviderCapability
from typer.testing import CliRunner

from seahaven import cli
from seahaven.cli import scaffold

_names = itertools.count()

PACK_YAML = """\
name: {name}
version: "1.0.0"
description: Keeping a list.
world: {name}
defaults:
  budget: 5
  start: {{now: "2026-06-01T09:00:00.000Z", clock_mode: fixed}}
splits:
  train: [add-milk]
  test: [count-items]
"""
TASKS_YAML = """\
- id: add-milk
  instructions: Put milk on the list.
  grader:
    all_of:
      - changed: {table: items, to: {title: milk}, op: insert}
      - nothing_else_changed: {allow: [items]}
  solution:
    - {tool: create_item, arguments: {title: milk}}

- id: count-items
  instructions: How many items are on the list? Submit the number.
  start:
    setup_sql: >-
      INSERT INTO items (id, title, created_at) VALUES
      ('a', 'eggs', '2026-06-01T08:00:00.000Z'), ('b', 'tea', '2026-06-01T08:00:00.000Z')
  grader:
    all_of:
      - answer: {number: 2}
      - nothing_else_changed
  solution:
    - {tool: submit, arguments: {answer: "2"}}
"""
SERVED_APP = '''\
"""The world served over OpenEnv with its pack of scenarios."""

import seahaven.openenv

from {name} import world
from {name}.packs import pack

app = seahaven.openenv.app(world, scenarios=pack())
'''


def project_with_pack(tmp_path: Path, *, served: bool) -> Path:
    """A new world's project (a name no other test imported) publishing the pack ``<name>``."""
    name = f"shelf{os.getpid()}x{next(_names)}"
    root = scaffold.render(name, tmp_path).directory
    package = root / "src" / name
    folder = package / "scenarios"
    folder.mkdir()
    (folder / "pack.yaml").write_text(PACK_YAML.format(name=name), encoding="utf-8")
    (folder / "tasks.yaml").write_text(TASKS_YAML, encoding="utf-8")
    (package / "packs.py").write_text(
        textwrap.dedent(
            f'''\
            """The pack of scenarios this world publishes."""

            from seahaven.scenarios import ScenarioSet


            def pack() -> ScenarioSet:
                """The YAML pack in scenarios/."""
                return ScenarioSet.from_package("{name}", "scenarios")
            '''
        ),
        encoding="utf-8",
    )
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8")
        + f'\n[project.entry-points."seahaven.scenarios"]\n{name} = "{name}.packs:pack"\n',
        encoding="utf-8",
    )
    if served:
        (package / "openenv_app.py").write_text(SERVED_APP.format(name=name), encoding="utf-8")
    return root


def run_hub(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli.build_app(), ["hub"])
    return result.exit_code, result.stdout, result.stderr


def openenv_command() -> str:
    found = shutil.which("openenv", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


def validate_static(project: Path) -> dict[str, Any]:
    result = subprocess.run(
        [openenv_command(), "validate", str(project), "--level", "static", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_hub_declares_the_reward_a_pack_grades_and_openenv_validate_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_with_pack(tmp_path, served=False)
    name = project.name
    code, out, err = run_hub(project, monkeypatch)
    assert code == 0, err
    assert "wrote validation/runtime.json" in out
    assert f"note: {name}.openenv_app:app serves no pack" in err

    manifest = yaml.safe_load((project / "openenv.yaml").read_text())
    validation = manifest["validation"]
    # Measured: doing nothing scores 0 on both tasks, and both reference solutions score 1.
    assert validation["reward"] == {
        "range": [0.0, 1.0],
        "oracle_tolerance": 0.0,
        "floor_margin": 1.0,
    }
    # The app serves no pack, so no Task API is declared.
    assert validation["capabilities"] == {"verifier": {"kind": "reward_channel"}}
    assert validation["execution"]["probe_path"] == "validation/runtime.json"

    plan = json.loads((project / "validation" / "runtime.json").read_text())
    assert plan["reset"]["options"] == {"scenario": f"{name}/add-milk"}
    assert plan["actions"] == [
        {"type": "call_tool", "tool_name": "create_item", "arguments": {"title": "milk"}},
        {"type": "finish"},
    ]

    report = validate_static(project)
    assert [(r["check_id"], r["status"]) for r in report["results"]] == [
        ("static.manifest", "pass")
    ]


def test_an_app_serving_the_pack_declares_its_task_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_with_pack(tmp_path, served=True)
    code, _, err = run_hub(project, monkeypatch)
    assert code == 0, err
    assert "note:" not in err
    validation = yaml.safe_load((project / "openenv.yaml").read_text())["validation"]
    assert validation["capabilities"] == {
        "verifier": {"kind": "reward_channel"},
        "task_api": True,
        "declared_task_count": {"train": 1, "test": 1},
    }
    plan = json.loads((project / "validation" / "runtime.json").read_text())
    assert plan["reset"]["options"] == {"split": "train", "index": 0}
    assert validate_static(project)["results"][0]["status"] == "pass"


def test_a_project_without_a_pack_still_gets_no_validation_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = scaffold.render(f"plain{os.getpid()}x{next(_names)}", tmp_path).directory
    code, _, err = run_hub(project, monkeypatch)
    assert (code, err) == (0, "")
    assert "validation" not in yaml.safe_load((project / "openenv.yaml").read_text())
    assert not (project / "validation").exists()


def test_a_runtime_plan_in_the_way_stops_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_with_pack(tmp_path, served=False)
    (project / "validation").mkdir()
    (project / "validation" / "runtime.json").write_text("{}")
    code, _, err = run_hub(project, monkeypatch)
    assert code == 1 and "validation/runtime.json exists" in err
    assert not (project / "openenv.yaml").exists()


# --- the runtime checks, with OpenEnv's runner and a provider that needs no Docker ---------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def installed_metadata(root: Path, site: Path) -> None:
    """What installing the project leaves beside its code: a dist-info with its entry points."""
    import tomllib

    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in entries.items())
            for group, entries in groups.items()
        )
    )


class LoopbackSubject:
    """The project's app under uvicorn in a child process, as the image's CMD serves it.

    The child sees the project as installed: its source, and its distribution's
    metadata (so its pack is found by name, as in the image).
    """

    def __init__(self, root: Path, app: str) -> None:
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        site = root.parent / f"{root.name}-site"
        if not site.exists():
            installed_metadata(root, site)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(site)])}
        env.pop("PYTEST_ADDOPTS", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise StartupError("the project's app did not answer /health")
            time.sleep(0.1)

    def inspect(self) -> dict[str, Any]:
        return {"pid": self.process.pid}

    def logs(self, max_bytes: int = 65536) -> str:
        return ""

    def exec(self, argv: list[str], timeout_s: float) -> ExecResult:
        raise NotImplementedError("no exec in a loopback subject")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class LoopbackProvider:
    """A validation provider that builds nothing and serves the project's app on loopback."""

    name = "loopback"
    capabilities = frozenset({ProviderCapability.IMAGE_BUILD})
    supported_network_modes = frozenset({"public"})

    def __init__(self, app: str) -> None:
        self.app = app
        self.root: Path | None = None

    def build(self, root: Path, execution: Any) -> str:
        self.root = root
        return "sha256:" + hashlib.sha256(str(root).encode()).hexdigest()

    def start(self, spec: Any) -> LoopbackSubject:
        assert self.root is not None
        return LoopbackSubject(self.root, self.app)


RUNTIME_CHECKS = (
    "runtime.startup",
    "runtime.reward_well_formed",
    "runtime.observation_schema",
    "runtime.state_contract",
)


@pytest.mark.parametrize("served", [False, True], ids=["by-scenario", "by-split-and-index"])
def test_the_runtime_checks_that_need_no_docker_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: bool
) -> None:
    project = project_with_pack(tmp_path, served=served)
    code, _, err = run_hub(project, monkeypatch)
    assert code == 0, err
    report = run_validation(
        project,
        max_level=Level.RUNTIME,
        provider=LoopbackProvider(f"{project.name}.openenv_app:app"),
        artifacts_dir=tmp_path / "artifacts",
    )
    statuses = {result.check_id: result for result in report.results}
    for check in RUNTIME_CHECKS:
        assert statuses[check].status.value == "pass", (check, statuses[check].evidence)
    # What it measured, as OpenEnv's bundle keeps it: the reset, then each step, paying the
    # grade's score on the last.
    trace = json.loads((tmp_path / "artifacts" / "collector-trace.json").read_text())
    rewards = [
        row["response_json"]["data"]["reward"]
        for row in trace
        if row["operation"] in ("reset", "step")
    ]
    assert rewards == [None, 0.0, 1.0]
    assert [row["operation"] for row in trace] == [
        "reset",
        "state",
        "step",
        "state",
        "step",
        "state",
    ]


def test_openenv_validate_url_passes_against_a_served_pack(serving) -> None:
    import depot

    world = depot.make_depot()
    server = serving(world, scenarios=[depot.make_pack(world)])
    result = subprocess.run(
        [openenv_command(), "validate", "--url", server.base_url],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Verdict: PASS" in result.stdout
