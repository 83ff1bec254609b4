"""``seahaven scenarios list|show|check`` and ``seahaven eval``: packs of scenarios, and evals.

``scenarios list`` lists the installed packs, or one pack's scenarios;
``scenarios show PACK/ID`` prints one scenario whole; ``scenarios check PACK``
attacks every scenario's grader with mutants of its solution and exits 1
naming each finding. ``eval PACK --policy module:function`` (or ``--model NAME``,
a model on an OpenAI-compatible endpoint: ``seahaven.cli.model_options``) runs
trials and appends one JSON line per trial to ``--out``, in this process (several
at once with ``--concurrency``), on Ray (``--ray``) or against a served world
(``--url``), and prints the summary.
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
from seahaven.cli.support import (
    Progress,
    StorageOption,
    fail,
    failures,
    one_line,
    plural,
    reported_here,
)
from seahaven.extras import expose
from seahaven.hookspecs import hookimpl

if TYPE_CHECKING:
    from seahaven.evaluation import ScenarioReport, TrialResult, TrialRunner
    from seahaven.evaluation.findings import Finding
    from seahaven.scenarios import Scenario, ScenarioSet

__all__ = ["scenarios_app", "seahaven_cli"]

scenarios_app = typer.Typer(
    name="scenarios",
    help="Packs of scenarios (tasks, graders, rewards): list them, show one, check a pack.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
_PACK_HELP = "A pack: an installed pack's name, module:attr, or a folder with pack.yaml (./NAME)."
# seahaven.evaluation.DEFAULT_MAX_CONSECUTIVE_ERRORS, written here so that building the
# command line does not import the evaluation package (a test holds the two equal).
_MAX_ERRORS = 5


def _pack(name: str) -> ScenarioSet:
    from seahaven.errors import WorldBug
    from seahaven.scenarios import PACK_FILE, is_pack_path, load_pack

    try:
        return load_pack(name)
    except WorldBug as error:
        # A bare word is a registered name only; say so when a folder of that name is here.
        if not is_pack_path(name) and ":" not in name and (Path(name) / PACK_FILE).is_file():
            raise WorldBug(
                f"{error}; ./{name} holds a {PACK_FILE}: write ./{name} to load that folder"
            ) from None
        raise


def _scenario_row(pack: ScenarioSet, scenario: Scenario) -> dict[str, Any]:
    return {
        "id": scenario.id,
        "world": scenario.world_name,
        "splits": pack.split_of(scenario.id),
        "tags": list(scenario.tags),
        "budget": scenario.budget,
        "solved": scenario.solution is not None,
        "hash": scenario.hash,
        "instructions": scenario.instructions,
    }


@scenarios_app.command("list")
def list_scenarios(
    pack_name: Annotated[
        str | None,
        typer.Argument(
            metavar="PACK", help="A pack's name: list its scenarios.", show_default=False
        ),
    ] = None,
    split: Annotated[
        str | None,
        typer.Option("--split", metavar="SPLIT", help="Only the scenarios of this split."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the installed packs, or the scenarios of one pack."""
    from seahaven.scenarios import pack_specs

    with failures():
        if pack_name is None:
            if split is not None:
                fail("--split needs a PACK: seahaven scenarios list PACK --split NAME")
            rows: list[dict[str, Any]] = []
            problems: list[str] = []
            for spec in pack_specs():
                try:
                    pack = spec.load()
                except Exception as error:
                    problems.append(f"{spec.describe()}: {one_line(str(error))}")
                    continue
                rows.append(
                    {
                        "name": pack.name,
                        "version": pack.version,
                        "scenarios": len(pack),
                        "splits": {name: len(ids) for name, ids in pack.splits.items()},
                        "distribution": spec.distribution,
                        "description": pack.description,
                    }
                )
            for problem in problems:
                typer.echo(f"error: {problem}", err=True)
            if as_json:
                typer.echo(json.dumps(rows, indent=2))
            elif not rows:
                typer.echo(
                    "no packs of scenarios are installed; a world distribution publishes one "
                    "under the seahaven.scenarios entry-point group (the company world's does)"
                )
            else:
                for row in rows:
                    splits = ", ".join(f"{name} {count}" for name, count in row["splits"].items())
                    typer.echo(
                        f"{row['name']} {row['version']}: {plural(row['scenarios'], 'scenario')}"
                        + (f" ({splits})" if splits else "")
                        + (f" - {one_line(row['description'])}" if row["description"] else "")
                    )
            if problems:
                raise typer.Exit(1)
            return
        pack = _pack(pack_name)
        scenarios = pack.split(split)
        rows = [_scenario_row(pack, scenario) for scenario in scenarios]
        if as_json:
            typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        width = max((len(row["id"]) for row in rows), default=0)
        for row in rows:
            splits = ",".join(row["splits"]) or "-"
            first = one_line(row["instructions"])
            if len(first) > 70:
                first = first[:69] + "…"
            typer.echo(f"{row['id'].ljust(width)}  {splits:<10}  {first}")


@scenarios_app.command("show")
def show_scenario(
    reference: Annotated[str, typer.Argument(metavar="SCENARIO", help="The scenario, as pack/id.")],
    as_json: JsonOption = False,
) -> None:
    """Show one scenario whole: its start, instructions, grader, solution and pack's policy."""
    from seahaven.scenarios import find_scenario

    with failures():
        pack, scenario = find_scenario(reference)
        data = {
            "pack": pack.name,
            "pack_version": pack.version,
            "splits": pack.split_of(scenario.id),
            "hash": scenario.hash,
            **scenario.to_data(),
        }
        if pack.policy is not None:
            # The pack's rules are part of what the agent is told in every one of its scenarios.
            data["policy"] = pack.policy
        if as_json:
            typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
            return
        import yaml

        typer.echo(f"# {pack.name}/{scenario.id} (hash {scenario.hash[:12]})")
        typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip())


def _counted(report: ScenarioReport) -> str:
    counts = report.mutants
    if not counts:
        return ""
    skipped = sum(counts.get("skipped", {}).values())
    text = f"{plural(counts.get('generated', 0), 'mutant')}: {counts.get('killed', 0)} killed"
    if counts.get("survived"):
        text += f", {counts['survived']} survived"
    if skipped:
        text += f", {skipped} skipped"
    benign = counts.get("benign_run", 0)
    if benign:
        broken = counts.get("benign_broken", 0)
        text += f"; {plural(benign, 'right variant')}" + (
            f", {broken} failed" if broken else " passed"
        )
    return text


def _call_text(call: dict[str, Any]) -> str:
    arguments = ", ".join(
        f"{name}={json.dumps(value, ensure_ascii=False)}"
        for name, value in (call.get("arguments") or {}).items()
    )
    text = f"{call['tool']}({arguments})"
    if len(text) > 90:
        text = text[:89] + "…"
    return text + (" -> refused" if call.get("error") else "")


def _said(finding: Finding) -> str:
    """A finding as the scenario's line names it: the mutant and its fate, or the message."""
    if finding.kind in ("survived", "broken"):
        return f"{finding.mutant} {finding.kind}"
    return finding.message


def _report_lines(report: ScenarioReport) -> list[str]:
    counted = _counted(report)
    if report.ok:
        solved = report.solution_grade
        note = f"solution 1, idle {report.idle_grade.score if report.idle_grade else 0:.2g}"
        detail = "; ".join(part for part in (note if solved else "", counted) if part)
        lines = [f"ok    {report.scenario}" + (f" ({detail})" if detail else "")]
    else:
        findings = [finding for finding in report.findings if not finding.accepted]
        by_line = {finding.line(): finding for finding in findings}
        said = [
            _said(by_line[problem]) if problem in by_line else problem
            for problem in report.problems
        ]
        lines = [f"FAIL  {report.scenario}: " + "; ".join(one_line(text) for text in said)]
        if counted:
            lines.append(f"      {counted}")
        for finding in findings:
            if finding.mutant is None and not finding.fix:
                continue  # said whole on the first line
            named = f" {finding.mutant}" if finding.mutant else ""
            lines.append(f"      {finding.kind}{named}: {one_line(finding.message)}")
            if finding.calls or finding.submitted:
                calls = [_call_text(call) for call in finding.calls]
                lines.append("        calls: " + ("; ".join(calls) or "none"))
            if finding.grade is not None:
                verdict = "passed" if finding.grade.passed else "failed"
                lines.append(f"        grade: {finding.grade.score:g}, {verdict}")
            if finding.fix:
                lines.append(f"        fix: {one_line(finding.fix)}")
    for finding in report.accepted:
        lines.append(f"      accepted {finding.mutant}: {one_line(finding.accepted or '')}")
    return lines


@scenarios_app.command("check")
def check(
    pack_name: Annotated[str, typer.Argument(metavar="PACK", help=_PACK_HELP)],
    allow_unsolved: Annotated[
        bool,
        typer.Option("--allow-unsolved", help="Accept scenarios without a reference solution."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Check a pack: each grader attacked by mutants of its own solution (and the basics)."""
    from seahaven.evaluation import check_pack

    with failures():
        pack = _pack(pack_name)
        progress = Progress()
        seen = 0

        def shown(report: ScenarioReport) -> None:
            nonlocal seen
            seen += 1
            if not as_json:
                progress.clear()
                for line in _report_lines(report):
                    typer.echo(line)
                progress.show(f"checked {seen}/{len(pack)}")

        reports = check_pack(pack, allow_unsolved=allow_unsolved, progress=shown)
        progress.clear()
        failed = [report for report in reports if not report.ok]
        if as_json:
            typer.echo(json.dumps([report.to_dict() for report in reports], indent=2))
        else:
            totals = _totals(reports)
            if failed:
                found = sum(
                    1 for report in failed for finding in report.findings if not finding.accepted
                )
                typer.echo(
                    f"{plural(len(failed), 'scenario')} of {len(reports)} in {pack.name} failed: "
                    + ", ".join(report.scenario for report in failed)
                    + (f" ({plural(found, 'finding')})" if found else ""),
                    err=True,
                )
            else:
                typer.echo(
                    f"all {len(reports)} scenarios of {pack.name} {pack.version} are sound"
                    + (f": {totals}" if totals else "")
                )
        if failed:
            raise typer.Exit(1)


def _totals(reports: list[ScenarioReport]) -> str:
    generated = sum(report.mutants.get("generated", 0) for report in reports)
    if not generated:
        return ""
    killed = sum(report.mutants.get("killed", 0) for report in reports)
    skipped = sum(sum(report.mutants.get("skipped", {}).values()) for report in reports)
    benign = sum(report.mutants.get("benign_run", 0) for report in reports)
    accepted = sum(len(report.accepted) for report in reports)
    text = f"{plural(generated, 'mutant')}, {killed} killed, {skipped} skipped"
    text += f"; {plural(benign, 'right variant')} passed"
    return text + (f"; {accepted} accepted" if accepted else "")


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
    )


def eval_command(
    pack_name: Annotated[str, typer.Argument(metavar="PACK", help=_PACK_HELP)],
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
    split: Annotated[
        str | None,
        typer.Option(
            "--split", metavar="SPLIT", help="Only this split's scenarios (default: all)."
        ),
    ] = None,
    trials: Annotated[
        int, typer.Option("--trials", "-k", metavar="N", min=1, help="Trials of each scenario.")
    ] = 1,
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
        typer.Option("--workers", metavar="N", min=1, help="With --ray: how many actors."),
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
    from seahaven.evaluation import EvalStopped, default_transcripts_path, evaluate, load_policy

    if (policy is None) == (model is None):
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
            "--max-retries": max_retries,
            "--model-timeout": model_timeout,
        }
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
        if transcripts is None and model is not None and ray_address is None and url is None:
            transcripts = default_transcripts_path(out)
        if transcripts is not None and transcripts.is_dir():
            fail(f"--transcripts {transcripts} is a directory; give a file")
        run = RunOptions(concurrency, trial_timeout, transcripts)
        runner = _runner(ray_address, url, workers, storage, run)
        pack = _pack(pack_name)
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
            summary, _ = evaluate(
                pack,
                chosen,
                split=split,
                trials=trials,
                scenarios=scenario,
                out=out,
                resume=resume,
                runner=runner,
                progress=shown,
                max_consecutive_errors=max_errors or None,
                transcripts=transcripts,
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
    """Add ``seahaven scenarios`` and ``seahaven eval``."""
    app.add_typer(scenarios_app)
    app.command("eval", context_settings={"help_option_names": ["-h", "--help"]})(eval_command)
