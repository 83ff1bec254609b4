"""One failed trial on a report page: its transcript beside its grade and the rows it changed.

``trial_html(result, transcript)`` renders the exchange event by event (the
system prompt folded, the instructions, each model reply with its tool calls,
tokens, latency and retries, each tool's result or refusal, invalid calls,
model failures, the submitted answer) next to every check with its reason and
the episode's net change per row. Every text in it is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seahaven.evaluation.htmlparts import cut, e, pre, pretty
from seahaven.evaluation.results import TrialResult

__all__ = ["CHANGES_SHOWN", "trial_html"]

# How many changed rows a trial shows.
CHANGES_SHOWN = 200


def trial_html(result: TrialResult, transcript: Mapping[str, Any] | None) -> str:
    """A failed trial as a folded section: the transcript beside the grade and changes."""
    failing = [check for check in result.checks if not check.get("passed", True)]
    first = (
        failing[0].get("name", "") if failing else (result.error.message if result.error else "")
    )
    head = (
        f"<summary><code>{e(result.scenario)}</code> #{result.trial} &middot; score "
        f"{result.score:.3f} &middot; {result.calls} call{'' if result.calls == 1 else 's'} "
        "&middot; ended by "
        f'{e(result.ended_by or "-")} &middot; <span class="check failed">'
        f"{e(cut(str(first), 200))}</span></summary>"
    )
    conversation = (
        _transcript(transcript)
        if transcript is not None
        else '<p class="muted">No transcript: the run kept none for this trial.</p>'
    )
    checks = "".join(
        f'<li class="check {"passed" if check.get("passed", True) else "failed"}">'
        f"<b>{'passed' if check.get('passed', True) else 'failed'}</b> "
        f'{e(check.get("name", ""))}<br><span class="muted">'
        f"{e(cut(str(check.get('why', '')), 800))}</span></li>"
        for check in sorted(result.checks, key=lambda c: bool(c.get("passed", True)))
    )
    error = (
        f"<p><b>error</b> ({e(result.error.kind)}): {e(cut(result.error.message, 800))}</p>"
        if result.error is not None
        else ""
    )
    answer = f"<p><b>answer</b></p>{pre(result.answer)}" if result.answer is not None else ""
    changes = _changes(transcript.get("changes") if transcript is not None else None)
    return (
        f'<details class="trial" id="trial-{e(result.scenario)}-{result.trial}">{head}'
        f'<div class="cols"><div class="transcript"><h3>Transcript</h3>{conversation}</div>'
        f'<div class="grade"><h3>Grade</h3>{error}<ul>{checks}</ul>{answer}'
        f"<h3>Rows changed</h3>{changes}</div></div></details>"
    )


def _transcript(transcript: Mapping[str, Any]) -> str:
    events = transcript.get("events")
    if not isinstance(events, list) or not events:
        return '<p class="muted">The transcript holds no events.</p>'
    out = []
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "model":
            out.append(_model_event(event))
        elif kind == "tool":
            out.append(_tool_event(event))
        elif kind == "invalid_call":
            out.append(
                f'<div class="event invalid"><span class="role">invalid tool call</span> '
                f"<code>{e(event.get('tool', ''))}</code>{pre(event.get('arguments', ''))}"
                f"<span>{e(cut(str(event.get('message', '')), 600))}</span></div>"
            )
        elif kind == "submit":
            refused = event.get("refusal")
            out.append(
                f'<div class="event {"refusal" if refused else "submit"}">'
                f'<span class="role">submit</span>{pre(event.get("answer", ""))}'
                + (f"<span>refused: {e(pretty(refused))}</span>" if refused else "")
                + "</div>"
            )
        elif kind == "model_failure":
            out.append(
                f'<div class="event failure"><span class="role">model failed</span> '
                f"{e(cut(str(event.get('message', '')), 800))}"
                f"{_retries(event.get('retries'))}</div>"
            )
        else:
            out.append(f'<div class="event"><span class="role">{e(kind)}</span>{pre(event)}</div>')
    return "".join(out)


def _model_event(event: Mapping[str, Any]) -> str:
    out = []
    for message in event.get("messages") or ():
        if not isinstance(message, dict) or message.get("role") in ("tool", "assistant"):
            continue  # tool results are the tool events; the replies are shown as replies
        role = str(message.get("role", "?"))
        content = message.get("content")
        text = e(cut(content if isinstance(content, str) else pretty(content)))
        if role == "system":
            out.append(
                f'<details class="event"><summary class="role">system</summary><pre>{text}</pre>'
                "</details>"
            )
        else:
            out.append(
                f'<div class="event"><span class="role">{e(role)}</span><pre>{text}</pre></div>'
            )
    reply = _mapping(event.get("reply"))
    usage = _mapping(event.get("usage"))
    meta = []
    if isinstance(event.get("seconds"), int | float):
        meta.append(f"{event['seconds']:.2f} s")
    if usage:
        meta.append(
            f"{usage.get('prompt_tokens', 0):,} + {usage.get('completion_tokens', 0):,} tokens"
        )
    if event.get("finish_reason"):
        meta.append(f"finish: {event['finish_reason']}")
    body = []
    content = reply.get("content")
    if isinstance(content, str) and content:
        body.append(f"<pre>{e(cut(content))}</pre>")
    calls = reply.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            body.append(
                f"<div>calls <code>{e(function.get('name', ''))}</code>"
                f"{pre(function.get('arguments', ''))}</div>"
            )
    out.append(
        f'<div class="event assistant"><span class="role">assistant</span> '
        f'<span class="muted">{e(" · ".join(meta))}</span>{"".join(body)}'
        f"{_retries(event.get('retries'))}</div>"
    )
    return "".join(out)


def _tool_event(event: Mapping[str, Any]) -> str:
    name = e(event.get("tool", ""))
    if "refusal" in event:
        refusal = _mapping(event.get("refusal"))
        return (
            f'<div class="event refusal"><span class="role">refused</span> <code>{name}</code> '
            f"<b>{e(refusal.get('code', ''))}</b>: {e(cut(str(refusal.get('message', '')), 800))}"
            "</div>"
        )
    if "failure" in event:
        return (
            f'<div class="event failure"><span class="role">world failed</span> <code>{name}'
            f"</code> {e(cut(str(event.get('failure', '')), 800))}</div>"
        )
    return (
        f'<div class="event"><span class="role">tool</span> <code>{name}</code>'
        f"{pre(event.get('result'))}</div>"
    )


def _retries(retries: Any) -> str:
    if not isinstance(retries, list) or not retries:
        return ""
    items = "".join(
        f"<li>attempt {e(retry.get('attempt', '?'))}: {e(cut(str(retry.get('error', '')), 300))}"
        + (f" (waited {e(retry['wait'])} s)" if "wait" in retry else "")
        + "</li>"
        for retry in retries
        if isinstance(retry, dict)
    )
    return f'<ul class="muted">{items}</ul>'


def _changes(changes: Any) -> str:
    if changes is None:
        return '<p class="muted">Not recorded (no transcript).</p>'
    if not isinstance(changes, list) or not changes:
        return "<p>None: the episode changed no row.</p>"
    items = []
    for change in changes[:CHANGES_SHOWN]:
        if not isinstance(change, dict):
            continue
        key = ", ".join(f"{k}={v!r}" for k, v in _mapping(change.get("key")).items())
        before = _mapping(change.get("before"))
        after = _mapping(change.get("after"))
        columns = list(dict.fromkeys([*before, *after]))
        cells = "".join(
            f"<tr><td><code>{e(column)}</code></td><td>{e(cut(repr(before.get(column)), 300))}"
            f"</td><td>{e(cut(repr(after.get(column)), 300))}</td></tr>"
            for column in columns[:60]
        )
        items.append(
            f"<li><b>{e(change.get('op', '?'))}</b> <code>{e(change.get('world', ''))}."
            f"{e(change.get('table', ''))}</code> ({e(key)})"
            f"<table><tr><th>column</th><th>before</th><th>after</th></tr>{cells}</table></li>"
        )
    more = (
        f'<p class="muted">and {len(changes) - CHANGES_SHOWN} more rows</p>'
        if len(changes) > CHANGES_SHOWN
        else ""
    )
    return f"<ul>{''.join(items)}</ul>{more}"


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: a transcript is read, not trusted."""
    return value if isinstance(value, dict) else {}
