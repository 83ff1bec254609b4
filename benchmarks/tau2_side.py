"""tau2-bench's half of ``benchmarks/tau2_domains.py``, run by tau2-bench's own interpreter.

It imports only tau2-bench (installed from its source, in a virtualenv of its
own: it needs Python 3.12 and heavy dependencies this project never takes) and
the standard library. For each task of a domain it replays the gold actions in
tau2-bench's environment, as its evaluator replays them, and grades the
episode with tau2-bench's evaluators; it times both, and writes one JSON line
per task to standard output, with the end database saved beside it:

    TAU2_DATA_DIR=... python tau2_side.py airline OUT_DIR
    TAU2_DATA_DIR=... python tau2_side.py telecom OUT_DIR
    TAU2_DATA_DIR=... python tau2_side.py calls tau2_calls.json

The second form does the same for telecom, whose tasks start with a setup
(``initialization_actions``) and whose gold actions are the agent's and the
user's; after the gold actions it makes the reads of ``TELECOM_PROBES`` (what
the phone and the line look like), and it grades the gold actions and, for
each gold action, the gold actions without it, so that the two benchmarks'
verdicts can be compared on right and wrong episodes.

The third form makes each call of a file of ``[domain, tool, arguments]`` in
turn, on one environment per domain (so the calls see each other's writes),
and prints each answer: refusals and reads the gold actions never make.

The grade is the environment check (the database hash against the gold
actions' replay, or telecom's assertions) and, where the reward basis has it,
the communicate or action check; the LLM-judged assertions are not run.

Times are on the clock ``$SEAHAVEN_TAU2_CLOCK`` names: ``wall`` (the default)
or ``cpu``, this process's CPU time.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
from tau2.data_model.tasks import RewardType
from tau2.evaluator.evaluator_action import ActionEvaluator
from tau2.evaluator.evaluator_communicate import CommunicateEvaluator
from tau2.evaluator.evaluator_env import EnvironmentEvaluator

TELECOM_PROBES: list[tuple[str, str, dict[str, Any]]] = [
    ("user", "check_status_bar", {}),
    ("user", "check_network_status", {}),
    ("user", "check_network_mode_preference", {}),
    ("user", "run_speed_test", {}),
    ("user", "check_sim_status", {}),
    ("user", "check_data_restriction_status", {}),
    ("user", "check_apn_settings", {}),
    ("user", "check_wifi_status", {}),
    ("user", "check_wifi_calling_status", {}),
    ("user", "check_vpn_status", {}),
    ("user", "check_installed_apps", {}),
    ("user", "check_app_status", {"app_name": "messaging"}),
    ("user", "check_app_permissions", {"app_name": "messaging"}),
    ("user", "can_send_mms", {}),
    ("user", "check_payment_request", {}),
    ("assistant", "get_customer_by_id", {"customer_id": "C1001"}),
    ("assistant", "get_details_by_id", {"id": "L1002"}),
    ("assistant", "get_bills_for_customer", {"customer_id": "C1001"}),
    ("assistant", "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}),
]
"""Reads made after a telecom task's gold actions, on both sides: the phone and the line as the
episode leaves them."""


# The clock the episodes and grades are timed on: the wall clock, or this process's CPU time.
_clock = time.process_time if os.environ.get("SEAHAVEN_TAU2_CLOCK") == "cpu" else time.perf_counter


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
        started = _clock()
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
        episode = _clock() - started

        started = _clock()
        reward = EnvironmentEvaluator.calculate_reward(
            environment_constructor=get_environment, task=task, full_trajectory=messages
        )
        told = None
        if RewardType.COMMUNICATE in task.evaluation_criteria.reward_basis:
            told = CommunicateEvaluator.calculate_reward(task=task, full_trajectory=messages)
        grade = _clock() - started

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


def _telecom_replay(task: Any, actions: list[Any]) -> tuple[Any, list[Any], list[dict[str, Any]]]:
    """A telecom task's setup, then ``actions`` (each the agent's or the user's) in turn."""
    from tau2.domains.telecom.environment import get_environment

    env = get_environment()
    env.set_state(
        initialization_data=task.initial_state.initialization_data,
        initialization_actions=task.initial_state.initialization_actions,
        message_history=[],
    )
    messages: list[Any] = []
    results = []
    for number, action in enumerate(actions):
        call = ToolCall(
            id=f"c{number}",
            name=action.name,
            arguments=action.arguments,
            requestor=action.requestor,
        )
        speaker = UserMessage if action.requestor == "user" else AssistantMessage
        role = "user" if action.requestor == "user" else "assistant"
        messages.append(speaker(role=role, content=None, tool_calls=[call]))
        answer = env.get_response(call)
        messages.append(answer)
        results.append({"error": answer.error, "content": answer.content})
    messages.append(AssistantMessage(role="assistant", content="(the agent's last message)"))
    return env, messages, results


def _telecom_reward(task: Any, messages: list[Any]) -> float:
    """tau2-bench's reward of a telecom episode: its environment check times its action check."""
    from tau2.domains.telecom.environment import get_environment

    reward = EnvironmentEvaluator.calculate_reward(
        environment_constructor=get_environment, task=task, full_trajectory=messages
    ).reward
    if RewardType.ACTION in task.evaluation_criteria.reward_basis:
        reward *= ActionEvaluator.calculate_reward(task=task, full_trajectory=messages).reward
    return reward


def telecom(out: Path) -> None:
    """Replay, probe and grade every small telecom task; one JSON line each on stdout."""
    from tau2.domains.telecom.environment import get_tasks

    for task in get_tasks(None):
        actions = task.evaluation_criteria.actions or []
        started = _clock()
        env, messages, results = _telecom_replay(task, actions)
        episode = _clock() - started

        started = _clock()
        reward = _telecom_reward(task, messages)
        grade = _clock() - started

        probes = []
        for requestor, tool, arguments in TELECOM_PROBES:
            answer = env.get_response(
                ToolCall(id="p", name=tool, arguments=arguments, requestor=requestor)
            )
            probes.append({"error": answer.error, "content": answer.content})
        # Each gold action left out: the verdict on a wrong (or, rarely, still right) episode.
        dropped = []
        for index in range(len(actions)):
            _, without, _ = _telecom_replay(task, actions[:index] + actions[index + 1 :])
            dropped.append(_telecom_reward(task, without))

        database = out / f"telecom-{task.id}.json"
        database.write_text(
            json.dumps(
                {
                    "db": env.tools.db.model_dump(mode="json"),
                    "user_db": env.user_tools.db.model_dump(mode="json"),
                }
            )
        )
        line = {
            "task": task.id,
            "episode_s": episode,
            "grade_s": grade,
            "reward": reward,
            "dropped_rewards": dropped,
            "results": results,
            "probes": probes,
            "database": str(database),
        }
        print(json.dumps(line), flush=True)


def calls(path: Path) -> None:
    """Make each call of the file on one environment per domain; print each answer."""
    from tau2.domains.telecom.environment import get_environment as telecom_environment

    environments = {name: _domain(name)[0]() for name in ("airline", "retail")}
    environments["telecom"] = telecom_environment()
    for domain, tool, arguments in json.loads(path.read_text()):
        environment = environments[domain]
        requestor = (
            "user"
            if environment.user_tools and environment.user_tools.has_tool(tool)
            else "assistant"
        )
        answer = environment.get_response(
            ToolCall(id="c", name=tool, arguments=arguments, requestor=requestor)
        )
        print(json.dumps({"error": answer.error, "content": answer.content}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "calls":
        calls(Path(sys.argv[2]))
    elif sys.argv[1] == "telecom":
        telecom(Path(sys.argv[2]))
    else:
        main(sys.argv[1], Path(sys.argv[2]))
