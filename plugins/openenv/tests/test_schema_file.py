"""``/schema`` is answered from ``schema.json``: the models' own schemas, and no OpenEnv import.

Importing OpenEnv takes seconds (its web stack comes with it; 10 to 20 s on a
loaded machine), which made the first ``/schema`` of a fresh server slower than
``openenv validate --url``'s five-second timeout. The server now answers it from
the file shipped with the plugin; these tests hold the file equal to what the
models build, and show a server answering ``/schema`` without importing OpenEnv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from seahaven_openenv.clients import models
from seahaven_openenv.web.routes import schema_document


def test_the_shipped_schema_is_what_the_models_build() -> None:
    assert schema_document() == json.loads(json.dumps(models.schemas()))
    assert models.SCHEMA_FILE.read_text(encoding="utf-8") == models.schemas_text()
    assert models.main(["--check"]) == 0


def test_the_check_names_a_stale_file(tmp_path: Path, monkeypatch, capsys) -> None:
    stale = tmp_path / "schema.json"
    stale.write_text("{}\n")
    monkeypatch.setattr(models, "SCHEMA_FILE", stale)
    assert models.main(["--check"]) == 1
    assert (
        "is out of date; run python -m seahaven_openenv.clients.models" in capsys.readouterr().out
    )
    assert models.main([]) == 0
    assert stale.read_text() == models.schemas_text()


SERVE_AND_ASK = textwrap.dedent(
    """
    import json, sys, time, urllib.request
    import seahaven
    from seahaven.openenv import serve

    world = seahaven.World(
        name="plain", version="1.0.0", state_format="seahaven.state/1",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
    )
    with serve.running(world) as server:
        started = time.perf_counter()
        with urllib.request.urlopen(server.base_url + "/schema", timeout=30) as answer:
            schema = json.loads(answer.read())
        took = time.perf_counter() - started
    print(json.dumps({
        "took": took,
        "openenv": sorted(name for name in sys.modules if name.split(".")[0] == "openenv"),
        "keys": sorted(schema),
    }))
    """
)


def test_a_server_answers_schema_without_importing_openenv() -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    done = subprocess.run(
        [sys.executable, "-c", SERVE_AND_ASK],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["openenv"] == []
    assert answer["keys"] == ["action", "observation", "reset", "reset_observation", "state"]
    # A file read, not seconds of imports: well inside openenv validate's five seconds.
    assert answer["took"] < 2.0
