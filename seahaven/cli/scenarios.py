"""``seahaven scenarios list|show|check`` and ``seahaven eval``: packs of scenarios, and evals.

``scenarios list`` lists the installed packs, or one pack's scenarios;
``scenarios show PACK/ID`` prints one scenario whole; ``scenarios check PACK``
attacks every scenario's grader with mutants of its solution and exits 1
naming each finding (``--user-model NAME``: checks a model-played user against
the scripted one instead). ``eval PACK --policy module:function`` (or ``--model
NAME``, a model on an OpenAI-compatible endpoint: ``seahaven.cli.model_options``;
``--user-model NAME`` for the users: ``seahaven.cli.user_options``) runs trials
and appends one JSON line per trial to ``--out``, in this process (several at
once with ``--concurrency``), on Ray (``--ray``) or against a served world
(``--url``), and prints the summary; ``--replay FILE`` runs a transcripts file's
trials again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from seahaven.cli.support import Progress, fail, failures, one_line, plural
from seahaven.cli.user_options import (
    UserApiKeyEnvOption,
    UserBaseUrlOption,
    UserModelOption,
    UserTemperatureOption,
    model_user,
    simulator_lines,
    simulator_totals,
    stray_user_options,
)
from seahaven.registry.hookspecs import hookimpl

if TYPE_CHECKING:
    from seahaven.evaluation import ScenarioReport
    from seahaven.evaluation.findings import Finding
    from seahaven.scenarios import Scenario, ScenarioSet

__all__ = ["PACK_HELP", "JsonOption", "pack_argument", "scenarios_app", "seahaven_cli"]

scenarios_app = typer.Typer(
    name="scenarios",
    help="Packs of scenarios (tasks, graders, rewards): list them, show one, check a pack.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
PACK_HELP = "A pack: an installed pack's name, module:attr, or a folder with pack.yaml (./NAME)."


def pack_argument(name: str) -> ScenarioSet:
    """The pack a command's PACK argument names; a ``WorldBug`` naming the fix if none."""
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
    tag: Annotated[
        list[str] | None,
        typer.Option(
            "--tag",
            metavar="TAG",
            help="Only the scenarios that have this tag (repeatable: every tag given).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the installed packs, or the scenarios of one pack."""
    from seahaven.scenarios import pack_specs

    with failures():
        if pack_name is None:
            if split is not None or tag:
                option = "--split" if split is not None else "--tag"
                fail(f"{option} needs a PACK: seahaven scenarios list PACK {option} NAME")
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
        pack = pack_argument(pack_name)
        scenarios = pack.split(split)
        if tag:
            known = {name for scenario in scenarios for name in scenario.tags}
            unknown = [name for name in tag if name not in known]
            if unknown:
                where = f"split {split!r} of pack {pack.name!r}" if split else f"pack {pack.name!r}"
                fail(
                    f"no scenario of {where} has the tag {unknown[0]!r}; its tags: "
                    + (", ".join(sorted(known)) or "none")
                )
            scenarios = [item for item in scenarios if set(tag) <= set(item.tags)]
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
    pack_name: Annotated[str, typer.Argument(metavar="PACK", help=PACK_HELP)],
    allow_unsolved: Annotated[
        bool,
        typer.Option("--allow-unsolved", help="Accept scenarios without a reference solution."),
    ] = False,
    user_model: UserModelOption = None,
    user_base_url: UserBaseUrlOption = None,
    user_api_key_env: UserApiKeyEnvOption = None,
    user_temperature: UserTemperatureOption = None,
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario", metavar="ID", help="With --user-model: only this scenario (repeatable)."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Check a pack: each grader attacked by mutants of its own solution (and the basics).

    With --user-model, check the simulated users instead: each scenario's reference
    conversation played against the model-played user, and every turn where it departed
    from its instructions (or its script) named.
    """
    from seahaven.evaluation import check_pack

    stray_user_options(user_model, user_base_url, user_api_key_env, user_temperature)
    if scenario and user_model is None:
        raise typer.BadParameter("--scenario goes with --user-model", param_hint="--scenario")
    if user_model is not None:
        with failures():
            source = model_user(
                user_model,
                base_url=user_base_url,
                api_key_env=user_api_key_env,
                temperature=user_temperature,
            )
            _check_simulator(pack_argument(pack_name), source, scenario, as_json)
        return
    with failures():
        pack = pack_argument(pack_name)
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


def _check_simulator(pack: ScenarioSet, source: Any, only: list[str] | None, as_json: bool) -> None:
    from seahaven.evaluation import check_simulator

    progress = Progress()
    with_user = [item for item in pack if item.user is not None and (not only or item.id in only)]
    seen = 0

    def shown(report: Any) -> None:
        nonlocal seen
        seen += 0 if report.skipped else 1
        if not as_json:
            progress.clear()
            for line in simulator_lines(report):
                typer.echo(line)
            progress.show(f"checked {seen}/{len(with_user)}")

    reports = check_simulator(pack, source, scenarios=only, progress=shown)
    progress.clear()
    if as_json:
        typer.echo(json.dumps([report.to_dict() for report in reports], indent=2))
    else:
        typer.echo(simulator_totals(reports))
    if any(not report.ok for report in reports):
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


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven scenarios`` (``seahaven eval`` is ``seahaven.cli.evaluate``'s)."""
    app.add_typer(scenarios_app)
