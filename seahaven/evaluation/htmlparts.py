"""The pieces every report page is made of: the shell, the style, escaping, bars.

Everything a page shows that came from a results or transcripts file is hostile
text (a model wrote it, or a tool returned it): ``e`` escapes it for HTML,
attributes included, and ``page`` wraps a body in a document whose
Content-Security-Policy allows no network access and no script but the page's
own (by its hash).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from typing import Any

__all__ = ["TEXT_SHOWN", "bar", "cut", "e", "number", "page", "pre", "pretty"]

# How much of one text (a tool's result, a message) a page shows.
TEXT_SHOWN = 4000

STYLE = """
:root { --ok: #2e7d32; --bad: #c62828; --warn: #ef6c00; --ink: #1d2330; --muted: #5f6b7a;
  --line: #dde3ea; --soft: #f4f6f9; --accent: #1f5fbf; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--ink); background: #fff; }
header, section { max-width: 1200px; margin: 0 auto; padding: 12px 20px; }
header { border-bottom: 1px solid var(--line); }
h1 { font-size: 22px; margin: 6px 0; } h2 { font-size: 17px; margin: 18px 0 8px; }
.muted { color: var(--muted); } code, pre { font: 12px/1.4 ui-monospace, Menlo, monospace; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; background: var(--soft);
  padding: 6px 8px; border-radius: 4px; max-height: 360px; overflow: auto; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 140px; }
.card b { display: block; font-size: 20px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-weight: 600; color: var(--muted); } td.num, th.num { text-align: right; }
.bar { background: var(--soft); border-radius: 3px; height: 12px; width: 160px;
  position: relative; }
.bar span { position: absolute; left: 0; top: 0; bottom: 0; border-radius: 3px;
  background: var(--ok); }
.bar.low span { background: var(--bad); } .bar.mid span { background: var(--warn); }
.trial { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; }
.trial > summary { cursor: pointer; padding: 8px 10px; background: var(--soft); }
.cols { display: grid; grid-template-columns: 3fr 2fr; gap: 14px; padding: 10px; }
@media (max-width: 900px) { .cols { grid-template-columns: 1fr; } }
.event { border-left: 3px solid var(--line); padding: 2px 8px; margin: 6px 0; }
.event.assistant { border-color: var(--accent); } .event.refusal, .event.invalid,
.event.failure { border-color: var(--bad); } .event.submit { border-color: var(--ok); }
.role { font-weight: 600; font-size: 12px; text-transform: uppercase; color: var(--muted); }
.check.failed { color: var(--bad); } .check.passed { color: var(--ok); }
.tag { display: inline-block; background: var(--soft); border-radius: 3px; padding: 0 5px;
  margin-right: 3px; font-size: 12px; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
#filter { padding: 4px 8px; width: 260px; margin-bottom: 6px; }
#pass-table { width: auto; }
button { font: inherit; padding: 3px 10px; }
"""

SCRIPT = """
(function () {
  var filter = document.getElementById("filter");
  if (filter) {
    filter.addEventListener("input", function () {
      var text = filter.value.toLowerCase();
      document.querySelectorAll("[data-filter]").forEach(function (row) {
        row.hidden = text !== "" && row.getAttribute("data-filter").indexOf(text) < 0;
      });
    });
  }
  var toggle = document.getElementById("open-all");
  if (toggle) {
    toggle.addEventListener("click", function () {
      var trials = document.querySelectorAll("details.trial");
      var open = Array.prototype.some.call(trials, function (d) { return !d.open; });
      trials.forEach(function (d) { d.open = open; });
      toggle.textContent = open ? "Close every trial" : "Open every trial";
    });
  }
})();
"""


def e(value: Any) -> str:
    """Text made safe for HTML, attributes included."""
    return html.escape(str(value), quote=True)


def cut(text: str, limit: int = TEXT_SHOWN) -> str:
    """``text``, cut to ``limit`` characters with a note of how many more there were."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def pretty(value: Any) -> str:
    """A value (or JSON text) as indented JSON, or as it is when it is not JSON."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def pre(value: Any) -> str:
    """A value shown in a ``<pre>``, pretty, cut and escaped."""
    return f"<pre>{e(cut(pretty(value)))}</pre>"


def number(value: float | None, digits: int = 3) -> str:
    """A number to ``digits`` places, or ``-`` for none."""
    return "-" if value is None else f"{value:.{digits}f}"


def bar(fraction: float | None) -> str:
    """A horizontal bar of ``fraction`` (0 to 1), red, orange or green by how full it is."""
    if fraction is None:
        return "-"
    share = max(0.0, min(1.0, fraction))
    level = "low" if share < 0.34 else "mid" if share < 0.67 else ""
    return f'<div class="bar {level}"><span style="width:{share * 100:.1f}%"></span></div>'


def page(title: str, body: str) -> str:
    """A whole document: ``body`` with the style, the script and the security policy."""
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{e(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>"
        f"{body}<script>{SCRIPT}</script></body></html>\n"
    )
