"""Drive a served world over OpenEnv from Python: the demo's last step.

    python examples/serve_client.py http://127.0.0.1:8000

Resets the company world from its acme fixture as a finance clerk, calls two tools over the
WebSocket, and prints what the state document says the episode changed.
"""

from __future__ import annotations

import sys

from seahaven.openenv import SeahavenClient


def main(base_url: str) -> None:
    with SeahavenClient(base_url=base_url) as env:
        env.reset(
            fixture="acme",
            seed=7,
            clock_mode="tick",
            startup={"principal": "tom@acme-robotics.test"},
            episode_id="demo-over-the-wire",
        )
        me = env.call("whoami")
        print(f"whoami -> {me.result['full_name']} ({me.result['role']})")
        refused = env.call("get_invoice", invoice_id="inv_0000000000000000")
        print(f"get_invoice -> refused: {refused.seahaven_error['code']}")
        state = env.state()
        print(
            f"state: episode {state.episode_id}, {state.call_count} calls, "
            f"{state.step_count} steps, stores {', '.join(state.composition or {})}"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
