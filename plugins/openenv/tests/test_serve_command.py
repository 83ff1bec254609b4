"""``seahaven serve`` as a user runs it: a real process on a loopback port, several worlds."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from openenv import GenericEnvClient
from websockets.sync.client import connect

from seahaven.openenv import SeahavenClient

ADDRESS = re.compile(r"Serving world '(?P<world>[^']+)' at (?P<url>http://127\.0\.0\.1:\d+\S*)")


def command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "seahaven.cli", *argv]


ROOT = Path(__file__).resolve().parents[3]


@contextmanager
def serving(
    tmp_path: Path,
    *argv: str,
    expect: int = 1,
    cwd: Path | None = None,
    preexec_fn: Callable[[], None] | None = None,
    environment: dict[str, str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Run ``seahaven serve ARGV --port 0``; yield the printed addresses and the process.

    ``preexec_fn`` runs in the child before the command (to lower a limit, say);
    ``environment`` adds to the variables it inherits.
    """
    log = tmp_path / "serve.log"
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1", **(environment or {})}
    with log.open("w") as out:
        process = subprocess.Popen(
            command("serve", *argv, "--port", "0"),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            preexec_fn=preexec_fn,
        )
    try:
        deadline = time.monotonic() + 60
        while len(ADDRESS.findall(log.read_text())) < expect:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        urls = {m.group("world"): m.group("url") for m in ADDRESS.finditer(log.read_text())}
        yield {"urls": urls, "process": process, "log": log}
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_serve_prints_where_it_listens_and_serves(tmp_path: Path) -> None:
    with serving(tmp_path, "--world", "payments") as server:
        url = server["urls"]["payments"]
        text = server["log"].read_text()
        assert f"(sessions on {url.replace('http', 'ws')}/ws)" in text
        assert f"Web console for 'payments': {url}/console" in text
        assert get(url + "/health") == {"status": "healthy"}
        with SeahavenClient(base_url=url) as env:
            env.reset(fixture="small_shop")
            assert env.call("get_balance").error is None
        process = server["process"]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    # Ctrl-C ended every session; nothing is left in the server's working directory.
    leftovers = [p for p in tmp_path.glob(f"seahaven-*/payments/{process.pid}-*/*")]
    assert leftovers == []


def test_the_project_convention_finds_the_world_to_serve(tmp_path: Path) -> None:
    # Run from a world's own project directory, with no --world: its pyproject names the world.
    with serving(tmp_path, cwd=ROOT / "worlds" / "chat") as server:
        assert list(server["urls"]) == ["chat"]


def test_module_attr_names_the_world_to_serve(tmp_path: Path) -> None:
    with serving(tmp_path, "--world", "payments_world:world") as server:
        assert get(server["urls"]["payments"] + "/metadata")["name"] == "payments"


def test_no_console_leaves_the_address_out(tmp_path: Path) -> None:
    with serving(tmp_path, "--world", "payments", "--no-console") as server:
        assert "Web console" not in server["log"].read_text()


def test_several_worlds_each_under_its_name(tmp_path: Path) -> None:
    with serving(tmp_path, "--world", "payments", "--world", "chat", expect=2) as server:
        urls = server["urls"]
        base = urls["payments"].rsplit("/worlds/", 1)[0]
        assert urls == {"payments": f"{base}/worlds/payments", "chat": f"{base}/worlds/chat"}
        assert [w["name"] for w in get(base + "/worlds")] == ["payments", "chat"]
        assert get(urls["chat"] + "/metadata")["name"] == "chat"
        # The stock client, pointed at a world's base, works unchanged.
        with GenericEnvClient(base_url=urls["chat"]) as env:
            env.reset()
            tools = env.step({"type": "list_tools"}).observation["tools"]
            assert len(tools) == 25
        with SeahavenClient(base_url=urls["payments"]) as env:
            env.reset(fixture="small_shop")
            assert env.state().world.name == "payments"


def status_of(url: str, headers: dict[str, str]) -> int:
    """The status ``GET url`` is answered with, sent with ``headers``."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.parametrize(
    ("flag", "variable", "files"),
    [("disk", "memory", True), ("memory", "disk", False)],
    ids=["disk-over-memory", "memory-over-disk"],
)
def test_storage_sets_where_a_session_keeps_its_stores_over_the_variable(
    tmp_path: Path, flag: str, variable: str, files: bool
) -> None:
    with serving(
        tmp_path,
        "--world",
        "payments",
        "--storage",
        flag,
        environment={"SEAHAVEN_STORAGE": variable},
    ) as server:
        process = server["process"]
        with SeahavenClient(base_url=server["urls"]["payments"]) as env:
            env.reset(fixture="small_shop")
            assert env.call("get_balance").error is None
            stores = list(tmp_path.glob(f"seahaven-*/payments/{process.pid}-*/**/*.sqlite"))
            assert bool(stores) is files, stores
            # A reset naming its storage still has the last word.
            env.reset(fixture="small_shop", storage=variable)
            stores = list(tmp_path.glob(f"seahaven-*/payments/{process.pid}-*/**/*.sqlite"))
            assert bool(stores) is not files, stores


def test_allow_host_and_allow_origin_add_to_what_the_server_answers(tmp_path: Path) -> None:
    argv = ("--world", "payments", "--allow-host", "*.seahaven.test")
    with serving(tmp_path, *argv, "--allow-origin", "http://localhost:3000") as server:
        health = server["urls"]["payments"] + "/health"
        assert status_of(health, {"Host": "shop.seahaven.test"}) == 200
        assert status_of(health, {"Origin": "http://localhost:3000"}) == 200
        assert status_of(health, {"Host": "evil.example"}) == 403
        assert status_of(health, {"Origin": "http://evil.example"}) == 403


def test_all_serves_every_installed_world(tmp_path: Path) -> None:
    with serving(tmp_path, "--all", expect=4) as server:
        assert set(server["urls"]) >= {"payments", "chat", "company", "projecttracker"}


@pytest.mark.parametrize(
    ("argv", "status", "fragment"),
    [
        (("--world", "no_such_world"), 1, "no_such_world"),
        (("--all", "--world", "chat"), 2, "--all"),
        (("payments", "--world", "chat"), 2, "given twice"),
        (("--world", "payments", "--port", "70000"), 2, "--port"),
        (("--world", "payments", "--max_concurrent_envs", "0"), 2, "--max_concurrent_envs"),
        (("--world", "payments", "--concurrency", "-1"), 2, "--concurrency"),
        (("--world", "payments", "--session-timeout", "-3"), 2, "--session-timeout"),
        (("--world", "payments", "--wrokers", "2"), 2, "--wrokers"),
        (("--world", "payments", "--admission-queue", "-1"), 2, "--admission-queue"),
        (("--world", "payments", "--admission-wait", "-1"), 2, "--admission-wait"),
        (("--world", "payments", "--admission-wait", "nan"), 2, "--admission-wait"),
        (("--world", "payments", "--retry-after", "0"), 2, "--retry-after"),
        (("--world", "payments", "--retry-after", "1.5"), 2, "--retry-after"),
        (("--world", "payments", "--allow-origin", "example.org"), 1, "not an origin"),
        (("--world", "payments", "--storage", "floppy"), 1, "storage must be 'memory' or 'disk'"),
    ],
)
def test_bad_input_is_one_line_and_the_right_status(
    argv: tuple[str, ...], status: int, fragment: str
) -> None:
    result = subprocess.run(
        command("serve", *argv), capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == status, result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    if status == 1:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_admission_options_reach_the_server(tmp_path: Path) -> None:
    argv = ("--world", "payments", "--max_concurrent_envs", "1", "--admission-queue", "0")
    with serving(tmp_path, *argv, "--retry-after", "2") as server:
        url = server["urls"]["payments"].replace("http://", "ws://") + "/ws"
        with connect(url, open_timeout=30) as holder:
            holder.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(holder.recv(timeout=60))["type"] == "observation"
            with connect(url, open_timeout=30) as refused:
                error = json.loads(refused.recv(timeout=60))["data"]
                assert error["code"] == "CAPACITY_REACHED" and error["retry_after"] == 2


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with serving(tmp_path, "--world", "payments") as server:
        port = server["urls"]["payments"].rsplit(":", 1)[1]
        result = subprocess.run(
            command("serve", "--world", "payments", "--port", port),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use; choose another "
        "--port, or stop what is using it"
    ]


def test_without_the_plugin_the_import_names_the_install_command() -> None:
    code = (
        "import sys; sys.modules['seahaven_openenv'] = None\n"
        "try:\n    import seahaven.openenv\n"
        "except ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert 'pip install "seahaven[serve]"' in result.stdout
