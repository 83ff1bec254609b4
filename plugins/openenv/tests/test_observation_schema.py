"""``/schema`` covers every observation the server sends, as ``openenv validate`` checks it.

OpenEnv's ``runtime.observation_schema`` check validates each step's
observation (with its ``reward`` and ``done``) against ``/schema``'s
``observation``, and each reset's against ``reset_observation``, with
jsonschema's Draft 2020-12 validator. These tests do the same with real
observations from a real server, and through OpenEnv's own schema worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import openenv
from jsonschema import Draft202012Validator
from referencing import Registry


def exchanges(served: Any, wire: Any) -> list[tuple[str, str]]:
    """A reset and every kind of step, as (operation, the answer's JSON text)."""
    ws = wire(served)

    def ask(frame: dict[str, Any]) -> str:
        ws.connection.send(json.dumps(frame))
        text = ws.connection.recv(timeout=30)
        assert isinstance(text, str) and json.loads(text)["type"] == "observation", text
        return text

    def step(action: dict[str, Any]) -> tuple[str, str]:
        return "step", ask({"type": "step", "data": action})

    return [
        ("reset", ask({"type": "reset", "data": {"seed": 1}})),
        step({"type": "list_tools"}),
        step({"type": "call_tool", "tool_name": "add_note", "arguments": {"text": "a"}}),
        step({"type": "call_tool", "tool_name": "get_note", "arguments": {"note_id": "none"}}),
        step({"type": "call_tool", "tool_name": "no_such_tool", "arguments": {}}),
        step({"type": "call_tool", "tool_name": "add_note", "arguments": {"text": 5}}),
        step({"type": "call_tool", "tool_name": "crash", "arguments": {}}),
    ]


def schema_of(served: Any) -> dict[str, Any]:
    with urllib.request.urlopen(served.base_url + "/schema", timeout=30) as response:
        schema: dict[str, Any] = json.loads(response.read())
        return schema


def test_every_observation_validates_against_the_schema(served, wire) -> None:
    schema = schema_of(served)
    validators = {
        "step": Draft202012Validator(schema["observation"], registry=Registry()),
        "reset": Draft202012Validator(schema["reset_observation"], registry=Registry()),
    }
    for validator in validators.values():
        Draft202012Validator.check_schema(validator.schema)
    for operation, text in exchanges(served, wire):
        data = json.loads(text)["data"]
        observation = {**data["observation"], "reward": data["reward"], "done": data["done"]}
        problems = [error.message for error in validators[operation].iter_errors(observation)]
        assert problems == [], (operation, observation)


def test_the_schema_still_describes_a_tool_calls_fields(served) -> None:
    observation = schema_of(served)["observation"]
    for field in ("tool_name", "result", "error", "metadata", "tools"):
        assert observation["properties"][field]["description"]


def test_openenvs_own_schema_worker_finds_no_mismatch(served, wire) -> None:
    worker = Path(openenv.__file__).parent / "validation" / "runtime" / "schema_worker.py"
    schema = schema_of(served)
    rows = [
        {"index": index, "operation": operation, "response_json": text}
        for index, (operation, text) in enumerate(exchanges(served, wire))
    ]
    payload = {
        "schema_json": json.dumps(schema["observation"]),
        "reset_schema_json": json.dumps(schema["reset_observation"]),
        "observations": rows,
    }
    checked = subprocess.run(
        [sys.executable, "-I", str(worker)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(checked.stdout) == []
