"""``seahaven eval``: a pack's scenarios played by a policy or a model, and summarized.

``eval PACK --policy module:function`` (or ``--model NAME``, a model on an
OpenAI-compatible endpoint: ``seahaven.cli.model_options``; ``--user-model
NAME`` for the scenarios' users: ``seahaven.cli.user_options``) runs trials and
appends one JSON line per trial to ``--out``, in this process (several at once
with ``--concurrency``), over this machine's processes (``--workers``), on Ray
(``--ray``) or against a served world (``--url``), and prints the summary.
``--replay TRANSCRIPTS`` runs the trials a transcripts file holds again,
exactly, and grades them again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from seahaven.cli.model_options import (
    ApiKeyEnvOption,
    BaseUrlOption,
    ConcurrencyOption,
    MaxRetriesOption,
    MaxTurnsOption,
    ModelOption,
    ModelTimeoutOption,
    RunOptions,
    TemperatureOption,
    TranscriptsOption,
    TrialTimeoutOption,
    model_policy,
    status_line,
)
from seahaven.cli.scenarios import PACK_HELP, JsonOption, pack_argument
from seahaven.cli.support import Progress, StorageOption, fail, failures, reported_here
from seahaven.cli.user_options import (
    ReplayOption,
    UserApiKeyEnvOption,
    UserBaseUrlOption,
    UserModelOption,
    UserTemperatureOption,
    model_user,
    stray_user_options,
)
from seahaven.registry.extras import expose
from seahaven.registry.hookspecs import hookimpl

if TYPE_CHECKING:
    from seahaven.evaluation import TrialResult, TrialRunner

__all__ = ["eval_command", "seahaven_cli"]

# seahaven.evaluation.DEFAULT_MAX_CONSECUTIVE_ERRORS, written here so that building the
# command line does not import the evaluation package (a test holds the two equal).
_MAX_ERRORS = 5


def _runner(
    ray_address: str | None,
    url: str | None,
    workers: int | None,
    storage: str | None,
    run: RunOptions,
) -> TrialRunner:
    from seahaven.evaluation import in_process

    if ray_address is not None and url is not None:
        raise typer.BadParameter("give --ray or --url, not both", param_hint="--ray")
    if (ray_address is not None or url is not None) and run.concurrency is not None:
        raise typer.BadParameter(
            "--concurrency runs trials at once in this process; on Ray give --workers, and "
            "a served world's trials run one at a time",
            param_hint="--concurrency",
        )
    if url is not None and workers is not None:
        raise typer.BadParameter(
            "--workers spreads trials over this machine's processes (or Ray's actors with "
            "--ray); a served world's trials run one at a time",
            param_hint="--workers",
        )
    if url is not None and run.user_played:
        raise typer.BadParameter(
            "a served world plays each scenario's user on the server, as the scenario says; "
            "--user-model and --replay run in this process or on Ray (--ray)",
            param_hint="--user-model",
        )
    if (ray_address is not None or url is not None) and run.transcripts is not None:
        raise typer.BadParameter(
            "transcripts are kept for trials in this process; drop --ray or --url",
            param_hint="--transcripts",
        )
    if ray_address is not None:
        ray_plugin: Any = expose("seahaven.ray")
        runner: TrialRunner = ray_plugin.trial_runner(
            None if ray_address == "local" else ray_address,
            workers=workers,
            storage=storage,
            trial_timeout=run.trial_timeout,
        )
        return runner
    if url is not None:
        if storage is not None:
            raise typer.BadParameter(
                "a served world keeps its stores where its server does (SEAHAVEN_STORAGE "
                "where it runs); drop --storage with --url",
                param_hint="--storage",
            )
        if run.trial_timeout is not None:
            raise typer.BadParameter(
                "--trial-timeout applies in this process and on Ray; against a served world "
                "the server's own limits apply",
                param_hint="--trial-timeout",
            )
        openenv_plugin: Any = expose("seahaven.openenv")
        served: TrialRunner = openenv_plugin.trial_runner(url)
        return served
    return in_process(
        storage=storage,
        concurrency=run.concurrency,
        trial_timeout=run.trial_timeout,
        record=run.transcripts is not None,
        workers=workers or 1,
    )


def eval_command(
    pack_name: Annotated[str, typer.Argument(metavar="PACK", help=PACK_HELP)],
    out: Annotated[
        Path, typer.Option("--out", metavar="FILE", help="Append one JSON result per trial here.")
    ],
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy",
            metavar="MODULE:FUNCTION",
            help="The policy: a function of the session (or give --model).",
        ),
    ] = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    temperature: TemperatureOption = None,
    max_turns: MaxTurnsOption = None,
    max_retries: MaxRetriesOption = None,
    model_timeout: ModelTimeoutOption = None,
    user_model: UserModelOption = None,
    user_base_url: UserBaseUrlOption = None,
    user_api_key_env: UserApiKeyEnvOption = None,
    user_temperature: UserTemperatureOption = None,
    replay: ReplayOption = None,
    split: Annotated[
        str | None,
        typer.Option(
            "--split", metavar="SPLIT", help="Only this split's scenarios (default: all)."
        ),
    ] = None,
    trials: Annotated[
        int | None,
        typer.Option(
            "--trials", "-k", metavar="N", min=1, help="Trials of each scenario (default 1)."
        ),
    ] = None,
    scenario: Annotated[
        list[str] | None,
        typer.Option("--scenario", metavar="ID", help="Only this scenario (repeatable)."),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Run only the trials --out does not hold yet.")
    ] = False,
    concurrency: ConcurrencyOption = None,
    trial_timeout: TrialTimeoutOption = None,
    transcripts: TranscriptsOption = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Run on Ray: 'local' starts a cluster here, else a cluster's address.",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option("--url", metavar="URL", help="Run against a served world (seahaven serve)."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            metavar="N",
            min=1,
            help="Processes on this machine to spread the trials over, which share the "
            "concurrency (default 1: this one); with --ray, how many actors.",
        ),
    ] = None,
    storage: StorageOption = None,
    max_errors: Annotated[
        int,
        typer.Option(
            "--max-errors-in-a-row",
            metavar="N",
            min=0,
            help="Stop after N errored trials in a row (failures that are not the agent's: "
            "the world, the server, the runner, the model's API); 0 never stops.",
        ),
    ] = _MAX_ERRORS,
    as_json: JsonOption = False,
) -> None:
    """Run a pack's scenarios with a policy or a model, --trials times each, and summarize."""
    from seahaven.evaluation import (
        EvalStopped,
        default_transcripts_path,
        evaluate,
        load_policy,
        replay_transcripts,
    )

    stray_user_options(user_model, user_base_url, user_api_key_env, user_temperature)
    if replay is not None:
        given_too = {"--policy": policy, "--model": model, "--user-model": user_model}
        clash = [name for name, value in given_too.items() if value is not None]
        if clash or trials is not None or split is not None:
            named = clash or (["--trials"] if trials is not None else ["--split"])
            raise typer.BadParameter(
                f"--replay plays the trials the transcripts file holds, with the agent and the "
                f"users it recorded; drop {', '.join(named)}",
                param_hint="--replay",
            )
        if not replay.is_file():
            raise typer.BadParameter(
                f"{replay} is not a transcripts file (seahaven eval writes one beside --out)",
                param_hint="--replay",
            )
    elif (policy is None) == (model is None):
        raise typer.BadParameter(
            "give the agent: --policy MODULE:FUNCTION, or --model NAME (a model on an "
            "OpenAI-compatible endpoint); one of them, not both",
            param_hint="--policy / --model",
        )
    if model is None:
        given = {
            "--base-url": base_url,
            "--api-key-env": api_key_env,
            "--temperature": temperature,
            "--max-turns": max_turns,
        }
        if user_model is None:
            # They configure a model-played user too: its retries follow the agent's rules.
            given.update({"--max-retries": max_retries, "--model-timeout": model_timeout})
        stray = [name for name, value in given.items() if value is not None]
        if stray:
            raise typer.BadParameter(
                f"{', '.join(stray)} configure --model; a --policy configures itself",
                param_hint=stray[0],
            )
    # A world's bug is reported as its trial's error (and in the summary), not as the
    # dispatch log's traceback on every trial.
    with failures(), reported_here():
        if out.is_dir():
            fail(f"--out {out} is a directory; give a file to append results to")
        played = model is not None or user_model is not None or replay is not None
        if transcripts is None and played and ray_address is None and url is None:
            transcripts = default_transcripts_path(out)
        if transcripts is not None and transcripts.is_dir():
            fail(f"--transcripts {transcripts} is a directory; give a file")
        if (
            replay is not None
            and transcripts is not None
            and replay.resolve() == transcripts.resolve()
        ):
            fail(
                f"--replay {replay} is the file this run's transcripts would go to; give --out "
                "another name, or --transcripts another file"
            )
        run = RunOptions(
            concurrency,
            trial_timeout,
            transcripts,
            user_played=user_model is not None or replay is not None,
        )
        runner = _runner(ray_address, url, workers, storage, run)
        pack = pack_argument(pack_name)
        chosen: Any = None
        if replay is None:
            chosen = (
                load_policy(policy)
                if policy is not None
                else model_policy(
                    str(model),
                    base_url=base_url,
                    api_key_env=api_key_env,
                    temperature=temperature,
                    max_turns=max_turns,
                    max_retries=max_retries,
                    model_timeout=model_timeout,
                )
            )
        user = (
            model_user(
                user_model,
                base_url=user_base_url if user_base_url is not None else base_url,
                api_key_env=user_api_key_env if user_api_key_env is not None else api_key_env,
                temperature=user_temperature,
                max_retries=max_retries,
                model_timeout=model_timeout,
            )
            if user_model is not None
            else None
        )
        progress = Progress()
        started = time.monotonic()
        passed = errored = tokens = ran = 0

        def shown(result: TrialResult, done: int, total: int) -> None:
            nonlocal passed, errored, tokens, ran
            passed += 1 if result.passed else 0
            errored += 1 if result.errored else 0
            tokens += (result.usage or {}).get("total_tokens", 0)
            ran += 1
            progress.show(status_line(done, total, passed, errored, tokens, ran, started))

        try:
            if replay is not None:
                summary, _ = replay_transcripts(
                    pack,
                    replay,
                    scenarios=scenario,
                    out=out,
                    resume=resume,
                    record=transcripts,
                    runner=runner,
                    progress=shown,
                    max_consecutive_errors=max_errors or None,
                )
            else:
                summary, _ = evaluate(
                    pack,
                    chosen,
                    split=split,
                    trials=trials or 1,
                    scenarios=scenario,
                    out=out,
                    resume=resume,
                    runner=runner,
                    progress=shown,
                    max_consecutive_errors=max_errors or None,
                    transcripts=transcripts,
                    user=user,
                )
        except EvalStopped as stopped:
            progress.clear()
            fail(str(stopped))
        except KeyboardInterrupt:
            progress.clear()
            typer.echo(
                f"interrupted: the finished trials are in {out}; run the same command with "
                "--resume to run the rest",
                err=True,
            )
            raise typer.Exit(130) from None
        progress.clear()
        if as_json:
            typer.echo(json.dumps(summary.to_dict(), indent=2))
        else:
            typer.echo(summary.render())
            typer.echo(f"results in {out}")
            if transcripts is not None:
                typer.echo(f"transcripts in {transcripts}")


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven eval``."""
    app.command("eval", context_settings={"help_option_names": ["-h", "--help"]})(eval_command)
