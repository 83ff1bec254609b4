"""The env a Seahaven taskset runs in: one agent seat, its harness and runtime local.

verifiers pairs a taskset with the ``Env`` its package exports. This one is the
single-agent case (one ``agent`` seat playing each task) with one default of
its own: the seat's runtime is the local ``subprocess`` runtime rather than a
remote sandbox, since ``SeahavenHarness`` plays the episode in this process and
needs no machine of its own. ``--env.agent.*`` overrides it as usual.
"""

from __future__ import annotations

import verifiers.v1 as vf

__all__ = ["SeahavenEnv", "SeahavenEnvConfig"]


class SeahavenEnvConfig(vf.EnvConfig):
    """The one ``agent`` seat, on the local runtime by default."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The seat under evaluation or training."""


class SeahavenEnv(vf.Env[SeahavenEnvConfig]):
    """One agent plays each task; the task's rewards grade the trace."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        """Play ``task`` with the ``agent`` seat."""
        await agents.agent.run(task)
