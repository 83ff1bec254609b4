"""What a stretch of work changed in one store, captured with SQLite's preupdate hook.

A store's connection carries one preupdate hook for its whole life, installed
the first time the store records. While it records, the hook keeps, for each row
(table and primary key) the first time the row is seen, the values it had then,
or that it did not exist. When the stretch ends the touched rows are read back by
key and compared with what they were: the net change per row, exactly as SQLite's
session extension works out a changeset (which also uses the preupdate hook), so
that a rolled-back savepoint, a statement undone after a constraint failure, a
``REPLACE`` that deleted a row, triggers and cascades all come out as the rows
now are. Rows whose key holds a NULL, tables without a primary key and tables
the store does not track are skipped, as a session skips them.

The hook's values are compared as a session compares them: an integer and a
real of the same value differ, and so do text and a blob; 0.0 and -0.0 do not.

What the hook's values are (a table's columns and key, its *layout*) is read
from one statement listing every table's ``CREATE TABLE`` text: the layout
follows from that text, so it is worked out once per process for each (table,
text). A store keeps its layouts from one stretch to the next, trusting them
again only once ``main``'s schema cookie is seen unchanged, since a table may be
altered between two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apsw

from seahaven.errors import WorldBug

__all__ = ["Capture", "Change", "same_value"]

# (table, op, old, new) in a changeset's shape: an insert has new alone, a delete old
# alone, an update its old row whole and its new row with ``apsw.no_change`` where
# a column kept its value.
Change = tuple[str, str, "tuple[Any, ...] | None", "tuple[Any, ...] | None"]

_HOOK_ID = "seahaven.capture"
_INSERT = apsw.SQLITE_INSERT
_DELETE = apsw.SQLITE_DELETE
_NO_CHANGE: object = apsw.no_change
# A row first seen being inserted: it did not exist before.
_ABSENT: Any = None


def same_value(a: Any, b: Any) -> bool:
    """Whether a session counts two SQLite values the same: same class, equal value.

    An integer and a real differ, and so do text and a blob; 0.0 and -0.0 are
    the same (a session compares reals as numbers).
    """
    return type(a) is type(b) and bool(a == b)


def _exact(value: Any) -> Any:
    # A key part as a dict key that tells 1 from 1.0, as a session does (0.0 is -0.0).
    if type(value) is float:
        return (float, value)
    return value


class _Layout:
    """One table as the hook reports it: the recorded columns, and the key's positions."""

    __slots__ = ("columns", "key", "key_names", "read", "stat1", "stored", "width")

    def __init__(self, name: str, xinfo: list[Any]) -> None:
        # PRAGMA table_xinfo: (cid, name, type, notnull, default, pk, hidden). The hook's
        # values are the stored columns (all but virtual generated ones) in declared order;
        # a session records the columns that are not generated, which the log shows.
        stored = [row for row in xinfo if row[6] != 2]
        self.width = len(stored)
        self.stored = tuple(index for index, row in enumerate(stored) if row[6] == 0)
        self.columns = tuple(str(stored[index][1]) for index in self.stored)
        keyed = sorted((row[5], position) for position, row in enumerate(stored) if row[5])
        # Key positions in the hook's values, in declared column order (a session's order).
        self.key = tuple(sorted(position for _, position in keyed))
        self.key_names = tuple(str(stored[index][1]) for index in self.key)
        # Every column as declared, when none is generated: ``*`` says so in less to compile.
        names = (
            "*"
            if len(self.columns) == len(xinfo)
            else ", ".join(_quote(column) for column in self.columns)
        )
        # ``=``, which is ``IS`` for the values read back by (a key holding NULL is skipped).
        where = " AND ".join(f"{_quote(column)} = ?" for column in self.key_names)
        self.read = f"SELECT {names} FROM main.{_quote(name)} WHERE {where}"
        self.stat1 = name == "sqlite_stat1"
        if self.stat1:
            self.read = (
                "SELECT tbl, coalesce(idx, x''), stat FROM main.sqlite_stat1 "
                "WHERE tbl IS ? AND coalesce(idx, x'') IS ?"
            )


def _stat1_row(row: Any) -> Any:
    if row is None or row[1] is not None:
        return row
    return (row[0], b"", *row[2:])


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Capture:
    """The preupdate hook of one store's connection, and the rows a stretch of work touched.

    A store with a table holding a virtual generated column records with a
    session instead (``by_session``): APSW cannot hand out the hook's values
    for such a table, and a session reads them in C. The two never share a
    connection (a session and an APSW preupdate hook on one connection crash).
    """

    __slots__ = (
        "_changes_before",
        "_changeset",
        "_conn",
        "_cursor",
        "_events",
        "_filter",
        "_known",
        "_layouts",
        "_pending",
        "_schema",
        "_session",
        "_tables",
        "_version",
        "by_session",
        "failure",
        "lost",
        "recording",
        "rows",
        "unrestorable",
    )

    def __init__(
        self,
        conn: apsw.Connection,
        table_filter: Callable[[str], bool] | None,
        schema: str | None = None,
    ) -> None:
        self._conn = conn
        # The capture's own cursor for its reads, made at the first: one per statement (what
        # ``Connection.execute`` makes) cost more than a read by key itself.
        self._cursor: apsw.Cursor | None = None
        self._filter = table_filter
        # Whether a session records this store; None until it first records. ``schema``
        # names the store's schema, so the answer is worked out once per schema.
        self.by_session: bool | None = _BY_SESSION.get(schema) if schema is not None else None
        self._session: apsw.Session | None = None
        self._changeset = b""
        # Hook calls, and the connection's total_changes(), since recording started.
        self._events = 0
        self._changes_before = 0
        # table -> its layout, or None for a table that is not recorded, as this stretch trusts
        # them. A stretch starts with none: those of earlier stretches wait in ``_known`` until
        # the schema is seen unchanged (``_version``, its schema_version when they were read),
        # since a table may be altered between two stretches.
        self._layouts: dict[str, _Layout | None] = {}
        # table -> its CREATE TABLE text, read at the first table met, or None.
        self._tables: dict[str, str] | None = None
        self._known: tuple[dict[str, _Layout | None], dict[str, str] | None] | None = None
        self._version: int | None = None
        # Events on tables whose layout is not known yet: it is read when the stretch ends.
        self._pending: list[tuple[str, Any, Any, BaseException | None, int | None]] = []
        self.recording = False
        # table -> {exact key: (key values, the row's values when first seen, or _ABSENT)}
        self.rows: dict[str, dict[Any, tuple[tuple[Any, ...], Any]]] = {}
        # The first error met reading a change's values in the hook, if any.
        self.failure: BaseException | None = None
        # (table, rowid) of rows whose new values could not be read, so not keyed.
        self.lost: list[tuple[str, int]] = []
        # Set when a row's values before the change could not be read: it cannot be put back.
        self.unrestorable = False
        self._schema = schema

    def start(self) -> None:
        """Record from now on: the hook is installed the first time."""
        if self.by_session is None:
            self.by_session = _has_virtual_columns(self._conn)
            if self._schema is not None:
                _BY_SESSION[self._schema] = self.by_session
        if self.by_session:
            if self._session is None:
                session = apsw.Session(self._conn, "main")
                try:
                    if self._filter is not None:
                        session.table_filter(self._filter)
                    session.attach()
                except BaseException:
                    session.close()
                    raise
                self._session = session
        else:
            # Installed again each time (a tenth of a microsecond): APSW refuses it while a
            # session of someone else's holds the connection's hook, and puts it back
            # once such a session has closed, so no stretch records with the hook lost.
            try:
                self._conn.preupdate_hook(self._hook, id=_HOOK_ID)
            except apsw.Error:
                raise
            except Exception as error:
                raise WorldBug(_SESSION_HOLDS_HOOK) from error
            self._events = 0
            self._changes_before = self._conn.total_changes()
        self.recording = True

    def stop(self) -> None:
        """Stop recording, and forget what was recorded."""
        self.recording = False
        # New containers only where something was kept: most stretches keep no row to undo.
        if self.rows or self._pending or self.lost:
            self.rows, self._pending, self.lost = {}, [], []
        self.failure = None
        self.unrestorable = False
        self._changeset = b""
        layouts = self._layouts
        if layouts:
            # Kept for the next stretch that writes, trusted there once the schema is seen
            # unchanged. A stretch that never settled holds only tables its filter skips.
            if self._known is None:
                self._known = (layouts, self._tables)
            else:
                self._known[0].update(layouts)
            self._layouts = {}
        self._tables = None
        if self._session is not None:
            session, self._session = self._session, None
            session.close()

    def keep_layouts_of(self, conn: apsw.Connection) -> None:
        """Keep the layouts known only if ``conn``'s schema is the one they were read from.

        For a kept connection whose episode rolled back: a schema its calls changed
        is back as it was, and the cookie a later change moves it to again may not
        mean the same tables.
        """
        if self._known is not None and conn.execute(_SCHEMA_VERSION).get != self._version:
            self.forget_layouts()

    def forget_layouts(self) -> None:
        """Read each table's columns again when next met (the store's image was replaced)."""
        self._layouts = {}
        self._tables = None
        self._known = None
        self._version = None

    @property
    def is_empty(self) -> bool:
        """Whether nothing has been touched since recording started."""
        if self._session is not None:
            return bool(self._session.is_empty)
        if self._events == 0:
            # Nothing seen: empty, unless rows changed where the hook could not see them.
            return bool(self._conn.total_changes() == self._changes_before)
        return not self.rows and not self._pending and self.failure is None

    def _hook(self, update: apsw.PreUpdate) -> None:
        if not self.recording:
            return
        self._events += 1
        if update.database_name != "main":
            return
        name = update.table_name
        layout = self._layouts.get(name, _PENDING)
        if layout is _PENDING and self._filter is not None and not self._filter(name):
            layout = self._layouts[name] = None
        if layout is None:
            return
        opcode = update.opcode
        error: BaseException | None = None
        lost: int | None = None
        try:
            old = None if opcode == _INSERT else update.old
        except BaseException as failure:
            # Values from before the change that cannot be read cannot be put back either.
            self._event(name, layout, _UNRESTORABLE, None, failure, None)
            return
        try:
            new = None if opcode == _DELETE else update.new
        except BaseException as failure:
            # Text that is not UTF-8, say: the row cannot be keyed, but can be found by rowid.
            error, new = failure, None
            lost = update.rowid if opcode == _INSERT else update.rowid_new
        if layout is _PENDING:
            # A stretch trusts no layout before it settles (the schema may have changed since
            # the last one), so the event waits; ``_event`` says so for the rare paths above.
            self._pending.append((name, old, new, error, lost))
            return
        self._event(name, layout, old, new, error, lost)

    def _event(
        self,
        name: str,
        layout: _Layout | None,
        old: Any,
        new: Any,
        error: BaseException | None,
        lost: int | None,
    ) -> None:
        if layout is _PENDING:
            # Layouts are read outside the hook (SQL cannot run inside it), when the stretch
            # ends; so is whether the table is recorded at all, which decides the error's fate.
            self._pending.append((name, old, new, error, lost))
            return
        assert layout is not None
        if error is not None:
            # The hook cannot fail the statement: the error is raised when the stretch ends.
            if self.failure is None:
                self.failure = error
            if lost is not None:
                self.lost.append((name, lost))
        if old is _UNRESTORABLE:
            self.unrestorable = True
            return
        try:
            if old is not None:
                self._note(name, layout, old, None)
            if new is not None:
                self._note(name, layout, None, new)
        except BaseException as failure:
            if self.failure is None:
                self.failure = failure

    def _note(self, name: str, layout: _Layout, old: Any, new: Any) -> None:
        if layout.stat1:
            # A session records ANALYZE's rows with a NULL index name as an empty blob.
            old, new = _stat1_row(old), _stat1_row(new)
        row = old if old is not None else new
        if len(row) != layout.width:
            raise apsw.SchemaChangeError(f"table {name} changed its columns while recording")
        key_positions = layout.key
        if len(key_positions) == 1:
            part = row[key_positions[0]]
            if part is None:
                return
            exact: Any = _exact(part)
            values: tuple[Any, ...] = (part,)
        else:
            values = tuple([row[position] for position in key_positions])
            if None in values:
                return
            exact = tuple(map(_exact, values))
        rows = self.rows.get(name)
        if rows is None:
            rows = self.rows[name] = {}
        if exact not in rows:
            rows[exact] = (values, old if old is None else tuple([old[i] for i in layout.stored]))

    def _layout(self, name: str) -> _Layout | None:
        if name in self._layouts:
            return self._layouts[name]
        found: _Layout | None = None
        if self._filter is None or self._filter(name):
            tables = self._tables
            if tables is None:
                # Every table's text in one statement, read at the first table met: what
                # PRAGMA table_xinfo would report follows from it alone.
                self._version = self._reader().execute(_SCHEMA_VERSION).get
                rows: list[Any] = self._conn.execute(_TABLES).fetchall()
                tables = self._tables = dict(rows)
            sql = tables.get(name)
            if sql is None:
                # Not an ordinary table of main's (gone, or SQLite's own): asked directly.
                found = _read_layout(self._conn, name)
            else:
                found = _cached_layout(self._conn, name, sql)
        self._layouts[name] = found
        return found

    def _settle(self) -> None:
        known = self._known
        if known is not None:
            # Earlier stretches' layouts, taken back if the schema has not changed since.
            self._known = None
            if self._reader().execute(_SCHEMA_VERSION).get == self._version:
                layouts, tables = known
                layouts.update(self._layouts)
                self._layouts, self._tables = layouts, tables
        pending, settled = self._pending, 0
        layouts = self._layouts
        note = self._note
        try:
            for name, old, new, error, lost in pending:
                layout = layouts.get(name, _PENDING)
                if layout is _PENDING:
                    # A layout read that fails (interrupted, say) leaves this event and the
                    # rest pending, so ``undo`` settles them again rather than forgetting rows.
                    layout = self._layout(name)
                settled += 1
                if layout is None:
                    continue
                if error is None and old is None and new is not None:
                    # An insert, the usual event: ``_event``'s one step for it.
                    try:
                        note(name, layout, None, new)
                    except BaseException as failure:
                        if self.failure is None:
                            self.failure = failure
                else:
                    self._event(name, layout, old, new, error, lost)
        finally:
            del pending[:settled]

    def changes(self) -> list[Change]:
        """The net change of every touched row, as a changeset would hold it.

        Raises what the hook could not read, or what reading a row back raised
        (text that is not UTF-8, say); ``undo`` then puts the rows back.
        """
        if self._session is not None:
            self._changeset = self._session.changeset()
            return [
                (change.name, change.op, change.old, change.new)
                for change in apsw.Changeset.iter(self._changeset)
            ]
        if self._pending:
            self._settle()
        if self.failure is not None:
            raise self.failure
        if (
            self._events == 0
            and self._conn.total_changes() != self._changes_before
            and not self._hook_is_live()
        ):
            # Rows changed and the hook saw none: a session opened on the connection took it,
            # so what changed is unknown and cannot be put back.
            self.unrestorable = True
            raise WorldBug(_SESSION_HOLDS_HOOK)
        found: list[Change] = []
        cursor = self._reader()
        try:
            execute = cursor.execute
            for name, rows in self.rows.items():
                layout = self._layouts[name]
                assert layout is not None
                read = layout.read
                for values, old in rows.values():
                    # Read to its end, so the cursor is left with no statement under way; the
                    # row is the loop's last (a key matches one at most).
                    current = None
                    for current in execute(read, values):  # noqa: B007
                        pass
                    if old is None:
                        if current is not None:
                            found.append((name, "INSERT", None, current))
                    elif current is None:
                        found.append((name, "DELETE", old, None))
                    else:
                        # same_value, written out: a call per column costs more than the test.
                        new = tuple(
                            [
                                _NO_CHANGE if type(was) is type(now) and was == now else now
                                for was, now in zip(old, current, strict=True)
                            ]
                        )
                        if new.count(_NO_CHANGE) != len(new):
                            found.append((name, "UPDATE", old, new))
        except BaseException:
            # A row that could not be read (text that is not UTF-8, say) leaves its statement
            # under way: the cursor goes with it, and the next read makes another.
            self._cursor = None
            cursor.close(True)
            raise
        return found

    def _reader(self) -> apsw.Cursor:
        """The capture's cursor, made the first time it reads."""
        cursor = self._cursor
        if cursor is None:
            cursor = self._cursor = self._conn.cursor()
        return cursor

    def _hook_is_live(self) -> bool:
        """Whether the hook still sees this connection's writes.

        Asked when rows changed and the hook saw none, which a session opened on the
        connection since the stretch began explains (it takes the hook), but so does a
        write no hook ever sees: a virtual table's, such as an FTS5 index's commands. So
        a write the hook must see is made and undone: a row of a temporary table, in a
        savepoint rolled back, which leaves nothing behind.
        """
        conn = self._conn
        before, recording = self._events, self.recording
        self.recording = True
        conn.execute("SAVEPOINT seahaven_capture_probe")
        try:
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS seahaven_capture_probe (x)")
            conn.execute("INSERT INTO temp.seahaven_capture_probe VALUES (1)")
        finally:
            self.recording = recording
            conn.execute("ROLLBACK TO seahaven_capture_probe")
            conn.execute("RELEASE seahaven_capture_probe")
        return self._events != before

    def undo(self) -> None:
        """Put every touched row back as it was when first seen; raises if one cannot be."""
        conn = self._conn
        if self._session is not None:
            if not self._changeset:
                raise apsw.SQLError("the session's changes could not be read")
            apsw.Changeset.apply(
                apsw.Changeset.invert(self._changeset),
                conn,
                conflict=lambda _reason, _change: apsw.SQLITE_CHANGESET_ABORT,
            )
            return
        if self._pending:
            self._settle()
        if self.unrestorable:
            raise apsw.SQLError("a row's values before the change could not be read")
        recording, self.recording = self.recording, False
        try:
            with conn:
                conn.execute("PRAGMA defer_foreign_keys = ON")
                for name, rowid in self.lost:
                    if self._layout(name) is None:
                        raise apsw.SQLError(f"a row of {name} cannot be found to be undone")
                    conn.execute(f"DELETE FROM main.{_quote(name)} WHERE rowid = ?", (rowid,))
                for name, rows in self.rows.items():
                    layout = self._layouts[name]
                    assert layout is not None
                    table = f"main.{_quote(name)}"
                    where = " AND ".join(f"{_quote(column)} IS ?" for column in layout.key_names)
                    names = ", ".join(_quote(column) for column in layout.columns)
                    marks = ", ".join("?" for _ in layout.columns)
                    assignments = ", ".join(f"{_quote(column)} = ?" for column in layout.columns)
                    for values, old in rows.values():
                        if old is None:
                            conn.execute(f"DELETE FROM {table} WHERE {where}", values)
                            continue
                        conn.execute(
                            f"UPDATE {table} SET {assignments} WHERE {where}", old + values
                        )
                        if conn.changes() == 0:
                            conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", old)
        finally:
            self.recording = recording


_PENDING: Any = object()
# Each ordinary table of main's, with the text of its CREATE TABLE statement.
_TABLES = "SELECT name, sql FROM main.sqlite_schema WHERE type = 'table'"
# ``main``'s schema cookie, which every change to its schema moves.
_SCHEMA_VERSION = "PRAGMA main.schema_version"
# (table, its CREATE TABLE text) -> its layout, or None without a key, for every store of the
# process: the text says all PRAGMA table_xinfo reports, so stores of one schema (each episode's
# fresh instance) read it once. Kept to a bound.
_LAYOUTS: dict[tuple[str, str], _Layout | None] = {}
_LAYOUTS_KEPT = 1024
# In place of a row's old values that could not be read.
_UNRESTORABLE: Any = object()
_SESSION_HOLDS_HOOK = (
    "an SQLite session is attached to this store's connection, and it holds the preupdate "
    "hook the change log records with; close it (to compare a store's contents, diff two "
    "images with a session on a connection of your own)"
)
# Schema text's hash -> whether a store of that schema records with a session.
_BY_SESSION: dict[str, bool] = {}


def _read_layout(conn: apsw.Connection, name: str) -> _Layout | None:
    """Table ``name`` of ``main`` as PRAGMA table_xinfo reports it; None without a key."""
    xinfo = conn.execute(f"PRAGMA main.table_xinfo({_quote(name)})").fetchall()
    if name == "sqlite_stat1":
        # A session keys ANALYZE's table by its table and index names.
        keyed = {"tbl": 1, "idx": 2}
        xinfo = [(*row[:5], keyed.get(str(row[1]), 0), row[6]) for row in xinfo]
    if any(row[5] for row in xinfo):
        return _Layout(name, xinfo)
    return None


def _cached_layout(conn: apsw.Connection, name: str, sql: str) -> _Layout | None:
    """``_read_layout``'s answer for table ``name`` whose CREATE TABLE text is ``sql``."""
    key = (name, sql)
    found: _Layout | None = _LAYOUTS.get(key, _PENDING)
    if found is _PENDING:
        found = _read_layout(conn, name)
        if len(_LAYOUTS) >= _LAYOUTS_KEPT:
            # Emptied whole, which no other thread's lookup can trip over mid-way.
            _LAYOUTS.clear()
        _LAYOUTS[key] = found
    return found


def _has_virtual_columns(conn: apsw.Connection) -> bool:
    """Whether a table of ``main`` has a virtual generated column (hidden 2 in table_xinfo)."""
    found = conn.execute(
        "SELECT 1 FROM pragma_table_list AS t, pragma_table_xinfo(t.name) AS c "
        "WHERE t.schema = 'main' AND t.type = 'table' AND c.hidden = 2 LIMIT 1"
    ).fetchone()
    return found is not None
