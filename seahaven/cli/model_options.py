"""What ``seahaven eval`` takes to run a model, and how it runs trials at once.

``--model NAME`` plays the pack with the agents plugin's ``ChatAgent`` (a model
on any OpenAI-compatible endpoint: ``--base-url``, ``--api-key-env``,
``--temperature``, ``--max-turns``, ``--max-retries``, ``--model-timeout``);
``--concurrency``, ``--trial-timeout`` and ``--transcripts`` apply to any
policy run in this process. Without the plugin, ``--model`` fails in one line
naming the command that installs it, and the core never imports ``openai``.
``status_line`` is the progress line a terminal shows while trials run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from seahaven.cli.support import fail

__all__ = [
    "AGENTS_INSTALL",
    "ApiKeyEnvOption",
    "BaseUrlOption",
    "ConcurrencyOption",
    "MaxRetriesOption",
    "MaxTurnsOption",
    "ModelOption",
    "ModelTimeoutOption",
    "RunOptions",
    "TemperatureOption",
    "TranscriptsOption",
    "TrialTimeoutOption",
    "agents_plugin",
    "model_policy",
    "status_line",
]

AGENTS_INSTALL = 'pip install -e plugins/agents (in a checkout) or pip install "seahaven[agents]"'

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="NAME",
        help="Play with this model (the agents plugin's ChatAgent), on an OpenAI-compatible "
        "endpoint; instead of --policy.",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="With --model: the server's base URL, such as http://127.0.0.1:8000/v1 "
        "(default: OPENAI_BASE_URL, else OpenAI's).",
    ),
]
ApiKeyEnvOption = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        metavar="VAR",
        help="With --model: the environment variable holding the API key "
        "(default: OPENAI_API_KEY).",
    ),
]
TemperatureOption = Annotated[
    float | None,
    typer.Option(
        "--temperature", metavar="T", min=0.0, help="With --model: the sampling temperature."
    ),
]
MaxTurnsOption = Annotated[
    int | None,
    typer.Option(
        "--max-turns", metavar="N", min=1, help="With --model: model calls a trial may make."
    ),
]
MaxRetriesOption = Annotated[
    int | None,
    typer.Option(
        "--max-retries",
        metavar="N",
        min=0,
        help="With --model: tries again after a failed model call (429, 5xx, timeout).",
    ),
]
ModelTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--model-timeout",
        metavar="S",
        min=0.001,
        help="With --model: seconds one model call may take before it is tried again.",
    ),
]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "-j",
        metavar="N",
        min=1,
        help="Trials at once, over all --workers (default: 8 with a model or an async policy, "
        "else one per worker).",
    ),
]
TrialTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--trial-timeout",
        metavar="S",
        min=0.001,
        help="End a trial whose policy plays longer than S seconds (the agent's failure).",
    ),
]
TranscriptsOption = Annotated[
    Path | None,
    typer.Option(
        "--transcripts",
        metavar="FILE",
        help="Append each trial's transcript here (default with --model: beside --out, "
        "as NAME.transcripts.jsonl).",
    ),
]


@dataclass(frozen=True)
class RunOptions:
    """How trials run: at once, within a time limit, with their transcripts written where."""

    concurrency: int | None = None
    trial_timeout: float | None = None
    transcripts: Path | None = None
    # Whether the scenarios' users are played by something of the run's (--user-model, --replay).
    user_played: bool = False


def agents_plugin(option: str) -> Any:
    """``seahaven.agents``, which ``option`` needs; one line naming the install if absent."""
    from seahaven.registry.extras import expose

    try:
        return expose("seahaven.agents")
    except ImportError as missing:
        if getattr(missing, "name", None) != "seahaven.agents":
            raise
        fail(f"{option} needs the seahaven-agents plugin, which is not installed: {AGENTS_INSTALL}")


def model_policy(
    model: str,
    *,
    base_url: str | None,
    api_key_env: str | None,
    temperature: float | None,
    max_turns: int | None,
    max_retries: int | None,
    model_timeout: float | None,
) -> Any:
    """The agents plugin's ``ChatAgent`` for ``--model``; one line naming the install if absent."""
    agents = agents_plugin("--model")
    options: dict[str, Any] = {"base_url": base_url}
    if api_key_env is not None:
        options["api_key_env"] = api_key_env
    if temperature is not None:
        options["temperature"] = temperature
    if max_turns is not None:
        options["max_turns"] = max_turns
    if max_retries is not None:
        options["max_retries"] = max_retries
    if model_timeout is not None:
        options["timeout"] = model_timeout
    return agents.ChatAgent(model, **options)


def status_line(
    done: int, total: int, passed: int, errored: int, tokens: int, ran: int, started: float
) -> str:
    """The progress line: trials done of all, passed, errored, tokens, and the time left.

    ``ran`` is how many of ``done`` ran in this run (a resumed run's others were
    in the file already), which is what the time left is reckoned from.
    """
    if not done:
        return f"trials 0/{total}"
    elapsed = max(time.monotonic() - started, 1e-9)
    parts = [f"trials {done}/{total}", f"{passed} passed"]
    if errored:
        parts.append(f"{errored} errored")
    if tokens:
        parts.append(f"{tokens:,} tokens")
    if ran:
        left = (total - done) * elapsed / ran
        parts.append(f"{_duration(left)} left" if done < total else f"{ran / elapsed:.1f}/s")
    return ", ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"
