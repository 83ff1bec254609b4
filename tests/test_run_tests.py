"""The test command's own machinery: xdist for the 3.11 pass, ``once_per_run`` once per run.

``scripts/run_tests.py`` reads two variables (``SEAHAVEN_TEST_WORKERS``,
``SEAHAVEN_SKIP_ONCE_PER_RUN``); ``./scripts/test`` and ``tox.ini`` set them. These tests
run real pytest sessions with the arguments the runner gives, so a wrong option name or
a marker nobody registered fails here rather than in a run of an hour.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent


def load_runner() -> ModuleType:
    path = REPOSITORY / "scripts" / "run_tests.py"
    spec = importlib.util.spec_from_file_location("run_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


runner = load_runner()

SESSION = """
import os
from pathlib import Path

import pytest


def record() -> None:
    with Path("workers.txt").open("a") as file:
        file.write(os.environ.get("PYTEST_XDIST_WORKER", "none") + "\\n")


@pytest.mark.once_per_run
def test_an_install() -> None:
    record()


def test_an_ordinary_test() -> None:
    record()


def test_another() -> None:
    record()
"""


def workers_seen(project: Path) -> list[str]:
    return (project / "workers.txt").read_text(encoding="utf-8").splitlines()


# The sessions here need none of the installed plugins but xdist: leaving the heavy ones
# out saves a second of start-up per process.
LEAN = [f"-pno:{plugin}" for plugin in ("cacheprovider", "seahaven", "hypothesispytest", "anyio")]


def run_session(project: Path, arguments: list[str]) -> subprocess.CompletedProcess[str]:
    # Not this session's own settings: PYTEST_ADDOPTS, nor (when this run is itself spread
    # by xdist) PYTEST_XDIST_WORKER, which would tell the inner session it is a worker.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *LEAN, "-rA", *arguments],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_session.py").write_text(SESSION, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nmarkers = ["once_per_run: once"]\n', encoding="utf-8"
    )
    return tmp_path


def test_by_default_a_session_gets_the_callers_arguments_only() -> None:
    assert runner.session_arguments(["-x", "-k", "foo"], {}) == ["-x", "-k", "foo"]
    assert runner.session_arguments([], {"SEAHAVEN_TEST_WORKERS": "1"}) == []


def test_skipping_once_per_run_deselects_those_tests_in_a_real_session(project: Path) -> None:
    arguments = runner.session_arguments([], {"SEAHAVEN_SKIP_ONCE_PER_RUN": "1"})
    result = run_session(project, arguments)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed, 1 deselected" in result.stdout
    assert "test_an_install" not in result.stdout

    everything = run_session(project, runner.session_arguments([], {}))
    assert "3 passed" in everything.stdout and "PASSED tests/test_session.py::test_an_install" in (
        everything.stdout
    )


def test_a_callers_marker_expression_is_narrowed_not_replaced(project: Path) -> None:
    arguments = runner.session_arguments(
        ["-m", "not nothing_marked"], {"SEAHAVEN_SKIP_ONCE_PER_RUN": "1"}
    )
    assert arguments == ["-m", "(not nothing_marked) and not once_per_run"]
    result = run_session(project, arguments)
    assert "2 passed, 1 deselected" in result.stdout, result.stdout + result.stderr


def test_workers_spread_a_session_over_xdist_processes(project: Path) -> None:
    arguments = runner.session_arguments([], {"SEAHAVEN_TEST_WORKERS": "2"})
    assert arguments[:2] == ["-n", "2"]
    result = run_session(project, arguments)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
    # In xdist's processes, and a file at a time: the one file's tests all ran in one of them.
    [worker] = set(workers_seen(project))
    assert re.fullmatch(r"gw[01]", worker)
    assert len(workers_seen(project)) == 3

    run_session(project, runner.session_arguments([], {}))
    assert workers_seen(project)[3:] == ["none"] * 3


def test_the_ray_worlds_and_examples_sessions_stay_in_one_process() -> None:
    by_label = {label: directory for label, directory, _ in runner.sessions()}
    spread = {label for label, directory in by_label.items() if runner.spread(directory)}
    assert {"framework", "plugin openenv", "plugin mcp"} <= spread
    assert "plugin ray" in by_label and "plugin ray" not in spread
    assert not {label for label in spread if label.startswith(("world ", "example "))}
    many = {"SEAHAVEN_TEST_WORKERS": "2"}
    assert runner.session_arguments(["-x"], many, may_spread=False) == ["-x"]


def test_a_worker_count_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(SystemExit, match="SEAHAVEN_TEST_WORKERS must be a whole number"):
        runner.session_arguments([], {"SEAHAVEN_TEST_WORKERS": "two"})


def test_the_other_interpreters_skip_once_per_run_and_311_does_not() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPOSITORY / "tox.ini", encoding="utf-8")

    def variables(section: str) -> dict[str, str]:
        lines = tox.get(section, "set_env", fallback="").strip().splitlines()
        return dict(tuple(part.strip() for part in line.split("=", 1)) for line in lines if line)

    for environment in ("py312", "py313"):
        assert variables(f"testenv:{environment}")[runner.SKIP_ONCE_VARIABLE] == "1"
    assert runner.SKIP_ONCE_VARIABLE not in variables("testenv")
    assert not tox.has_section("testenv:py311")
    # The 3.11 pass spreads over the cores, and only it: tox passes no worker count on.
    script = (REPOSITORY / "scripts" / "test").read_text(encoding="utf-8")
    assert 'SEAHAVEN_TEST_WORKERS="${SEAHAVEN_TEST_WORKERS:-$(nproc' in script
    assert runner.WORKERS_VARIABLE not in tox.get("testenv", "pass_env")


def test_every_session_that_marks_once_per_run_registers_the_marker() -> None:
    marking = 0
    for _, directory, targets in runner.sessions():
        files = [path for target in targets for path in (directory / target).rglob("*.py")]
        if not any("mark.once_per_run" in path.read_text(encoding="utf-8") for path in files):
            continue
        marking += 1
        with (directory / "pyproject.toml").open("rb") as file:
            options = tomllib.load(file)["tool"]["pytest"]["ini_options"]
        assert any(line.startswith("once_per_run:") for line in options["markers"]), directory
    assert marking >= 3  # the framework's, the serving plugin's and the company world's


def test_the_framework_session_collects_the_install_files_first() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "-q",
            "tests/test_ids.py",
            "tests/test_install_from_index.py",
            "tests/test_new_world_install.py",
        ],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    files = [line.split("::")[0] for line in result.stdout.splitlines() if "::" in line]
    first_other = files.index("tests/test_ids.py")
    assert set(files[:first_other]) == {
        "tests/test_install_from_index.py",
        "tests/test_new_world_install.py",
    }
    assert set(files[first_other:]) == {"tests/test_ids.py"}


def test_the_sessions_variable_keeps_the_sessions_its_patterns_match() -> None:
    every = runner.sessions()
    kept = runner.chosen(every, {runner.SESSIONS_VARIABLE: "framework, world *"})
    labels = [label for label, _, _ in kept]
    assert labels[0] == "framework" and len(labels) > 1
    assert all(label == "framework" or label.startswith("world ") for label in labels)
    assert runner.chosen(every, {}) == every == runner.chosen(every, {runner.SESSIONS_VARIABLE: ""})
    with pytest.raises(SystemExit, match="'plugin nothing' names no session; the sessions are"):
        runner.chosen(every, {runner.SESSIONS_VARIABLE: "framework,plugin nothing"})


def test_the_other_interpreters_run_the_framework_and_worlds_and_a_plugin_each() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPOSITORY / "tox.ini", encoding="utf-8")
    every = runner.sessions()
    ran: dict[str, set[str]] = {}
    for environment in ("py312", "py313"):
        lines = tox.get(f"testenv:{environment}", "set_env").strip().splitlines()
        variables = dict(tuple(part.strip() for part in line.split("=", 1)) for line in lines)
        kept = runner.chosen(every, {runner.SESSIONS_VARIABLE: variables[runner.SESSIONS_VARIABLE]})
        ran[environment] = {label for label, _, _ in kept}
    for label, _, _ in every:
        if not label.startswith("plugin "):
            assert label in ran["py312"] & ran["py313"], label
    # The plugins' suites run whole on 3.11 (the pass sets no variable); each other interpreter
    # adds one, not the same one.
    plugins = {env: {label for label in ran[env] if label.startswith("plugin ")} for env in ran}
    assert all(len(chosen) == 1 for chosen in plugins.values())
    assert plugins["py312"] != plugins["py313"]
    script = (REPOSITORY / "scripts" / "test").read_text(encoding="utf-8")
    assert runner.SESSIONS_VARIABLE not in script


def test_a_shard_names_its_part_and_a_malformed_one_is_refused() -> None:
    assert runner.shard({}) is None and runner.shard({runner.SHARD_VARIABLE: " "}) is None
    assert runner.shard({runner.SHARD_VARIABLE: "2/3"}) == (2, 3)
    for wrong in ("0/2", "3/2", "half", "1/", "/2", "1/0"):
        with pytest.raises(SystemExit, match="SEAHAVEN_TEST_SHARD is K/N with 1 <= K <= N"):
            runner.shard({runner.SHARD_VARIABLE: wrong})


def test_the_parts_of_a_shard_hold_every_file_once_and_about_as_many_bytes(
    tmp_path: Path,
) -> None:
    sizes = [9000, 7000, 5000, 3000, 3000, 2000, 1000, 500, 10]
    files = []
    for index, size in enumerate(sizes):
        path = tmp_path / f"test_{index}.py"
        path.write_bytes(b"#" * size)
        files.append(path)
    parts = [runner.shared_out(files, part, 3) for part in (1, 2, 3)]
    assert sorted(path for part in parts for path in part) == sorted(files)
    loads = [sum(path.stat().st_size for path in part) for part in parts]
    # Greedy by size: no part is heavier than another by more than its largest file.
    assert max(loads) - min(loads) <= max(sizes)
    assert runner.shared_out(list(reversed(files)), 2, 3) == parts[1]  # the order given is moot


def test_the_other_interpreters_share_the_frameworks_files_between_them() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPOSITORY / "tox.ini", encoding="utf-8")
    shards = []
    for environment in ("py312", "py313"):
        lines = tox.get(f"testenv:{environment}", "set_env").strip().splitlines()
        variables = dict(tuple(part.strip() for part in line.split("=", 1)) for line in lines)
        shards.append(
            runner.framework_targets({runner.SHARD_VARIABLE: variables[runner.SHARD_VARIABLE]})
        )
    every = sorted(
        path.relative_to(REPOSITORY).as_posix() for path in (REPOSITORY / "tests").glob("test_*.py")
    )
    assert shards[0] and shards[1] and not set(shards[0]) & set(shards[1])
    assert sorted(shards[0] + shards[1]) == every
    # The 3.11 pass runs the whole suite: the script sets no shard.
    assert runner.framework_targets({}) is None
    assert runner.SHARD_VARIABLE not in (REPOSITORY / "scripts" / "test").read_text(
        encoding="utf-8"
    )


def test_the_worlds_and_examples_run_beside_the_agents_session_and_only_there() -> None:
    every = runner.sessions()
    in_turn, beside = runner.lanes(every)
    assert runner.BESIDE in [label for label, _, _ in in_turn]
    labels = [label for label, _, _ in beside]
    assert labels and all(label.startswith(("world ", "example ")) for label in labels)
    # Every session still runs, once, and the order within each lane is the run's.
    assert sorted(in_turn + beside) == sorted(every)
    assert [session for session in every if session in beside] == beside
    # Without the session to run beside (the other interpreters' passes), all run in turn.
    without = [session for session in every if session[0] != runner.BESIDE]
    assert runner.lanes(without) == (without, [])


def test_a_session_run_beside_keeps_its_output_and_counts_its_own_cpu(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not this session's own settings (see run_session above), nor the run's.
    for name in list(os.environ):
        if name.startswith("PYTEST_") or name.startswith("SEAHAVEN_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv(runner.SKIP_ONCE_VARIABLE, raising=False)
    output = tmp_path / "kept.txt"
    with output.open("wb") as kept:
        status, took = runner.run_session(
            "example project", project, ["tests"], [*LEAN, "-q"], output=kept.fileno()
        )
    assert status == 0
    assert re.fullmatch(r"example project \d+ s \(\d+ s CPU\)", took), took
    assert "3 passed" in output.read_text(encoding="utf-8")
    (project / "tests" / "test_failing.py").write_text(
        "def test_no() -> None:\n    assert False\n", encoding="utf-8"
    )
    with output.open("wb") as kept:
        status, _ = runner.run_session("failing", project, ["tests"], [*LEAN], output=kept.fileno())
    assert status == 1 and "1 failed" in output.read_text(encoding="utf-8")
