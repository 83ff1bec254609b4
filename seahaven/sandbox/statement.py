"""One contained statement: the gate installed as its authorizer, its execution, its result.

``run_statement`` runs one statement under an ``Authorizer``: it is compiled once
with the world's triggers switched off, so that what the statement itself does
(its common table expressions and the views it reads included) is checked without
any exemption, then run with the gate still installed. While it runs, only what
SQLite does on its behalf is let through (an FTS5 or R*Tree table reading its own
shadow tables, a world trigger's body); attaching, schema changes, transaction
control and writes on a read-only door stay refused there too, which is what stops
``VACUUM INTO``, whose only check happens at run time. ``execute`` is the same run
for a caller that reads the ``catalog`` and installs a ``Deadline`` itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import apsw

import seahaven.sandbox.limits as limits
from seahaven.errors import DbError, WorldBug
from seahaven.sandbox.connection_catalog import Catalog, catalog
from seahaven.sandbox.limits import Deadline, check_limits
from seahaven.sandbox.policy import Authorizer, Refused
from seahaven.sandbox.wording import StatementFailed, agent_error
from seahaven.stores.changelog import json_value
from seahaven.stores.db import (
    INTERRUPTED,
    Db,
    db_error,
    is_closing,
    is_interrupt,
    run_cleanup,
    value_error,
)

__all__ = [
    "PLAIN_READS",
    "SqlResult",
    "execute",
    "first_keyword",
    "read_plainly",
    "run_statement",
    "split_statements",
]


class _Gate:
    """The callback one run installs: the policy, the connection's FTS5 tables, the stage.

    ``probe``: the statement compiled with triggers off, every action held to the
    policy. ``compile``: compiled again to run, with triggers on; an action inside
    a trigger body (or a CTE or view the probe already checked) is the world's.
    ``run``: what SQLite prepares on the statement's behalf while it runs.
    """

    __slots__ = ("known", "policy", "refused", "stage")

    def __init__(self, policy: Authorizer, known: Catalog) -> None:
        self.policy = policy
        self.known = known
        self.stage: Literal["probe", "compile", "run"] = "probe"
        self.refused: list[Refused] = []

    def __call__(
        self,
        action: int,
        first: str | None,
        second: str | None,
        schema: str | None,
        trigger: str | None,
    ) -> int:
        if self.stage == "run":
            refused = self.policy.internal_refusal(action, first, second, schema)
        elif self.stage == "compile" and trigger is not None:
            refused = None
        else:
            known = self.known
            refused = self.policy.refusal(
                action,
                first,
                second,
                schema,
                fts5=known.fts5,
                present=known.present,
                eponymous=known.eponymous,
            )
        if refused is None:
            return apsw.SQLITE_OK
        if refused not in self.refused:
            self.refused.append(refused)
        return apsw.SQLITE_DENY


# --- one statement ------------------------------------------------------------------------------

# --- one statement ------------------------------------------------------------------------------


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql`` in order, each complete, blank ones dropped.

    SQLite's own tokenizer decides where one ends (``apsw.complete``), so a ``;``
    inside a string, a quoted name or a comment does not split a statement.
    """
    statements: list[str] = []
    pending = ""
    for piece in sql.split(";"):
        pending += piece + ";"
        if apsw.complete(pending):
            if _has_content(pending):
                statements.append(pending.strip())
            pending = ""
    if _has_content(pending.rstrip(";")):
        statements.append(pending.rstrip(";").strip())
    return statements


def _has_content(statement: str) -> bool:
    from seahaven.stores.schema import normalise_sql

    return normalise_sql(statement).strip(" ;") != ""


_LEADING_NOISE = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?(?:\*/|$))*", re.DOTALL)


def first_keyword(statement: str) -> str:
    """The statement's first word, comments and white space skipped, upper-cased."""
    rest = statement[_LEADING_NOISE.match(statement).end() :]  # type: ignore[union-attr]
    word = re.match(r"[A-Za-z]+", rest)
    return word.group(0).upper() if word else ""


# What a statement may begin with to run on a store's own connection with no reader's guard.
PLAIN_READS = frozenset({"SELECT", "WITH", "VALUES"})


def read_plainly(db: Db, sql: str, params: Sequence[Any]) -> list[dict[str, Any]] | None:
    """The rows of ``sql`` when it is one plain read; ``None`` when it is anything else.

    A grader's read on a store's own connection is held to what ``ReaderAuthorizer``
    and ``query_only`` let through, and setting either makes SQLite prepare every
    statement of the connection again: what a kept connection exists to avoid. So a
    read is first checked here: one statement, beginning with SELECT, WITH or VALUES
    (decided before SQLite prepares it, since preparing a ``PRAGMA`` already sets
    what it sets), which SQLite, once it has prepared it and before it runs, calls
    read-only. Neither guard refuses such a statement. Anything else does not run,
    and ``None`` tells the caller to read under the guards, whose refusal it gives.
    """
    if first_keyword(sql) not in PLAIN_READS:
        return None
    conn = db.conn
    refused = False

    def check(cursor: apsw.Cursor, statement: str, bindings: Any) -> bool:
        nonlocal refused
        # The statement SQLite prepared first, and nothing after it: a second statement
        # would be prepared (and a pragma in it take effect) before this could see it.
        if cursor.is_readonly and _ONLY_NOISE.fullmatch(sql, len(statement)):
            return True
        refused = True
        return False

    previous = conn.exec_trace
    conn.exec_trace = check
    try:
        return db.rows(sql, *params)
    except DbError:
        if refused:
            return None
        raise
    finally:
        conn.exec_trace = previous


# What may follow a statement without being another: white space, comments, semicolons.
_ONLY_NOISE = re.compile(r"(?:\s+|;|--[^\n]*(?:\n|$)|/\*.*?(?:\*/|$))*", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SqlResult:
    """What one statement returned: column names, rows of SQLite values, and ``truncated``.

    ``truncated`` is true when a ``max_rows`` or ``max_bytes`` limit left rows
    out. A BLOB is ``bytes`` here; ``to_dict`` gives the JSON form a tool returns.
    """

    columns: list[str]
    rows: list[list[Any]] = field(repr=False)
    truncated: bool

    @property
    def row_count(self) -> int:
        """How many rows the result holds (after any truncation)."""
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        """``{"columns", "rows", "row_count", "truncated"}``, a BLOB as base64 text."""
        return {
            "columns": list(self.columns),
            "rows": [[json_value(value) for value in row] for row in self.rows],
            "row_count": len(self.rows),
            "truncated": self.truncated,
        }


@contextmanager
def _installed(conn: apsw.Connection, gate: _Gate, sql_bytes: int | None) -> Iterator[None]:
    """``gate`` as the connection's authorizer, and the sandbox's limits, for the block."""
    previous = conn.authorizer
    length = conn.limit(apsw.SQLITE_LIMIT_LENGTH, limits.MAX_VALUE_BYTES)
    sql_length = conn.limit(apsw.SQLITE_LIMIT_SQL_LENGTH, -1 if sql_bytes is None else sql_bytes)
    conn.authorizer = gate
    try:
        yield
    finally:
        conn.authorizer = previous
        conn.limit(apsw.SQLITE_LIMIT_LENGTH, length)
        conn.limit(apsw.SQLITE_LIMIT_SQL_LENGTH, sql_length)


def _config(conn: apsw.Connection, op: int, value: int) -> int:
    previous = int(conn.config(op, -1))
    conn.config(op, value)
    return previous


def _probe(conn: apsw.Connection, gate: _Gate, sql: str, params: Any) -> None:
    """Compile ``sql`` with triggers off, under the plain policy, without running it.

    Defensive mode would refuse a write to a shadow table or to the schema table
    before the authorizer is asked, in words that name no rule; nothing runs under
    EXPLAIN QUERY PLAN, so the probe goes without it. The statement's own actions
    are held to the policy whatever SQLite names as their context: a CTE can be
    called anything, a trigger's name included.
    """
    gate.stage = "probe"
    seen: list[str] = []

    def one_only(cursor: apsw.Cursor, statement: str, bindings: Any) -> bool:
        # The text was split into one statement already; should SQLite see a second,
        # it never gets to run here, where defensive mode is off.
        seen.append(statement)
        return len(seen) == 1

    defensive = _config(conn, apsw.SQLITE_DBCONFIG_DEFENSIVE, 0)
    triggers = _config(conn, apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    cursor = conn.cursor()
    cursor.exec_trace = one_only
    try:
        cursor.execute(sql, params, explain=2, can_cache=False).fetchall()
    except apsw.ExecTraceAbort:
        raise StatementFailed(
            "statements", "the query holds more than one statement; send one per call"
        ) from None
    finally:
        cursor.close(force=True)
        conn.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, triggers)
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, defensive)


class _Trace:
    """The cursor's execution tracer: one statement only, read-only when the door is."""

    __slots__ = ("columns", "gate", "problem", "read_only", "statements")

    def __init__(self, gate: _Gate, read_only: bool) -> None:
        self.gate = gate
        self.read_only = read_only
        self.statements = 0
        self.columns: list[str] = []
        self.problem: str | None = None

    def __call__(self, cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        self.statements += 1
        if self.statements > 1:
            self.problem = "the query holds more than one statement; send one per call"
            return False
        if self.read_only and not cursor.is_readonly:
            self.problem = "the statement would write, and this door only reads"
            return False
        self.columns = [str(column[0]) for column in cursor.get_description()]
        self.gate.stage = "run"
        return True


def _row_bytes(row: Sequence[Any]) -> int:
    rendered = [json_value(value) for value in row]
    return len(json.dumps(rendered, ensure_ascii=False, separators=(",", ":")).encode()) + 1


def execute(
    conn: apsw.Connection,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] = (),
    *,
    authorizer: Authorizer,
    known: Catalog,
    deadline: Deadline | None,
    max_rows: int | None = None,
    max_bytes: int | None = None,
    keep_rows: bool = True,
    max_sql_bytes: int | None = limits.MAX_SQL_BYTES,
) -> SqlResult:
    """Run one statement on ``conn`` under ``authorizer``; raise ``StatementFailed``.

    The framework's core of ``run_statement`` and ``setup_sql``: the caller reads
    the ``catalog`` and installs ``deadline`` (or none), and words the failure for
    its own audience. ``max_sql_bytes`` bounds the statement's text (``None``:
    SQLite's own limit, for the author's ``setup_sql``).
    """
    if max_sql_bytes is not None and len(sql.encode("utf-8", "surrogatepass")) > max_sql_bytes:
        raise StatementFailed(
            "too_long",
            f"the query is longer than seahaven.sandbox.MAX_SQL_BYTES ({max_sql_bytes} bytes); "
            "send a shorter statement",
        )
    statements = split_statements(sql)
    if len(statements) != 1:
        found = "no statement" if not statements else f"{len(statements)} statements"
        raise StatementFailed(
            "statements", f"one SQL statement is run per call, and this query holds {found}"
        )
    if first_keyword(statements[0]) == "VACUUM":
        refused = Refused("action", "VACUUM", "action VACUUM")
        raise StatementFailed("refused", "VACUUM is refused", refused=[refused])
    gate = _Gate(authorizer, known)
    trace = _Trace(gate, authorizer.read_only)
    rows: list[list[Any]] = []
    truncated = False
    # A door that writes runs its statement in a savepoint of its own, so that a
    # statement refused after it ran (it stored text that is not UTF-8) leaves nothing.
    writes = not authorizer.read_only
    watch: _WrittenText | None = None
    if writes:
        conn.execute(f"SAVEPOINT {_SAVEPOINT}")
    try:
        if writes:
            watch = _WrittenText(conn, known.schemas)
        with _installed(conn, gate, max_sql_bytes):
            cursor = conn.cursor()
            try:
                _probe(conn, gate, sql, params)
                gate.stage = "compile"
                cursor.exec_trace = trace
                cursor.execute(sql, params, can_cache=False)
                size = 2
                for row in cursor:
                    if not keep_rows:
                        continue
                    if max_rows is not None and len(rows) >= max_rows:
                        truncated = True
                        break
                    width = _row_bytes(row)
                    if max_bytes is not None and size + width > max_bytes:
                        truncated = True
                        break
                    size += width
                    if size > limits.MAX_RESULT_BYTES:
                        raise StatementFailed(
                            "result_too_big",
                            f"the result is larger than seahaven.sandbox.MAX_RESULT_BYTES "
                            f"({limits.MAX_RESULT_BYTES} bytes); select fewer rows or columns",
                        )
                    rows.append(list(row))
            except apsw.Error as error:
                raise _failure(conn, error, gate, trace, deadline) from None
            except UnicodeDecodeError:
                raise StatementFailed(
                    "invalid_text",
                    "a value in the result is text that is not valid UTF-8; read it with hex(), "
                    "or CAST it AS BLOB",
                ) from None
            finally:
                cursor.close(force=True)
        if watch is not None:
            watch.check()
    except BaseException:
        if watch is not None:
            watch.close()
        if writes:
            if deadline is not None and deadline.expired:
                # Past its deadline the handler stops every statement, this one too.
                conn.set_progress_handler(None)
            if conn.in_transaction:
                run_cleanup(conn, f"ROLLBACK TO {_SAVEPOINT}; RELEASE {_SAVEPOINT}")
        raise
    if watch is not None:
        watch.close()
    if writes:
        conn.execute(f"RELEASE {_SAVEPOINT}")
    return SqlResult(trace.columns, rows, truncated)


_SAVEPOINT = "seahaven_sandbox_statement"


class _WrittenText:
    """Watches a statement's writes for text that is not UTF-8 (``CAST(x'ff' AS TEXT)``).

    Such text cannot be read back, by the world's tools, the change log or the
    state document, so it would break the episode for everyone after the agent.
    The watch is a preupdate hook of its own beside the store's change capture;
    on a connection where a session extension already holds the preupdate hook
    (a caller's own connection), a session per schema watches instead, since
    the two cannot share a connection.
    """

    __slots__ = ("_conn", "_sessions", "bad")

    def __init__(self, conn: apsw.Connection, schemas: tuple[str, ...]) -> None:
        self._conn: apsw.Connection | None = None
        self._sessions: list[apsw.Session] = []
        self.bad: str | None = None
        try:
            conn.preupdate_hook(self._hook, id=_HOOK_ID)
            self._conn = conn
        except Exception:
            # APSW refuses the hook where a session has it: watch with sessions too.
            self._sessions = _watch_writes(conn, schemas)

    def _hook(self, update: apsw.PreUpdate) -> None:
        if self.bad is not None:
            return
        opcode = update.opcode
        try:
            if opcode == apsw.SQLITE_INSERT:
                update.new  # noqa: B018 (reading it is the check)
            elif opcode == apsw.SQLITE_UPDATE:
                update.update  # noqa: B018 (the changed values alone, as a session keeps them)
        except UnicodeDecodeError:
            self.bad = update.table_name

    def check(self) -> None:
        """Refuse the statement if it wrote text that is not UTF-8."""
        if self._sessions:
            _check_written_text(self._sessions)
        if self.bad is not None:
            raise StatementFailed(
                "invalid_text",
                f"the statement would store text that is not valid UTF-8 in "
                f"{self.bad}; store bytes as a BLOB (X'...'), or text as text",
            )

    def close(self) -> None:
        """Take the hook (or the sessions) off the connection."""
        if self._conn is not None:
            self._conn.preupdate_hook(None, id=_HOOK_ID)
            self._conn = None
        _close_sessions(self._sessions)


_HOOK_ID = "seahaven.sandbox.written_text"


def _watch_writes(conn: apsw.Connection, schemas: tuple[str, ...]) -> list[apsw.Session]:
    """A session on every schema, so what the statement wrote can be read back."""
    sessions: list[apsw.Session] = []
    try:
        for schema in schemas:
            session = apsw.Session(conn, schema)
            sessions.append(session)
            # Tables without a declared primary key are recorded by rowid.
            session.config(apsw.SQLITE_SESSION_OBJCONFIG_ROWID, 1)
            session.attach()
    except BaseException:
        _close_sessions(sessions)
        raise
    return sessions


def _close_sessions(sessions: list[apsw.Session]) -> None:
    for session in sessions:
        session.close()
    sessions.clear()


def _check_written_text(sessions: list[apsw.Session]) -> None:
    """Refuse a statement that stored text which is not UTF-8, as its sessions recorded it."""
    for session in sessions:
        changeset = session.changeset()
        if not changeset:
            continue
        for change in apsw.Changeset.iter(changeset):
            if change.op in ("INSERT", "UPDATE"):
                try:
                    change.new  # noqa: B018 (reading it is the check)
                except UnicodeDecodeError:
                    raise StatementFailed(
                        "invalid_text",
                        f"the statement would store text that is not valid UTF-8 in "
                        f"{change.name}; store bytes as a BLOB (X'...'), or text as text",
                    ) from None


def _failure(
    conn: apsw.Connection,
    error: apsw.Error,
    gate: _Gate,
    trace: _Trace,
    deadline: Deadline | None,
) -> StatementFailed:
    if gate.refused:
        first = gate.refused[0]
        return StatementFailed(
            "refused", f"not authorized: {first.text}", refused=gate.refused, error=error
        )
    if deadline is not None and deadline.expired:
        return StatementFailed("expired", "the statement ran past its time limit", error=error)
    if isinstance(error, apsw.ExecTraceAbort) and trace.problem is not None:
        return StatementFailed("statements", trace.problem, error=error)
    if isinstance(error, apsw.ConnectionClosedError | apsw.CursorClosedError) or (
        is_interrupt(error) and is_closing(conn)
    ):
        return StatementFailed(
            "destroyed", "the instance behind this database was destroyed", error=error
        )
    if is_interrupt(error):
        return StatementFailed("interrupted", INTERRUPTED, error=error)
    message = str(error.args[0]) if error.args else type(error).__name__
    if isinstance(error, apsw.TooBigError):
        return StatementFailed("too_big", message, error=error)
    return StatementFailed("sqlite", message, error=error)


def run_statement(
    db: Db | apsw.Connection,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] = (),
    *,
    authorizer: Authorizer,
    max_rows: int | None = None,
    max_bytes: int | None = None,
) -> SqlResult:
    """Run exactly one statement on ``db`` under ``authorizer``, bounded in time and size.

    ``db`` is a ``Db`` (``ctx.db``) or an APSW connection. The statement runs in
    whatever transaction the connection has open, so in a tool it commits or rolls
    back with the call. ``max_rows`` and ``max_bytes`` (the rows' size as JSON
    text) truncate the result, and ``truncated`` says so. Every failure is a
    ``DbError`` whose message is for the agent: SQLite's own text, or what was
    refused (``refusals``), or which limit stopped the statement
    (``STATEMENT_SECONDS``, ``MAX_VALUE_BYTES``, ``MAX_RESULT_BYTES``).
    """
    conn = db.conn if isinstance(db, Db) else db
    if not isinstance(conn, apsw.Connection):
        raise WorldBug(f"run_statement needs a Db or an apsw.Connection, not {type(db).__name__}")
    if not isinstance(authorizer, Authorizer):
        raise WorldBug("run_statement needs authorizer=, a seahaven.sandbox.Authorizer")
    if not isinstance(sql, str):
        raise DbError(repr(sql), apsw.SQLITE_MISUSE, message="the query must be SQL text")
    check_limits(max_rows, max_bytes)
    if "\x00" in sql:
        refused = value_error(ValueError("null character in query"), sql)
        assert refused is not None
        raise refused
    seconds = limits.STATEMENT_SECONDS
    try:
        known = catalog(conn)
    except apsw.Error as error:
        raise db_error(error, conn) from None
    try:
        with Deadline(conn, seconds) as deadline:
            return execute(
                conn,
                sql,
                params,
                authorizer=authorizer,
                known=known,
                deadline=deadline,
                max_rows=max_rows,
                max_bytes=max_bytes,
            )
    except StatementFailed as failed:
        raise agent_error(failed, authorizer, seconds) from None
    except (OverflowError, ValueError) as error:
        translated = value_error(error, sql)
        if translated is None:
            raise
        raise translated from None
