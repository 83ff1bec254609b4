"""The finished episode, as every grader reads it.

An ``Episode`` holds what an episode left: its change log netted per row
(``changes``), the calls it made (``calls``), the answer it submitted, a
read-only view of the stores as the episode left them (``end``), and, made only
when a grader asks, a view of the stores as it found them (``start``) and the
net changes of the scenario's reference solution (``solution``). Graders only
read it; nothing here writes to a store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from seahaven.errors import WorldBug
from seahaven.grading.fold import Changes, fold
from seahaven.stores.changelog import LogRecord
from seahaven.stores.db import Db

if TYPE_CHECKING:
    from seahaven.instance.instance import Instance

__all__ = ["Episode", "quote_name", "quote_table"]

_NOT_READ = object()


def quote_name(name: str) -> str:
    """An identifier quoted as SQLite quotes one: ``"name"``."""
    return '"' + name.replace('"', '""') + '"'


def quote_table(schema: str, table: str) -> str:
    """``"schema"."table"``, each part quoted as SQLite quotes an identifier."""
    return quote_name(schema) + "." + quote_name(table)


class Episode:
    """What one episode left behind, for graders to read."""

    def __init__(
        self,
        *,
        log: Iterable[LogRecord | Mapping[str, Any]],
        calls: Sequence[Mapping[str, Any]] = (),
        answer: Any = None,
        submitted: bool = False,
        end: Db | Callable[[], Db] | None = None,
        stores: Mapping[str, str] | None = None,
        start: Callable[[], Db] | None = None,
        solution: Callable[[], Changes] | None = None,
        document: Callable[[], dict[str, Any]] | dict[str, Any] | None = None,
        query: Callable[[str, str, Sequence[Any]], list[dict[str, Any]]] | None = None,
        conversation: Sequence[Mapping[str, Any]] = (),
        ended_by: str | None = None,
    ) -> None:
        self.changes: Changes = fold(log)
        #: Every dispatched call, each with its ``actor``: the agent's, a user's, an event's.
        self.calls: list[dict[str, Any]] = [dict(call) for call in calls]
        self.answer = answer
        self.submitted = submitted
        #: The conversation with a scenario's simulated user, each message with its speaker.
        self.conversation: list[dict[str, Any]] = [dict(message) for message in conversation]
        #: How the episode ended (``submit``, ``budget``, ``finish``, ``user``), when known.
        self.ended_by = ended_by
        self._end = end
        self._stores = dict(stores) if stores is not None else {"main": "main"}
        self._start_factory = start
        self._start: Db | None = None
        self._solution_factory = solution
        self._solution: Any = _NOT_READ
        self._document = document
        self._query = query

    @classmethod
    def of(
        cls,
        instance: Instance,
        *,
        answer: Any = None,
        submitted: bool = False,
        start: Callable[[], Db] | None = None,
        solution: Callable[[], Changes] | None = None,
        conversation: Sequence[Mapping[str, Any]] = (),
        ended_by: str | None = None,
    ) -> Episode:
        """The episode an instance holds now; read it between calls, never inside one."""
        return cls(
            log=instance.change_log(),
            calls=[record.to_dict() for record in instance.call_log()],
            answer=answer,
            submitted=submitted,
            # Opened only when a check queries it: many graders read only the fold.
            end=instance.inspect,
            stores={node.path: node.schema_name for node in instance.world.composition().nodes},
            start=start,
            solution=solution,
            document=instance.state,
            query=lambda store, sql, params: instance.query(sql, *params, store=store),
            conversation=conversation,
            ended_by=ended_by,
        )

    @classmethod
    def from_document(
        cls, document: Mapping[str, Any], *, answer: Any = None, submitted: bool = False
    ) -> Episode:
        """An episode read back from a saved state document in a built-in format.

        Only the checks that read the change log and the calls can grade it: a
        saved document carries no stores to query. A served session's document
        says how a bound episode ended and holds its conversation (``scenario``).
        """
        state = document.get("state")
        log = state.get("db", {}).get("log") if isinstance(state, Mapping) else None
        if not isinstance(log, list):
            raise WorldBug(
                "this document has no change log at state.db.log; save documents in "
                "seahaven.state/1 or seahaven.state+calls/1 to grade them later"
            )
        calls = state.get("calls", []) if isinstance(state, Mapping) else []
        # Store paths, for the sentences checks write; a saved document has no views to query.
        stores = {path: path for path in document.get("composition", {"main": None})}
        trial = document.get("scenario")
        trial = trial if isinstance(trial, Mapping) else {}
        conversation = trial.get("conversation")
        ended_by = trial.get("ended_by")
        return cls(
            log=log,
            calls=calls,
            answer=answer,
            submitted=submitted,
            stores=stores,
            document=dict(document),
            conversation=conversation if isinstance(conversation, list) else (),
            ended_by=ended_by if isinstance(ended_by, str) else None,
        )

    # --- the views --------------------------------------------------------------------------

    @property
    def end(self) -> Db:
        """A read-only view of every store as the episode left it (added stores attached)."""
        if callable(self._end):
            self._end = self._end()
        if self._end is None:
            raise WorldBug(
                "this episode has no end state to read (it was read back from a saved "
                "document); grade checks that query the stores while the instance is alive"
            )
        return self._end

    @property
    def start(self) -> Db:
        """A read-only view of every store as the episode found them, made on first use."""
        if self._start is None:
            if self._start_factory is None:
                raise WorldBug(
                    "this episode has no start state to read; it is made by a scenario's "
                    "trial, which knows where the episode started"
                )
            self._start = self._start_factory()
        return self._start

    @property
    def solution(self) -> Changes:
        """The net changes the scenario's reference solution makes from the same start."""
        if self._solution is _NOT_READ:
            if self._solution_factory is None:
                raise WorldBug(
                    "this scenario has no reference solution to compare with; give it a "
                    "solution (a list of tool calls) or drop the matches_solution check"
                )
            self._solution = self._solution_factory()
        solution: Changes = self._solution
        return solution

    @property
    def document(self) -> dict[str, Any]:
        """The state document in the instance's own format, read on first use."""
        if callable(self._document):
            self._document = self._document()
        if self._document is None:
            raise WorldBug("this episode was made without its state document")
        return self._document

    @property
    def stores(self) -> list[str]:
        """The paths of the stores the episode holds, root (``main``) first."""
        return list(self._stores)

    def table(self, table: str, store: str = "main") -> str:
        """A table's quoted name on the ``end`` and ``start`` views: ``"payments"."charges"``."""
        schema = self._stores.get(store)
        if schema is None:
            known = ", ".join(self._stores)
            raise WorldBug(f"this episode has no store {store!r}; its stores are {known}")
        return quote_table(schema, table)

    def read(
        self,
        table: str,
        sql: Callable[[str], str],
        params: Sequence[Any] = (),
        *,
        store: str = "main",
    ) -> list[dict[str, Any]]:
        """Rows of a read-only query on one table of one store, as the episode left it.

        ``sql`` writes the query around the table's quoted name. A live episode
        runs it on the store's own connection, which costs nothing to open;
        otherwise it runs on ``end``, where the name carries its store's schema.
        """
        if self._query is not None:
            if store not in self._stores:
                self.table(table, store)  # raises, naming the stores there are
            return self._query(store, sql(quote_name(table)), params)
        return self.end.rows(sql(self.table(table, store)), *params)

    def calls_to(self, tool: str) -> list[dict[str, Any]]:
        """The calls made to one tool, by the name the agent used, in order."""
        return [call for call in self.calls if call.get("tool") == tool]
