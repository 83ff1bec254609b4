"""``seahaven scenarios check PACK --user-model``: how far a model-played user can be trusted.

The scripted server plays the user's model: faithfully (``user_script``, the
scenario's own script as a model that keeps to it) or with a departure written
in (a wrong account number, a call the script never makes, an early goodbye).
The check plays each reference conversation against it and against the script,
and names each turn where the model departed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import account_cases
from seahaven_agents import ModelUser
from seahaven_agents.testing import (
    ChatRequest,
    Reply,
    ScriptedChatServer,
    answer,
    call,
    error,
    tool_calls,
    user_script,
)
from typer.testing import CliRunner

from seahaven import cli
from seahaven.evaluation import check_simulator
from seahaven.scenarios import ScenarioSet

Start = Callable[..., ScriptedChatServer]
WRONG = "40221878"
runner = CliRunner()


def wrong_account(request: ChatRequest) -> Reply:
    """The scripted user, but stating a wrong account number."""
    reply = user_script(account_cases.pack)(request)
    if reply.content and account_cases.ACCOUNT in reply.content:
        return answer(reply.content.replace(account_cases.ACCOUNT, WRONG))
    return reply


def check(pack: str, server: ScriptedChatServer, *more: str) -> tuple[int, str]:
    argv = [
        "scenarios",
        "check",
        pack,
        "--user-model",
        "scripted-user",
        "--user-base-url",
        server.url,
    ]
    ran = runner.invoke(cli.build_app(), [*argv, *more])
    return ran.exit_code, ran.output


def test_a_faithful_user_model_passes_on_every_scenario_with_a_user(
    company: ScenarioSet, scripted: Start
) -> None:
    server = scripted(user_script(company))
    code, output = check("company", server)
    assert code == 0, output
    assert "the simulated user kept to its instructions in all 10 scenarios with a user" in output
    assert "ok    hooli-card-in-portal (2 turns, solution 1)" in output
    assert "onboard-finance-hire" not in output  # no user: nothing to say


def test_a_user_model_stating_a_wrong_account_number_is_named_at_its_turn(
    scripted: Start,
) -> None:
    server = scripted(wrong_account)
    code, output = check("account_cases:pack", server)
    assert code == 1
    assert "DEPART close-account: 1 departure in 3 turns (solution 1)" in output
    assert f"turn 1: unsupported_fact: said '{WRONG}'" in output
    assert f"said:   It's {WRONG}." in output and f"script: It's {account_cases.ACCOUNT}." in output
    code, printed = check("account_cases:pack", server, "--json")
    assert code == 1
    [report] = json.loads(printed)
    assert report["ok"] is False and report["turns"] == 3
    assert [(d["turn"], d["kind"]) for d in report["departures"]] == [(1, "unsupported_fact")]
    assert report["grade"] == {"score": 1.0, "passed": True}  # the solution used the right one
    assert report["user_tokens"]["model_calls"] == 4  # three replies and one tool call
    # The faithful one passes on the same pack.
    faithful = scripted(user_script(account_cases.pack))
    code, output = check("account_cases:pack", faithful)
    assert code == 0 and "ok    close-account (3 turns, solution 1)" in output


def test_a_call_its_script_never_makes_and_an_early_goodbye_are_named(scripted: Start) -> None:
    plays = user_script(account_cases.pack)

    def wrong_card(request: ChatRequest) -> Reply:
        reply = plays(request)
        if reply.calls:
            return tool_calls(call("app_freeze_card", {"last4": "5512"}))
        return reply

    server = scripted(wrong_card)
    [report] = check_simulator(account_cases.pack, ModelUser("u", base_url=server.url))
    kinds = [(d.turn, d.kind) for d in report.departures]
    assert kinds == [(2, "unexpected_call"), (2, "missed_call")]
    assert 'app_freeze_card({"last4": "5512"})' in report.departures[0].message
    assert report.grade == {"score": 0.0, "passed": False}  # the card was never frozen

    def early(request: ChatRequest) -> Reply:
        reply = plays(request)
        return answer(f"{reply.content} ###STOP###") if reply.content else reply

    server = scripted(early)
    [report] = check_simulator(account_cases.pack, ModelUser("u", base_url=server.url))
    assert [(d.turn, d.kind) for d in report.departures] == [
        (1, "ended_early"),
        (2, "missed_call"),
    ]
    assert report.turns == 1


def test_a_user_model_that_fails_is_the_scenarios_error(scripted: Start) -> None:
    server = scripted(lambda request: error(500, "down"))
    [report] = check_simulator(
        account_cases.pack, ModelUser("u", base_url=server.url, max_retries=0)
    )
    assert not report.ok and report.error is not None
    assert report.error.startswith("user_model: the simulated user's model u@127.0.0.1 failed")
    code, output = check("account_cases:pack", server)
    assert code == 1 and "ERROR close-account: user_model:" in output


def test_a_pack_without_users_has_nothing_to_check(scripted: Start) -> None:
    server = scripted([])
    code, output = check("company", server, "--scenario", "outstanding-usd")
    assert code == 0 and "there was nothing to check" in output and not server.requests


def test_user_options_without_a_user_model_are_refused() -> None:
    ran = runner.invoke(
        cli.build_app(), ["scenarios", "check", "company", "--user-base-url", "http://x/v1"]
    )
    assert ran.exit_code == 2 and "configure --user-model" in ran.output
