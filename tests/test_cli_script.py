"""Every command through the installed ``seahaven`` console script, success and failure.

The script runs as its own process, with a throwaway site directory on
``PYTHONPATH`` that publishes a composite world under the ``seahaven.worlds``
entry-point group, so finding a world by its registered name is exercised the
way a user meets it. Progress is shown on a terminal and never in a pipe:
the last tests give the script a pseudo-terminal for stderr.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from world_packages import NOW, composite, fresh_module, write_dist_info, write_module, write_world

import seahaven

SCRIPT = Path(sys.executable).with_name("seahaven")

GENERATOR = """
import time


def seed(instance):
    instance.call("add_notes", id="n1", body="first")


def more(instance):
    instance.call("add_notes", id="n2", body="second")


def slow(instance):
    time.sleep(1.2)
    instance.call("add_notes", id="n1", body="first")


def fails(instance):
    raise ValueError("the generator ran out of notes")
"""


@dataclass(frozen=True)
class Installed:
    """A site directory publishing worlds, and a project directory holding one."""

    site: Path
    project: Path
    company: str
    company_module: str
    notes_module: str
    raising_module: str
    hooked: str
    plugin_module: str

    def run(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), *argv],
            cwd=cwd or self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(self.site), *filter(None, [env.get("PYTHONPATH")])]
        )
        env.pop("COLUMNS", None)
        return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not SCRIPT.exists():
        pytest.fail(
            f"{SCRIPT} is missing; install the project so its console script exists: "
            f"{sys.executable} -m pip install -e . --no-deps"
        )
    root = tmp_path_factory.mktemp("script")
    site = root / "site"
    site.mkdir()
    modules = composite(site, root / "company-fixtures")
    company = modules["company"].replace("_", "-")
    write_dist_info(
        site,
        f"seahaven-world-{company}",
        "3.1.0",
        worlds={company: f"{modules['company']}:world"},
        requires=[f"seahaven=={seahaven.__version__}"],
    )
    raising = fresh_module("raising")
    write_module(site, raising, "raise RuntimeError('the world cannot start')\n")
    # A world published only through a plugin's seahaven_worlds hook.
    hooked = fresh_module("hooked")
    write_world(site, hooked, name="hooked")
    plugin = fresh_module("plugin")
    write_module(
        site,
        plugin,
        "import seahaven\n\n\n@seahaven.hookimpl\ndef seahaven_worlds():\n"
        f"    return [({hooked.replace('_', '-')!r}, {hooked + ':world'!r})]\n",
    )
    write_dist_info(site, f"seahaven-plugin-{plugin}", "0.2.0", plugins={plugin: plugin})

    project = root / "project"
    project.mkdir()
    notes = fresh_module("notes")
    (project / "pyproject.toml").write_text(f'[project]\nname = "{notes}"\nversion = "1.0"\n')
    write_world(project, notes, name="notes")
    write_module(project, "generate", GENERATOR)

    # The company's fixture, frozen the way an author would, by a script of their own.
    freeze = (
        "import sys; sys.path.insert(0, sys.argv[1]); import importlib; "
        "world = importlib.import_module(sys.argv[2]).world; "
        f"inst = world.instance(now={NOW!r}, clock_mode='fixed'); "
        "inst.call('add_staff', id='s1', body='ada'); inst.freeze('acme', 'A small company.')"
    )
    subprocess.run([sys.executable, "-c", freeze, str(site), modules["company"]], check=True)
    return Installed(
        site, project, company, modules["company"], notes, raising, hooked.replace("_", "-"), plugin
    )


def assert_one_line_failure(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("error: ")
    for fragment in fragments:
        assert fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_version(installed: Installed) -> None:
    result = installed.run("--version")

    assert result.returncode == 0
    assert result.stdout == f"seahaven {seahaven.__version__}\n"


def test_usage_errors_exit_2(installed: Installed) -> None:
    for argv in (["--bogus"], ["fixture", "freeze", "x"], ["worlds", "show", "a", "--world", "b"]):
        result = installed.run(*argv)
        assert result.returncode == 2, argv
        assert "Usage: seahaven" in result.stderr
        assert "Traceback" not in result.stderr


def test_docs(installed: Installed) -> None:
    result = installed.run("docs")

    assert result.returncode == 0
    assert result.stderr == ""
    directory = Path(result.stdout.strip())
    assert result.stdout == f"{directory}\n"
    assert (directory / "cli.md").is_file()


def test_worlds_list_names_the_registered_world(installed: Installed) -> None:
    result = installed.run("worlds", "list")

    assert result.returncode == (1 if "error: " in result.stderr else 0)
    assert installed.company not in result.stderr
    ours = [line.split() for line in result.stdout.splitlines() if installed.company in line]
    assert ours == [
        [
            installed.company,
            "3.1.0",
            f"seahaven-world-{installed.company}",
            "3.1.0",
            "4",
            "1",
            "payments,",
            "chat,",
            "eu_payments",
            "(payments)",
        ]
    ]

    # The plugin's world is listed beside the entry-point one.
    hooked = [line.split() for line in result.stdout.splitlines() if installed.hooked in line]
    distribution = f"seahaven-plugin-{installed.plugin_module}"
    assert hooked == [[installed.hooked, "1.0.0", distribution, "0.2.0", "1", "0", "-"]]

    as_json = installed.run("worlds", "list", "--json")
    listed = {item["name"]: item for item in json.loads(as_json.stdout)}
    assert listed[installed.company]["fixtures"] == 1
    assert listed[installed.company]["problems"] == []
    assert listed[installed.hooked]["provider"] == f"plugin {installed.plugin_module}"
    assert listed[installed.hooked]["distribution"] == distribution
    assert listed[installed.hooked]["distribution_version"] == "0.2.0"
    assert listed[installed.hooked]["tools"] == 1


def test_worlds_show(installed: Installed) -> None:
    result = installed.run("worlds", "show", installed.company)

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"company 3.1.0  from world {installed.company!r}")
    assert "      chat/payments  alias of payments" in result.stdout
    assert "scope eu" in result.stdout


def test_worlds_show_fails_in_one_line(installed: Installed) -> None:
    assert_one_line_failure(
        installed.run("worlds", "show", "not-a-registered-world"),
        "no world is registered as 'not-a-registered-world'",
        installed.company,
    )
    assert_one_line_failure(
        installed.run("worlds", "show", f"{installed.raising_module}:world"),
        "RuntimeError: the world cannot start",
    )


def test_fixture_list(installed: Installed) -> None:
    result = installed.run("fixture", "list", "--world", installed.company)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"acme\t-\t{NOW}\tA small company."]


def test_fixture_list_fails_in_one_line_outside_a_project(
    installed: Installed, tmp_path: Path
) -> None:
    assert_one_line_failure(installed.run("fixture", "list", cwd=tmp_path), "no pyproject.toml")


def test_fixture_freeze_and_fork_by_convention(installed: Installed) -> None:
    fixtures = installed.project / "fixtures"
    shutil.rmtree(fixtures, ignore_errors=True)
    base = installed.run(
        "fixture", "freeze", "base", "--run", "generate:seed", "--description", "One note."
    )
    assert base.returncode == 0, base.stderr
    assert base.stdout.startswith("froze fixture 'base' (parent -, now ")
    assert base.stdout.endswith(f"into {fixtures / 'base'}\n")

    again = installed.run(
        "fixture", "freeze", "base", "--run", "generate:seed", "--description", "d"
    )
    assert_one_line_failure(again, "fixture 'base' already exists")

    child = installed.run(
        "fixture", "fork", "base", "child", "--run", "generate:more", "--description", "Two."
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("froze fixture 'child' (parent base, ")

    listed = installed.run("fixture", "list")
    assert [line.split("\t")[:2] for line in listed.stdout.splitlines()] == [
        ["base", "-"],
        ["child", "base"],
    ]

    orphan = installed.run(
        "fixture", "fork", "nope", "orphan", "--run", "generate:more", "--description", "d"
    )
    assert_one_line_failure(orphan, "has no fixture 'nope'")
    failing = installed.run(
        "fixture", "freeze", "broken", "--run", "generate:fails", "--description", "d"
    )
    assert_one_line_failure(failing, "raised ValueError: the generator ran out of notes")
    assert not (fixtures / "broken").exists()


def test_fixture_freeze_and_fork_on_a_fixed_clock_build_the_same_bytes_twice(
    installed: Installed,
) -> None:
    fixtures = installed.project / "fixtures"
    now = "2031-02-03T04:05:06.000Z"
    steady = ["--clock-mode", "fixed", "--seed", "7"]

    def build() -> dict[str, bytes | dict[str, object]]:
        shutil.rmtree(fixtures, ignore_errors=True)
        made = installed.run(
            "fixture",
            "freeze",
            "base",
            "--run",
            "generate:seed",
            "--now",
            now,
            "--description",
            "One note.",
            *steady,
        )
        assert made.returncode == 0, made.stderr
        forked = installed.run(
            "fixture",
            "fork",
            "base",
            "child",
            "--run",
            "generate:more",
            "--description",
            "Two.",
            *steady,
        )
        assert forked.returncode == 0, forked.stderr
        built: dict[str, bytes | dict[str, object]] = {}
        for fixture in ("base", "child"):
            sidecar = yaml.safe_load((fixtures / fixture / "fixture.yaml").read_text())
            del sidecar["created_at"]  # the wall clock, by design
            built[fixture] = sidecar
            built[f"{fixture}.sqlite"] = (fixtures / fixture / "state.sqlite").read_bytes()
        return built

    first = build()
    assert first["base"]["now"] == first["child"]["now"] == now  # type: ignore[index]
    assert build() == first
    wrong = installed.run(
        "fixture",
        "freeze",
        "odd",
        "--run",
        "generate:seed",
        "--description",
        "d",
        "--clock-mode",
        "sideways",
    )
    assert wrong.returncode == 2 and "'sideways' is not a clock mode" in wrong.stderr
    assert not (fixtures / "odd").exists()


def test_fixture_create(installed: Installed, tmp_path: Path) -> None:
    into = tmp_path / "acme"

    result = installed.run("fixture", "create", installed.company, "acme", "--into", str(into))

    assert result.returncode == 0, result.stderr
    assert [line.split("\t")[1] for line in result.stdout.splitlines()] == [
        "main",
        "payments",
        "chat",
        "eu_payments",
    ]
    assert (into / "state.eu_payments.sqlite").is_file()

    again = installed.run("fixture", "create", installed.company, "acme", "--into", str(into))
    assert_one_line_failure(again, "is not empty")


def test_fixture_verify(installed: Installed) -> None:
    result = installed.run("fixture", "verify", installed.company)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "acme: ok\n"

    missing = installed.run("fixture", "verify", installed.company, "nope")
    assert missing.returncode == 1
    assert missing.stdout.startswith("nope: world 'company' has no fixture 'nope'")


# --- progress: on a terminal only ----------------------------------------------------------------


def run_with_terminal_stderr(installed: Installed, *argv: str) -> tuple[int, str, str]:
    """Run the script with stderr on a pseudo-terminal; return (status, stdout, stderr)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(SCRIPT), *argv],
        cwd=installed.project,
        env=installed.env(),
        stdout=subprocess.PIPE,
        stderr=terminal,
        text=True,
    )
    os.close(terminal)
    seen = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    assert process.stdout is not None
    stdout = process.stdout.read()
    process.stdout.close()
    return process.wait(timeout=60), stdout, seen.decode(errors="replace")


def test_progress_is_shown_when_stderr_is_a_terminal(installed: Installed) -> None:
    status, stdout, stderr = run_with_terminal_stderr(
        installed, "fixture", "verify", installed.company
    )

    assert status == 0
    assert stdout == "acme: ok\n"
    assert "verifying acme (1/1)" in stderr

    fixtures = installed.project / "fixtures"
    shutil.rmtree(fixtures / "slow", ignore_errors=True)
    status, stdout, stderr = run_with_terminal_stderr(
        installed, "fixture", "freeze", "slow", "--run", "generate:slow", "--description", "d"
    )
    assert status == 0, stderr
    assert "running generate:slow (1s)" in stderr
    assert stdout.startswith("froze fixture 'slow'")


def test_progress_is_never_written_into_a_pipe(installed: Installed) -> None:
    shutil.rmtree(installed.project / "fixtures" / "quiet", ignore_errors=True)

    verify = installed.run("fixture", "verify", installed.company)
    freeze = installed.run(
        "fixture", "freeze", "quiet", "--run", "generate:slow", "--description", "d"
    )

    assert verify.returncode == freeze.returncode == 0
    assert verify.stderr == freeze.stderr == ""


def test_episode_runs_a_script_file_against_a_fixture(installed: Installed, tmp_path: Path) -> None:
    script = tmp_path / "calls.json"
    script.write_text(
        '[{"tool": "add_staff", "arguments": {"id": "s2", "body": "grace"}},'
        ' {"tool": "add_staff", "arguments": {"id": "s1", "body": "again"}}]'
    )
    document = tmp_path / "state.json"

    result = installed.run(
        "episodes",
        "run",
        installed.company,
        "acme",
        "--calls",
        str(script),
        "--document",
        str(document),
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == '[0] add_staff(id="s2", body="grace") -> "s2"'
    # s1 is already in the fixture: the second call fails inside SQLite, and the episode goes on.
    assert lines[1].startswith('[1] add_staff(id="s1", body="again") -> db_error: ')
    assert "fixture acme, 2 calls" in lines[2]
    assert "  main.staff: 1 insert" in lines
    assert document.is_file()


def test_episode_fails_in_one_line_for_an_unknown_world(
    installed: Installed, tmp_path: Path
) -> None:
    script = tmp_path / "calls.json"
    script.write_text("[]")
    result = installed.run("episodes", "run", "no-such-world", "--calls", str(script))
    assert_one_line_failure(result, "no-such-world")
