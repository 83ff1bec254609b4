"""The outermost layer: nothing reaches the agent that ProjectTracker did not choose to say.

Registered before any other middleware, so every call runs inside it. What a call raises goes
one of these ways:

* the framework's ``ArgumentError`` becomes ``INVALID_INPUT``, every violation in one message,
  a pattern mismatch explained with the argument's own description;
* the tracker's own errors, and every ``WorldBug`` (the author's to read), pass unchanged;
* a ``DbError`` is SQL this world wrote going wrong, so it is logged with its traceback and the
  agent reads ``INTERNAL``, with two exceptions named by tool:

  - ``run_sql`` is a SQL door, and SQLite's own message is the answer to a query the agent
    wrote, so its ``DbError`` passes as it is;
  - ``search_issues`` hands the agent's query to FTS5, and only FTS5 can say what is wrong with
    it, so its ``DbError`` becomes ``INVALID_INPUT`` on ``query`` carrying FTS5's complaint;

* any other exception is a defect: logged, and ``INTERNAL``.

The exceptions compare ``call.tool.name``, the tool's own name, which a host that adds this
world under a prefix does not change.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import seahaven
from projecttracker.errors import Internal, InvalidInput
from projecttracker.world import world

__all__ = ["SEARCH_TOOL", "SQL_DOOR", "error_handler"]

SQL_DOOR = "run_sql"
"""The tool whose database errors are SQLite's answer to the agent's own query."""

SEARCH_TOOL = "search_issues"
"""The tool whose database errors are FTS5's complaint about the agent's own query."""

_log = logging.getLogger("projecttracker")


def _description(spec: object) -> str | None:
    """An argument's description; an optional one keeps it on the non-null member."""
    if not isinstance(spec, dict):
        return None
    if "description" in spec:
        return str(spec["description"])
    for member in spec.get("anyOf", ()):
        found = _description(member)
        if found is not None:
            return found
    return None


def _descriptions(call: seahaven.Call) -> dict[str, str]:
    """Each argument's description, from the JSON schema the agent was shown."""
    properties = call.tool.schema.get("properties", {})
    found = {name: _description(spec) for name, spec in properties.items()}
    return {name: text for name, text in found.items() if text is not None}


def restate(violations: Sequence[Mapping[str, Any]], call: seahaven.Call) -> InvalidInput:
    """The framework's argument violations, every one, in the tracker's shape."""
    described = _descriptions(call)
    restated = []
    for violation in violations:
        location = [str(part) for part in violation.get("loc", ())]
        field = ".".join(location) or "(arguments)"
        problem = str(violation.get("msg", "invalid"))
        description = described.get(location[0]) if location else None
        if violation.get("type") == "string_pattern_mismatch" and description:
            # A regular expression tells an agent nothing; the description says what to send.
            problem = f"not in the expected form. {description}"
        restated.append({"field": field, "problem": problem})
    return InvalidInput(restated)


def _search_syntax(error: seahaven.DbError) -> InvalidInput:
    complaint = error.sqlite_message.removeprefix("SQLError: ").strip() or "not a valid query"
    return InvalidInput.on(
        "query",
        f"the search engine could not read this query ({complaint}); put a term with "
        'punctuation in double quotes (such as "ENG-12" or "e-mail"), end a word with * '
        "for a prefix, and write AND, OR, NOT in capitals",
    )


@world.middleware
def error_handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
    """Map everything that escapes a tool into one of ProjectTracker's error shapes."""
    try:
        return next_(ctx, call)
    except seahaven.ArgumentError as error:
        raise restate(error.violations, call) from error
    except seahaven.DbError as error:
        if call.tool.name == SQL_DOOR:
            raise
        if call.tool.name == SEARCH_TOOL:
            raise _search_syntax(error) from error
        _log.error(
            "%s: database error under %s: %s",
            ctx.instance.id,
            call.name,
            error.sqlite_message,
            exc_info=error,
        )
        raise Internal() from error
    except (seahaven.ToolError, seahaven.WorldBug):
        raise
    except Exception as error:
        _log.error(
            "%s: unexpected %s under %s",
            ctx.instance.id,
            type(error).__name__,
            call.name,
            exc_info=error,
        )
        raise Internal() from error
