"""The default solver: Inspect's own ReAct loop over the episode's tools, ``submit`` among them.

The loop is ``inspect_ai.agent.react`` with the tools ``bind_trial`` put in
``state.tools``, and without react's own submit tool: the episode's ``submit``
is the world-facing one, graded by the scenario. The loop stops when the
episode has ended (an answer submitted, the budget spent) or when the model
answers without calling a tool, which ends the episode where it stands, as the
other doors do for a model that stops.
"""

from __future__ import annotations

from inspect_ai.agent import AgentPrompt, AgentState, as_solver, react
from inspect_ai.solver import Generate, Solver, TaskState, solver

from seahaven_inspect.episodes import episode_of

__all__ = ["INSTRUCTIONS", "seahaven_agent"]

INSTRUCTIONS = (
    "You operate a software system through the tools you are given. Do what the user asks, "
    "and change nothing else. When the task is done, call the submit tool once with your "
    "answer (or a short note of what you did); no tool can be called after it."
)


@solver
def seahaven_agent(instructions: str = INSTRUCTIONS) -> Solver:
    """Inspect's ReAct agent on the sample's episode: its tools and ``submit``, until it ends."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trial = episode_of(state).trial

        async def keep_going(agent_state: AgentState) -> bool:
            # Every turn: on while the episode runs and the model is calling tools.
            return not trial.done and bool(agent_state.output.message.tool_calls)

        agent = react(
            prompt=AgentPrompt(instructions=instructions),
            tools=list(state.tools),
            submit=False,
            on_continue=keep_going,
        )
        return await as_solver(agent)(state, generate)

    return solve
