"""``seahaven serve --log-level``: how much uvicorn and the framework's own loggers say."""

from __future__ import annotations

from pathlib import Path

from conftest import wait_until
from test_serve_command import serving

from seahaven.openenv import SeahavenClient


def test_info_shows_what_the_server_decides(tmp_path: Path) -> None:
    argv = ("--world", "payments", "--session-timeout", "1", "--log-level", "info")
    with serving(tmp_path, *argv) as server:
        with SeahavenClient(base_url=server["urls"]["payments"]) as env:
            env.reset(fixture="small_shop", episode_id="kept-an-eye-on")
            wait_until(lambda: "reaped session kept-an-eye-on" in server["log"].read_text())
        assert "Application startup complete" in server["log"].read_text()


def test_warning_keeps_the_log_to_what_went_wrong(tmp_path: Path) -> None:
    argv = ("--world", "payments", "--session-timeout", "1", "--log-level", "WARNING")
    with serving(tmp_path, *argv) as server:
        with SeahavenClient(base_url=server["urls"]["payments"]) as env:
            env.reset(fixture="small_shop")
            wait_until(lambda: server["process"].poll() is None and _reaped(server["urls"]))
        text = server["log"].read_text()
    assert "Application startup complete" not in text
    assert "reaped session" not in text
    # What the command prints itself is not a log line: the addresses are still there.
    assert "Serving world 'payments'" in text


def _reaped(urls: dict[str, str]) -> bool:
    import json
    import urllib.request

    with urllib.request.urlopen(urls["payments"] + "/capacity", timeout=10) as response:
        return bool(json.loads(response.read())["active_sessions"] == 0)
