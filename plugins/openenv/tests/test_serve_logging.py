"""``seahaven serve --log-level``: how much uvicorn and the framework's own loggers say."""

from __future__ import annotations

from pathlib import Path

from conftest import wait_until
from test_serve_command import serving
from websockets.sync.client import connect

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


def test_the_log_never_holds_a_sessions_credentials_whole(tmp_path: Path) -> None:
    argv = ("--world", "payments", "--log-level", "info")
    with serving(tmp_path, *argv) as server:
        url = server["urls"]["payments"]
        with SeahavenClient(base_url=url) as env:
            env.reset(fixture="small_shop", episode_id="watched")
            token = env.snapshot()
            session_id, resume_token = env._resume_credentials or ("", "")
            assert session_id and resume_token
            # A connection presenting them, as a client resuming does, is logged by uvicorn.
            ws_url = url.replace("http://", "ws://") + "/ws"
            query = f"?session_id={session_id}&resume={resume_token}&snapshot={token}"
            with connect(ws_url + query, open_timeout=10) as attached:
                attached.recv(timeout=10)
            wait_until(lambda: "WebSocket /ws?session_id=" in server["log"].read_text())
        text = server["log"].read_text()
    assert f"session_id={session_id[:6]}..." in text
    for secret in (session_id, resume_token, token):
        assert secret not in text
