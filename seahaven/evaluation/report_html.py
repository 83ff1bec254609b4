"""A report as one HTML page: self-contained, no network, nothing to build.

``run_page(report)`` writes a ``RunReport`` as a page: the numbers, a plot of
pass^k and pass@k by k with their intervals (inline SVG), a bar per scenario
and per tag, the errored trials, and for each failed trial its transcript beside
the grader's checks and the rows the episode changed. ``comparison_page``
writes a ``Comparison``. Everything is in the one file: the style, a few lines
of script (filtering the tables, opening every trial), the plot.

Transcripts are a model's output, and results carry what tools returned: all
of it is hostile text. Every piece of it is escaped where it is written, and
the page's Content-Security-Policy forbids any network access and any script
but its own (by hash), so a string that slipped through could still do nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from seahaven.evaluation.htmlparts import bar, cut, e, number, page
from seahaven.evaluation.report import Comparison, RunReport
from seahaven.evaluation.transcript_html import trial_html

__all__ = ["FAILED_SHOWN", "comparison_page", "run_page"]

# How many failed trials get their transcript on the page.
FAILED_SHOWN = 300


# --- one run ---------------------------------------------------------------------------------


def run_page(report: RunReport) -> str:
    """The page of one run (see the module)."""
    title = f"{report.pack}: {', '.join(report.policies) or 'eval'}"
    parts = [
        "<header>",
        f"<h1>Pack {e(report.pack)} {e(report.pack_version)}</h1>",
        f'<p class="muted">played by {e(", ".join(report.policies) or "an unnamed policy")}'
        f" &middot; results <code>{e(report.path)}</code>"
        + (
            f" &middot; transcripts <code>{e(report.transcripts_path)}</code>"
            if report.transcripts_path is not None
            else " &middot; no transcripts file beside it"
        )
        + "</p></header>",
        _overview(report),
        _pass_section(report),
        _scenario_section(report),
        _tag_section(report),
        _errored_section(report),
        _failed_section(report),
    ]
    return page(f"Seahaven report: {title}", "".join(parts))


def _overview(report: RunReport) -> str:
    summary = report.summary
    scored = summary.results - summary.errored
    passed = sum(1 for result in report.results if not result.errored and result.passed)
    low, high = summary.interval
    cards = [
        ("mean score", f"{summary.mean:.3f}", f"95% CI {low:.3f} to {high:.3f}"),
        ("scored trials", f"{scored}", f"{passed} passed, {scored - passed} failed"),
        ("errored", f"{summary.errored}", "not the agent's; not scored"),
        ("scenarios", f"{summary.scenarios}", f"up to {summary.trials} trials each"),
        (
            "time",
            f"{report.seconds:.1f} s",
            f"{report.seconds / max(1, summary.results):.2f} s a trial"
            + (
                f"; {report.model_seconds:.1f} s on the model"
                if report.model_seconds is not None
                else ""
            ),
        ),
    ]
    usage = summary.usage
    if usage:
        cards.append(
            (
                "tokens",
                f"{usage.get('total_tokens', 0):,}",
                f"{usage.get('prompt_tokens', 0):,} prompt, "
                f"{usage.get('completion_tokens', 0):,} completion, "
                f"{usage.get('model_calls', 0):,} calls, {usage.get('retries', 0):,} retries",
            )
        )
    inner = "".join(
        f'<div class="card"><span class="muted">{e(label)}</span><b>{e(value)}</b>'
        f'<span class="muted">{e(note)}</span></div>'
        for label, value, note in cards
    )
    return f'<section id="overview"><div class="cards">{inner}</div></section>'


def _pass_section(report: RunReport) -> str:
    summary = report.summary
    if not summary.pass_hat:
        return '<section id="pass-k"><h2>pass^k</h2><p>No scored trials.</p></section>'
    rows = "".join(
        f'<tr><td class="num">{k}</td><td class="num">{summary.pass_at[k]:.3f}</td>'
        f'<td class="muted">{report.pass_at_intervals[k][0]:.3f} to '
        f"{report.pass_at_intervals[k][1]:.3f}</td>"
        f'<td class="num">{summary.pass_hat[k]:.3f}</td>'
        f'<td class="muted">{report.pass_hat_intervals[k][0]:.3f} to '
        f"{report.pass_hat_intervals[k][1]:.3f}</td></tr>"
        for k in sorted(summary.pass_hat)
    )
    table = (
        '<table id="pass-table"><tr><th class="num">k</th><th class="num">pass@k</th>'
        '<th>95% CI</th><th class="num">pass^k</th><th>95% CI</th></tr>'
        f"{rows}</table>"
    )
    return (
        '<section id="pass-k"><h2>pass^k and pass@k by k</h2>'
        '<p class="muted">pass^k: the chance that all k trials of a scenario pass; pass@k: that '
        "at least one does; averaged over scenarios, with 95% bootstrap intervals over "
        f"scenarios.</p>{_plot(report)}{table}</section>"
    )


def _plot(report: RunReport) -> str:
    summary = report.summary
    ks = sorted(summary.pass_hat)
    width, height, left, right, top, bottom = 520, 240, 44, 16, 12, 34
    inner_w, inner_h = width - left - right, height - top - bottom

    def x(k: int) -> float:
        return left + (inner_w / 2 if len(ks) == 1 else (k - ks[0]) * inner_w / (ks[-1] - ks[0]))

    def y(value: float) -> float:
        return top + (1.0 - max(0.0, min(1.0, value))) * inner_h

    shapes = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        shapes.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
            'stroke="#dde3ea"/>'
            f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>'
        )
    for k in ks:
        shapes.append(
            f'<text x="{x(k):.1f}" y="{height - bottom + 16}" text-anchor="middle">{k}</text>'
        )
    shapes.append(
        f'<text x="{left + inner_w / 2:.1f}" y="{height - 4}" text-anchor="middle">k</text>'
    )
    for values, intervals, colour, dash, name in (
        (summary.pass_at, report.pass_at_intervals, "#8aa4c8", "5 4", "pass@k"),
        (summary.pass_hat, report.pass_hat_intervals, "#1f5fbf", "", "pass^k"),
    ):
        points = " ".join(f"{x(k):.1f},{y(values[k]):.1f}" for k in ks)
        shapes.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"'
            + (f' stroke-dasharray="{dash}"' if dash else "")
            + f"><title>{name}</title></polyline>"
        )
        for k in ks:
            low, high = intervals[k]
            shapes.append(
                f'<line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{y(low):.1f}" y2="{y(high):.1f}" '
                f'stroke="{colour}" stroke-width="1.5"/>'
                f'<circle cx="{x(k):.1f}" cy="{y(values[k]):.1f}" r="3.5" fill="{colour}">'
                f"<title>{name} at k={k}: {values[k]:.3f} ({low:.3f} to {high:.3f})</title>"
                "</circle>"
            )
    legend = (
        f'<text x="{width - right - 150}" y="{top + 12}" fill="#1f5fbf">— pass^k</text>'
        f'<text x="{width - right - 80}" y="{top + 12}" fill="#8aa4c8">- - pass@k</text>'
    )
    return (
        f'<svg id="pass-plot" role="img" aria-label="pass^k and pass@k by k" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"{''.join(shapes)}{legend}</svg>"
    )


def _scenario_section(report: RunReport) -> str:
    summary = report.summary
    rows = []
    for row in summary.per_scenario:
        rate = row.passed / row.trials if row.trials else None
        tags = "".join(
            f'<span class="tag">{e(tag)}</span>'
            for tag in report.scenario_tags.get(row.scenario, ())
        )
        worst = "-" if row.most_failed is None else f"{row.most_failed[0]} ({row.most_failed[1]})"
        rows.append(
            f'<tr data-filter="{e(row.scenario.lower())}"><td><code>{e(row.scenario)}</code>'
            f"<br>{tags}</td>"
            f'<td class="num">{row.trials}</td><td class="num">{row.passed}</td>'
            f'<td class="num">{row.errored}</td><td>{bar(rate)}</td>'
            f'<td class="num">{number(row.mean)}</td><td class="num">{number(row.pass_hat)}</td>'
            f"<td>{e(worst)}</td></tr>"
        )
    return (
        '<section id="scenarios"><h2>Scenarios</h2>'
        '<input id="filter" type="search" placeholder="Filter scenarios" aria-label="Filter">'
        '<table id="scenario-table"><tr><th>scenario</th><th class="num">trials</th>'
        '<th class="num">passed</th><th class="num">errored</th><th>pass rate</th>'
        f'<th class="num">mean</th><th class="num">pass^{summary.trials}</th>'
        f"<th>most failed check</th></tr>{''.join(rows)}</table></section>"
    )


def _tag_section(report: RunReport) -> str:
    if not report.tags:
        return ""
    rows = "".join(
        f'<tr><td><span class="tag">{e(row.tag)}</span></td>'
        f'<td class="num">{row.scenarios}</td><td class="num">{row.trials}</td>'
        f'<td class="num">{row.passed}</td>'
        f"<td>{bar(row.passed / row.trials if row.trials else None)}</td>"
        f'<td class="num">{number(row.mean)}</td><td class="num">{number(row.pass_hat)}</td>'
        "</tr>"
        for row in report.tags
    )
    return (
        '<section id="tags"><h2>Tags</h2><table id="tag-table"><tr><th>tag</th>'
        '<th class="num">scenarios</th><th class="num">trials</th><th class="num">passed</th>'
        f'<th>pass rate</th><th class="num">mean</th><th class="num">pass^{report.k}</th></tr>'
        f"{rows}</table></section>"
    )


def _errored_section(report: RunReport) -> str:
    errored = report.errored()
    if not errored:
        return ""
    items = "".join(
        f"<li><code>{e(result.scenario)}</code> #{result.trial}: "
        f"<b>{e(result.error.kind if result.error else '?')}</b> "
        f"{e(cut(result.error.message if result.error else '', 600))}</li>"
        for result in errored
    )
    return (
        f'<section id="errored"><h2>Errored trials ({len(errored)})</h2>'
        '<p class="muted">Failures that were not the agent\'s (the world, the runner, the '
        f"model's API): left out of every score; <code>--resume</code> runs them again.</p>"
        f"<ul>{items}</ul></section>"
    )


def _failed_section(report: RunReport) -> str:
    failed = report.failed()
    if not failed:
        return (
            '<section id="failed"><h2>Failed trials</h2>'
            "<p>None: every scored trial passed.</p></section>"
        )
    shown = failed[:FAILED_SHOWN]
    more = (
        f'<p class="muted">{len(failed) - len(shown)} more failed trials are not shown.</p>'
        if len(failed) > len(shown)
        else ""
    )
    trials = "".join(trial_html(result, report.transcripts.get(result.key)) for result in shown)
    return (
        f'<section id="failed"><h2>Failed trials ({len(failed)})</h2>'
        '<p><button id="open-all" type="button">Open every trial</button></p>'
        f"{trials}{more}</section>"
    )


# --- two runs --------------------------------------------------------------------------------


def comparison_page(comparison: Comparison) -> str:
    """The page comparing two runs of one pack."""
    a, b = comparison.a, comparison.b
    low, high = comparison.interval
    rows = "".join(
        f'<tr data-filter="{e(row.scenario.lower())}"><td><code>{e(row.scenario)}</code></td>'
        f'<td class="num">{number(row.a_mean)}</td><td>{bar(row.a_pass_rate)}</td>'
        f'<td class="num">{number(row.b_mean)}</td><td>{bar(row.b_pass_rate)}</td>'
        f'<td class="num">{"-" if row.difference is None else f"{row.difference:+.3f}"}</td>'
        f"<td>{e(row.flipped or '')}</td></tr>"
        for row in comparison.rows
    )

    def names(values: Iterable[str]) -> str:
        return ", ".join(f"<code>{e(value)}</code>" for value in values) or "none"

    body = (
        f"<header><h1>Pack {e(a.pack)}: two runs compared</h1>"
        f'<p class="muted">A: <code>{e(a.path)}</code> ({e(", ".join(a.policies))}) &middot; '
        f"B: <code>{e(b.path)}</code> ({e(', '.join(b.policies))})</p></header>"
        '<section id="difference"><div class="cards"><div class="card">'
        '<span class="muted">mean score, B - A</span>'
        f'<b>{comparison.difference:+.3f}</b><span class="muted">95% CI {low:+.3f} to '
        f"{high:+.3f} (paired bootstrap over scenarios)</span></div></div>"
        f"<p>Flipped up (now pass): {names(r.scenario for r in comparison.flipped('up'))}</p>"
        f"<p>Flipped down (now fail): {names(r.scenario for r in comparison.flipped('down'))}</p>"
        + (f"<p>Scored in A only: {names(comparison.only_a)}</p>" if comparison.only_a else "")
        + (f"<p>Scored in B only: {names(comparison.only_b)}</p>" if comparison.only_b else "")
        + (f"<p>Left out, changed: {names(comparison.changed)}</p>" if comparison.changed else "")
        + "</section>"
        '<section id="scenarios"><h2>Scenarios</h2>'
        '<input id="filter" type="search" placeholder="Filter scenarios" aria-label="Filter">'
        '<table id="comparison-table"><tr><th>scenario</th><th class="num">mean A</th>'
        '<th>pass rate A</th><th class="num">mean B</th><th>pass rate B</th>'
        f'<th class="num">B - A</th><th>flipped</th></tr>{rows}</table></section>'
    )
    return page(f"Seahaven comparison: {a.pack}", body)
