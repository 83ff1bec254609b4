"""``python -m seahaven_agents.testing PACK``: serve a pack's solution script from the shell.

It prints the base URL to give ``seahaven eval PACK --model scripted --base-url
URL`` and serves until interrupted; ``--delay`` adds a model's latency,
``--fail-every N`` fails every Nth request with a 500 (or ``--status``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading

from seahaven.scenarios import load_pack
from seahaven_agents.testing.scripts import flaky, solution_script
from seahaven_agents.testing.server import ScriptedChatServer


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted; the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m seahaven_agents.testing",
        description="Serve a scripted model that plays a pack's reference solutions.",
    )
    parser.add_argument("pack", help="an installed pack's name, module:attr, or a folder")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--calls-per-turn", type=int, default=1, help="tool calls in one answer")
    parser.add_argument("--fail-every", type=int, default=0, help="fail every Nth request")
    parser.add_argument("--status", type=int, default=500, help="the failures' status")
    options = parser.parse_args(argv)
    script = solution_script(load_pack(options.pack), calls_per_turn=options.calls_per_turn)
    if options.fail_every:
        script = flaky(script, every=options.fail_every, status=options.status)
    with ScriptedChatServer(script, delay=options.delay) as server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
