"""``seahaven hub``: the files it adds to a world ``seahaven new`` made, what it refuses, and that
the result is what OpenEnv's tools and a hub expect.

Docker does not run here, so the image is not built. What is tested instead: the files'
content, ``openenv validate`` on the result, and the Dockerfile's own ``CMD`` and
``HEALTHCHECK`` commands, run as they are written (only the address moved to a free loopback
port), against the project in this interpreter.
"""

from __future__ import annotations

import json
import os
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
import yaml
from seahaven_openenv import hub
from typer.testing import CliRunner

from seahaven import cli
from seahaven.cli import scaffold

runner = CliRunner()
HUB_WRITES = {*hub.HUB_FILES, "README.md"}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return scaffold.render("notes", tmp_path).directory


def run_hub(project: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(project)
    result = runner.invoke(cli.build_app(), ["hub", *argv])
    return result.exit_code, result.stdout, result.stderr


def snapshot(project: Path) -> dict[str, bytes]:
    return {
        path.relative_to(project).as_posix(): path.read_bytes()
        for path in project.rglob("*")
        if path.is_file()
    }


def front_matter(readme: str) -> dict[str, object]:
    assert readme.startswith("---\n")
    block = readme.split("---\n", 2)[1]
    loaded: dict[str, object] = yaml.safe_load(block)
    return loaded


def test_hub_writes_the_five_files_and_the_readme_settings(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(notes)

    code, out, err = run_hub(notes, monkeypatch)

    assert (code, err) == (0, "")
    after = snapshot(notes)
    changed = {name for name in after if before.get(name) != after[name]}
    assert changed == HUB_WRITES
    assert [line.split()[1] for line in out.splitlines()[:6]] == [*hub.HUB_FILES, "README.md"]
    assert "notes.openenv_app:app" in out.splitlines()[-1]
    # Nothing half-written is left beside them.
    assert not [
        path for path in notes.iterdir() if path.name.startswith(".") and "hub" in path.name
    ]

    manifest = yaml.safe_load((notes / "openenv.yaml").read_text())
    assert manifest == {
        "spec_version": 1,
        "name": "notes",
        "version": "0.1.0",
        "type": "space",
        "runtime": "fastapi",
        "app": "notes.openenv_app:app",
        "port": 8000,
    }

    settings = front_matter((notes / "README.md").read_text())
    assert settings["sdk"] == "docker"
    assert settings["app_port"] == 8000
    assert settings["base_path"] == "/console"
    assert settings["title"] == "notes"
    assert "openenv" in settings["tags"]  # type: ignore[operator]


def test_the_connecting_section_follows_using_it(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = (notes / "README.md").read_text()
    run_hub(notes, monkeypatch)
    readme = (notes / "README.md").read_text()

    headings = [line for line in readme.splitlines() if line.startswith("## ")]
    assert headings == ["## Using it", hub.CONNECTING_HEADING, "## Layout", "## Develop"]
    assert "skip_install=True" in readme
    assert "https://<owner>-<space>.hf.space" in readme
    # The rest of the README is as it was, after the front matter.
    body = readme.split("---\n", 2)[2].lstrip("\n")
    assert body.replace(hub.connect_section().rstrip("\n") + "\n\n", "") == original


def test_the_dockerfile_installs_the_world_as_a_package_and_serves_its_app(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hub(notes, monkeypatch)
    dockerfile = (notes / "Dockerfile").read_text()
    instructions = [line for line in dockerfile.splitlines() if line and not line[0].isspace()]
    instructions = [line for line in instructions if not line.startswith("#")]

    assert instructions[0].startswith("FROM python:3.")
    # A plain install of the world and its serve extra: no checkout in the image.
    assert 'RUN pip install "/tmp/world[serve]" && rm -rf /tmp/world' in instructions
    assert "COPY src /tmp/world/src" in instructions
    assert "USER world" in instructions
    assert "EXPOSE 8000" in instructions
    assert "http://127.0.0.1:8000/health" in dockerfile.split("HEALTHCHECK", 1)[1]
    assert cmd_of(dockerfile) == [
        "uvicorn",
        "notes.openenv_app:app",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--workers",
        "1",
        "--ws-per-message-deflate",
        "false",
    ]


def cmd_of(dockerfile: str) -> list[str]:
    [line] = [line for line in dockerfile.splitlines() if line.startswith("CMD ")]
    command: list[str] = json.loads(line[len("CMD ") :])
    return command


def healthcheck_of(dockerfile: str) -> list[str]:
    text = dockerfile.split("HEALTHCHECK", 1)[1].split("\n")
    line = next(part for part in text if "CMD" in part)
    command: list[str] = json.loads(line.split("CMD", 1)[1])
    return command


def on_loopback(argv: list[str], port: int) -> list[str]:
    """The image's command with its address moved to 127.0.0.1 and a free port."""
    moved = []
    for word in argv:
        word = word.replace("0.0.0.0", "127.0.0.1")
        word = word.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        moved.append(str(port) if word == "8000" else word)
    return moved


@contextmanager
def image_command(project: Path, extra_path: str) -> Iterator[tuple[int, list[str]]]:
    """Run the Dockerfile's CMD in this interpreter's environment; yield its port."""
    dockerfile = (project / "Dockerfile").read_text()
    command = on_loopback(cmd_of(dockerfile), 0)
    executable = shutil.which(command[0], path=str(Path(sys.executable).parent))
    assert executable is not None, command[0]
    log = project.parent / "image.log"
    # An empty working directory, as the image's WORKDIR is: beside the project, uvicorn's
    # app directory (the working directory) would find the project's root __init__.py first.
    workdir = project.parent / "workdir"
    workdir.mkdir()
    env = {**os.environ, "PYTHONPATH": extra_path, "TMPDIR": str(project.parent)}
    with log.open("w") as out:
        process = subprocess.Popen(
            [executable, *command[1:]],
            cwd=workdir,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        deadline = time.monotonic() + 60
        pattern = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
        while not (found := pattern.search(log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield int(found.group(1)), on_loopback(healthcheck_of(dockerfile), int(found.group(1)))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_images_command_serves_the_world_and_its_healthcheck_passes(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hub(notes, monkeypatch)
    with image_command(notes, str(notes / "src")) as (port, healthcheck):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as answer:
            assert json.loads(answer.read()) == {"status": "healthy"}
        checked = subprocess.run(
            [sys.executable, *healthcheck[1:]], capture_output=True, timeout=60, check=False
        )
        assert checked.returncode == 0, checked.stderr
        # The README's way in: OpenEnv's generic client, with nothing of this world installed.
        from openenv import AutoEnv

        with AutoEnv.from_env(
            "owner/space", base_url=f"http://127.0.0.1:{port}", skip_install=True
        ) as env:
            env.reset(seed=7)
            tools = env.step({"type": "list_tools"}).observation["tools"]
            assert sorted(tool["name"] for tool in tools) == ["create_item", "get_item"]


def test_openenv_validate_reports_only_the_missing_reward_block(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hub(notes, monkeypatch)
    openenv = shutil.which("openenv", path=str(Path(sys.executable).parent))
    assert openenv is not None
    result = subprocess.run(
        [openenv, "validate", str(notes), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert report["signature"] == "openenv.yaml"
    failed = [check for check in report["results"] if check["status"] != "skip"]
    # The one difference the reference documents: no validation: block, because the block
    # declares a reward range and oracle and a world has no reward.
    assert [(check["check_id"], check["status"], check["evidence"]) for check in failed] == [
        ("static.manifest", "fail", ["openenv.yaml has no `validation:` block"])
    ]
    # Every other check is skipped for that reason alone, not for one of its own.
    skipped = [check for check in report["results"] if check["status"] == "skip"]
    assert skipped and all(
        check["evidence"] == ["unmet dependency: valid manifest"] for check in skipped
    )


def test_the_hub_files_pass_openenv_pushs_structure_check(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hub(notes, monkeypatch)
    from openenv.cli._cli_utils import validate_env_structure

    # Raises for a missing required file; what is left is advice about an outputs/ folder.
    assert validate_env_structure(notes) == ["Recommended directory missing: outputs/"]


def test_the_root_modules_import_and_the_worlds_tests_still_pass(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hub(notes, monkeypatch)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    imported = subprocess.run(
        [sys.executable, "-c", "import client, models; print(client.SeahavenClient.__name__)"],
        cwd=notes,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert imported.stdout.strip() == "SeahavenClient", imported.stderr
    # The root __init__.py would make pytest import the root as the package 'notes'; the
    # plugin collects it as a plain directory, so the world fixture still gets src/notes.
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=notes,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_a_second_hub_names_every_file_and_writes_nothing(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hub(notes, monkeypatch)
    before = snapshot(notes)

    code, out, err = run_hub(notes, monkeypatch)

    assert (code, out) == (1, "")
    [line] = err.splitlines()
    for name in hub.HUB_FILES:
        assert f"{name} exists" in line
    assert "README.md already has front matter" in line
    assert hub.CONNECTING_HEADING in line
    assert snapshot(notes) == before


@pytest.mark.parametrize("existing", hub.HUB_FILES)
def test_one_file_in_the_way_stops_everything(
    notes: Path, monkeypatch: pytest.MonkeyPatch, existing: str
) -> None:
    (notes / existing).write_text("mine\n")
    before = snapshot(notes)

    code, _, err = run_hub(notes, monkeypatch)

    assert code == 1
    assert f"{existing} exists" in err
    assert [name for name in hub.HUB_FILES if f"{name} exists" in err] == [existing]
    assert snapshot(notes) == before


def test_a_readme_with_front_matter_of_its_own_is_left_alone(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (notes / "README.md").write_text("---\ntitle: mine\n---\n\n# notes\n")
    before = snapshot(notes)
    code, _, err = run_hub(notes, monkeypatch)
    assert code == 1
    assert "README.md already has front matter" in err
    assert snapshot(notes) == before


def test_a_missing_readme_is_created_and_one_without_using_it_gets_the_section_at_its_end(
    notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (notes / "README.md").unlink()
    assert run_hub(notes, monkeypatch)[0] == 0
    created = (notes / "README.md").read_text()
    assert front_matter(created)["sdk"] == "docker"
    assert "# notes" in created and hub.CONNECTING_HEADING in created

    other = scaffold.render("tides", tmp_path).directory
    (other / "README.md").write_text("# tides\n\nTide tables.\n\n```md\n## Using it\n```\n")
    assert run_hub(other, monkeypatch)[0] == 0
    readme = (other / "README.md").read_text()
    assert readme.rstrip().endswith("https://<owner>-<space>.hf.space`.")
    assert readme.index("```md\n## Using it\n```") < readme.index(hub.CONNECTING_HEADING)


def test_a_project_without_an_openenv_app_is_refused(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (notes / "src" / "notes" / "openenv_app.py").unlink()
    before = snapshot(notes)
    code, _, err = run_hub(notes, monkeypatch)
    assert code == 1
    assert "src/notes/openenv_app.py is missing" in err
    assert snapshot(notes) == before


def test_outside_a_project_hub_says_where_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_hub(empty, monkeypatch)
    assert code == 1
    assert "no pyproject.toml" in err
    assert list(empty.iterdir()) == []


def test_the_project_is_read_from_pyproject_without_importing_the_world(notes: Path) -> None:
    (notes / "src" / "notes" / "__init__.py").write_text("raise RuntimeError('not imported')\n")
    project = hub.find_project(notes / "src")
    assert (project.root, project.package, project.world) == (notes, "notes", "notes")
    assert project.app == "notes.openenv_app:app"


# --- an image that builds today: the wheelhouse ---------------------------------------------------


def without_pip_settings() -> dict[str, str]:
    """This environment with no pip settings at all, so nothing but the wheelhouse is found."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def pip_install_of(dockerfile: str) -> list[str]:
    """The arguments of the Dockerfile's ``pip install``, as it writes them."""
    [line] = [line for line in dockerfile.splitlines() if line.startswith("RUN pip install ")]
    command = line[len("RUN ") :].split(" && ", 1)[0]
    return [word.strip('"') for word in command.split()][2:]


@pytest.mark.once_per_run  # every wheel of the image built and installed: once for the whole run
def test_the_wheelhouse_holds_every_wheel_the_image_installs(
    notes: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    code, out, err = run_hub(notes, monkeypatch, "--wheelhouse")
    assert code == 0, err
    assert "wrote wheels/" in out.splitlines()
    wheels = notes / "wheels"
    names = {wheel.name.split("-", 1)[0].lower() for wheel in wheels.glob("*.whl")}
    assert {"seahaven", "seahaven_openenv", "seahaven_world_notes", "fastapi", "openenv"} <= names
    dockerfile = (notes / "Dockerfile").read_text()
    assert f"FROM python:{sys.version_info.major}.{sys.version_info.minor}-slim" in dockerfile
    assert "COPY wheels /tmp/wheels" in dockerfile
    arguments = pip_install_of(dockerfile)
    assert arguments == ["--no-index", "--find-links", "/tmp/wheels", "seahaven-world-notes[serve]"]
    # Nothing was built inside the project, nor left half way.
    assert not (notes / "build").exists()
    assert not [path for path in notes.iterdir() if path.name.endswith(".hub")]

    # What the image does: a fresh environment, pip told of no index and no other wheels.
    venv = tmp_path / "image"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            # Not part of the image's command: byte-compiling was half of this install.
            "--no-compile",
            *[str(wheels) if word == "/tmp/wheels" else word for word in arguments],
        ],
        env=without_pip_settings(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # And the image's command, run from that environment, serves the world.
    command = on_loopback(cmd_of(dockerfile), 0)
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    log = tmp_path / "image.log"
    with log.open("w") as out_file:
        process = subprocess.Popen(
            [str(venv / "bin" / command[0]), *command[1:]],
            cwd=workdir,
            stdout=out_file,
            stderr=subprocess.STDOUT,
            env={**without_pip_settings(), "TMPDIR": str(tmp_path)},
        )
    try:
        deadline = time.monotonic() + 120
        pattern = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
        while not (found := pattern.search(log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        base = f"http://127.0.0.1:{found.group(1)}"
        with urllib.request.urlopen(base + "/health", timeout=10) as answer:
            assert json.loads(answer.read()) == {"status": "healthy"}
        from openenv import GenericEnvClient

        with GenericEnvClient(base_url=base) as env:
            env.reset(seed=7)
            made = env.step(
                {"type": "call_tool", "tool_name": "create_item", "arguments": {"title": "Tide"}}
            )
            assert made.observation["result"]["title"] == "Tide"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_a_wheelhouse_in_the_way_stops_everything(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (notes / "wheels").mkdir()
    before = snapshot(notes)
    code, _, err = run_hub(notes, monkeypatch, "--wheelhouse")
    assert code == 1
    assert "wheels exists" in err
    assert snapshot(notes) == before and list((notes / "wheels").iterdir()) == []


def test_a_world_without_a_serve_extra_gets_no_wheelhouse(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pyproject = notes / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(re.sub(r"(?m)^serve = .*\n", "", text))
    before = snapshot(notes)
    code, _, err = run_hub(notes, monkeypatch, "--wheelhouse")
    assert code == 1
    assert "serve extra" in err
    assert snapshot(notes) == before
