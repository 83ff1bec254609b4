"""tau2-bench's half of ``benchmarks/tau2_domains.py``, run by tau2-bench's own interpreter.

It imports only tau2-bench (installed from its source, in a virtualenv of its
own: it needs Python 3.12 and heavy dependencies this project never takes) and
the standard library. For each task of a domain it replays the gold actions in
tau2-bench's environment, as its evaluator replays them, and grades the
episode with tau2-bench's evaluators; it times both, and writes one JSON line
per task to standard output, with the end database saved beside it:

    TAU2_DATA_DIR=... python tau2_side.py airline OUT_DIR
    TAU2_DATA_DIR=... python tau2_side.py calls tau2_calls.json

The second form makes each call of a file of ``[domain, tool, arguments]`` in
turn, on one environment per domain (so the calls see each other's writes),
and prints each answer: refusals and reads the gold actions never make.

The grade is the environment check (the database hash against the gold
actions' replay) and, where the reward basis has it, the communicate check;
the LLM-judged assertions are not run.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from tau2.data_model.message import AssistantMessage, ToolCall
from tau2.data_model.tasks import RewardType
from tau2.evaluator.evaluator_communicate import CommunicateEvaluator
from tau2.evaluator.evaluator_env import EnvironmentEvaluator


def _domain(name: str) -> tuple[Any, Any]:
    """tau2-bench's ``get_environment`` and ``get_tasks`` for a domain."""
    if name == "airline":
        from tau2.domains.airline.environment import get_environment, get_tasks
    else:
        from tau2.domains.retail.environment import get_environment, get_tasks
    return get_environment, get_tasks


def main(domain: str, out: Path) -> None:
    """Replay, grade and time every task of ``domain``; one JSON line each on stdout."""
    get_environment, get_tasks = _domain(domain)
    for task in get_tasks(None):
        actions = task.evaluation_criteria.actions or []
        facts = task.evaluation_criteria.communicate_info or []
        started = time.perf_counter()
        env = get_environment()
        messages = []
        results = []
        for number, action in enumerate(actions):
            call = ToolCall(id=f"c{number}", name=action.name, arguments=action.arguments)
            messages.append(AssistantMessage(role="assistant", content=None, tool_calls=[call]))
            answer = env.get_response(call)
            messages.append(answer)
            results.append({"error": answer.error, "content": answer.content})
        # The agent's reply carries the facts to tell, as the reference solution's does.
        reply = "(the reference solution's reply to the customer) " + " ".join(
            f"{fact}." for fact in facts
        )
        messages.append(AssistantMessage(role="assistant", content=reply))
        episode = time.perf_counter() - started

        started = time.perf_counter()
        reward = EnvironmentEvaluator.calculate_reward(
            environment_constructor=get_environment, task=task, full_trajectory=messages
        )
        told = None
        if RewardType.COMMUNICATE in task.evaluation_criteria.reward_basis:
            told = CommunicateEvaluator.calculate_reward(task=task, full_trajectory=messages)
        grade = time.perf_counter() - started

        database = out / f"{domain}-{task.id}.json"
        database.write_text(json.dumps(env.tools.db.model_dump()))
        line = {
            "task": task.id,
            "episode_s": episode,
            "grade_s": grade,
            "db_reward": reward.db_check.db_reward if reward.db_check else None,
            "communicate_reward": None if told is None else told.reward,
            "results": results,
            "database": str(database),
        }
        print(json.dumps(line), flush=True)


def calls(path: Path) -> None:
    """Make each call of the file on one environment per domain; print each answer."""
    environments = {name: _domain(name)[0]() for name in ("airline", "retail")}
    for domain, tool, arguments in json.loads(path.read_text()):
        answer = environments[domain].get_response(ToolCall(id="c", name=tool, arguments=arguments))
        print(json.dumps({"error": answer.error, "content": answer.content}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "calls":
        calls(Path(sys.argv[2]))
    else:
        main(sys.argv[1], Path(sys.argv[2]))
