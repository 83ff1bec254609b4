"""``seahaven report``: read a run's results (and transcripts), or compare two runs of one pack.

``seahaven report RESULTS.jsonl`` prints the per-scenario and per-tag tables,
pass@k and pass^k for every k with intervals, the errored trials apart, and the
tokens and time; ``--html OUT.html`` writes the same as one self-contained page
with each failed trial's transcript, and ``--json`` prints it as JSON.
``seahaven report A.jsonl B.jsonl`` compares two runs instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from seahaven.cli.support import failures
from seahaven.registry.hookspecs import hookimpl

__all__ = ["report_command", "seahaven_cli", "write_page"]


def write_page(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all, readable by its owner only.

    A report holds what the agent and the tools said; it is the owner's to share.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}.partial")
    descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(aside, path)
    except BaseException:
        aside.unlink(missing_ok=True)
        raise


def report_command(
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS", help="A results file (seahaven eval --out).", show_default=False
        ),
    ],
    other: Annotated[
        Path | None,
        typer.Argument(
            metavar="OTHER",
            help="A second run's results file, of the same pack: compare the two.",
            show_default=False,
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option("--html", metavar="FILE", help="Write the report as one HTML page here."),
    ] = None,
    transcripts: Annotated[
        Path | None,
        typer.Option(
            "--transcripts",
            metavar="FILE",
            help="The run's transcripts (default: NAME.transcripts.jsonl beside RESULTS).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Report on a run of an eval, or compare two runs of one pack."""
    from seahaven.evaluation.report import compare_runs, load_run
    from seahaven.evaluation.report_html import comparison_page, run_page

    if transcripts is not None and other is not None:
        raise typer.BadParameter(
            "--transcripts goes with one results file; two runs are compared by their results",
            param_hint="--transcripts",
        )
    with failures():
        if html is not None and html.is_dir():
            raise typer.BadParameter(f"{html} is a directory; give a file", param_hint="--html")
        if other is None:
            run = load_run(results, transcripts)
            if html is not None:
                write_page(html, run_page(run))
            typer.echo(json.dumps(run.to_dict(), indent=2) if as_json else run.render())
        else:
            comparison = compare_runs(load_run(results), load_run(other))
            if html is not None:
                write_page(html, comparison_page(comparison))
            typer.echo(
                json.dumps(comparison.to_dict(), indent=2) if as_json else comparison.render()
            )
        if html is not None and not as_json:
            typer.echo(f"report page in {html}")


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven report``."""
    app.command("report", context_settings={"help_option_names": ["-h", "--help"]})(report_command)
