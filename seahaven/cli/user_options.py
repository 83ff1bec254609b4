"""What ``seahaven eval`` and ``seahaven scenarios check`` take to play users with a model.

``--user-model NAME`` has the scenarios' simulated users played by a model on
an OpenAI-compatible endpoint (the agents plugin's ``ModelUser``), with the
user's own instructions as its prompt: ``--user-base-url``,
``--user-api-key-env`` and ``--user-temperature`` configure it, and in ``eval``
it takes the agent's ``--base-url`` and ``--api-key-env`` when they are not
given (one server often serves both), and the agent's ``--max-retries`` and
``--model-timeout``. ``--replay FILE`` runs again, exactly, the trials of a
transcripts file (``seahaven.evaluation.replay``). ``simulator_lines`` is how
``scenarios check --user-model`` prints each scenario's report.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from seahaven.cli.support import one_line, plural

if TYPE_CHECKING:
    from seahaven.evaluation import SimulatorReport

__all__ = [
    "ReplayOption",
    "UserApiKeyEnvOption",
    "UserBaseUrlOption",
    "UserModelOption",
    "UserTemperatureOption",
    "model_user",
    "simulator_lines",
    "simulator_totals",
    "stray_user_options",
]

UserModelOption = Annotated[
    str | None,
    typer.Option(
        "--user-model",
        metavar="NAME",
        help="Play the scenarios' simulated users with this model (the agents plugin's "
        "ModelUser), instead of their scripts.",
    ),
]
UserBaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--user-base-url",
        metavar="URL",
        help="With --user-model: its server's base URL (default: --base-url, else "
        "OPENAI_BASE_URL, else OpenAI's).",
    ),
]
UserApiKeyEnvOption = Annotated[
    str | None,
    typer.Option(
        "--user-api-key-env",
        metavar="VAR",
        help="With --user-model: the environment variable holding its API key (default: "
        "--api-key-env, else OPENAI_API_KEY).",
    ),
]
UserTemperatureOption = Annotated[
    float | None,
    typer.Option(
        "--user-temperature",
        metavar="T",
        min=0.0,
        help="With --user-model: its sampling temperature.",
    ),
]
ReplayOption = Annotated[
    Path | None,
    typer.Option(
        "--replay",
        metavar="TRANSCRIPTS",
        help="Run again, exactly, the trials of this transcripts file (the agent's calls and "
        "the user's replies as recorded), and grade them again; instead of --policy/--model.",
    ),
]


def stray_user_options(
    user_model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    temperature: float | None,
) -> None:
    """Refuse ``--user-...`` options given without ``--user-model`` (a usage error)."""
    if user_model is not None:
        return
    given = {
        "--user-base-url": base_url,
        "--user-api-key-env": api_key_env,
        "--user-temperature": temperature,
    }
    stray = [name for name, value in given.items() if value is not None]
    if stray:
        raise typer.BadParameter(
            f"{', '.join(stray)} configure --user-model; give --user-model NAME",
            param_hint=stray[0],
        )


def model_user(
    model: str,
    *,
    base_url: str | None,
    api_key_env: str | None,
    temperature: float | None,
    max_retries: int | None = None,
    model_timeout: float | None = None,
) -> Any:
    """The agents plugin's ``ModelUser`` for ``--user-model``; one line naming the install."""
    from seahaven.cli.model_options import agents_plugin

    agents = agents_plugin("--user-model")
    options: dict[str, Any] = {"base_url": base_url}
    if api_key_env is not None:
        options["api_key_env"] = api_key_env
    if temperature is not None:
        options["temperature"] = temperature
    if max_retries is not None:
        options["max_retries"] = max_retries
    if model_timeout is not None:
        options["timeout"] = model_timeout
    return agents.ModelUser(model, **options)


def simulator_lines(report: SimulatorReport) -> list[str]:
    """One scenario's simulator check, as ``scenarios check --user-model`` prints it."""
    if report.skipped is not None:
        # A scenario without a user has nothing to check; one without a solution is named.
        return (
            [] if report.skipped == "no user" else [f"skip  {report.scenario} ({report.skipped})"]
        )
    grade = report.grade
    graded = (
        f"solution {grade['score']:g}" + ("" if grade["passed"] else ", failed")
        if grade is not None
        else "not graded"
    )
    if report.error is not None:
        return [f"ERROR {report.scenario}: {one_line(report.error)}"]
    if report.ok:
        return [f"ok    {report.scenario} ({plural(report.turns, 'turn')}, {graded})"]
    lines = [
        f"DEPART {report.scenario}: {plural(len(report.departures), 'departure')} in "
        f"{plural(report.turns, 'turn')} ({graded})"
    ]
    for departure in report.departures:
        lines.append(
            f"      turn {departure.turn}: {departure.kind}: {one_line(departure.message)}"
        )
        if departure.said is not None:
            lines.append(f"        said:   {_cut(departure.said)}")
        if departure.scripted is not None:
            lines.append(f"        script: {_cut(departure.scripted)}")
    return lines


def simulator_totals(reports: list[SimulatorReport]) -> str:
    """The last line of ``scenarios check --user-model``."""
    checked = [report for report in reports if report.skipped is None]
    departed = [report for report in checked if not report.ok]
    departures = sum(len(report.departures) for report in checked)
    turns = sum(report.turns for report in checked)
    if not checked:
        return "no scenario here has a user and a reference solution: there was nothing to check"
    if not departed:
        return (
            f"the simulated user kept to its instructions in all {len(checked)} scenarios with a "
            f"user ({plural(turns, 'turn')})"
        )
    return (
        f"the simulated user departed in {len(departed)} of {len(checked)} scenarios with a "
        f"user ({plural(departures, 'departure')} in {plural(turns, 'turn')}): "
        + ", ".join(report.scenario for report in departed)
    )


def _cut(text: str, width: int = 100) -> str:
    flat = one_line(text)
    return flat if len(flat) <= width else flat[: width - 1] + "…"
