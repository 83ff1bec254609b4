"""A worker running its trials in turn: the begun channel and the batches of results.

``seahaven.evaluation.worker._run_in_turn`` is driven here on this test's main
thread (it installs a SIGINT handler, which only the main thread may), with a
thread playing the parent over a real socket pair; the end-to-end runs, stops and
crashes are in ``test_eval_processes``.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import pytest

from seahaven.evaluation import plan, solution_policy, worker
from seahaven.evaluation.begun import BegunReader, BegunWriter
from seahaven.evaluation.results import TrialResult
from seahaven.scenarios import ScenarioSet, load_pack


@pytest.fixture(scope="module")
def company() -> ScenarioSet:
    return load_pack("company")


@pytest.fixture()
def sigint_kept() -> Iterator[None]:
    """Put back this process's SIGINT handler, which the worker's loop replaces."""
    kept = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, kept)


def test_the_begun_channel_gives_each_index_once_in_order() -> None:
    ours, theirs = socket.socketpair()
    reader, writer = BegunReader(ours), BegunWriter(theirs.detach())
    assert reader.drain() == []
    for index in (0, 1, 7, 2**40):
        writer.note(index)
    assert reader.drain() == [0, 1, 7, 2**40]
    assert reader.drain() == []
    writer.note(5)
    writer.close()
    # What was written before the worker's end closed is all read, then nothing more.
    assert reader.drain() == [5]
    assert reader.drain() == []
    writer.note(6)  # its end is closed: nothing to do, nothing raised
    reader.close()


def test_an_index_written_in_two_parts_is_read_whole() -> None:
    ours, theirs = socket.socketpair()
    reader = BegunReader(ours)
    whole = (12345).to_bytes(8, "little", signed=True)
    theirs.sendall(whole[:3])
    assert reader.drain() == []
    theirs.sendall(whole[3:])
    assert reader.drain() == [12345]
    theirs.close()
    reader.close()


def _play_parent(
    company: ScenarioSet, count: int
) -> tuple[Connection, BegunReader, Connection, BegunWriter, list[Any]]:
    """The parent's ends and the worker's, with ``count`` trials and a stop already sent."""
    ours, theirs = socket.socketpair()
    parent, child = Connection(ours.detach()), Connection(theirs.detach())
    begun_ours, begun_theirs = socket.socketpair()
    specs = plan(company, trials=1)[:count]
    sent = [(i, "pack", spec.scenario.id, spec.trial, spec.seed) for i, spec in enumerate(specs)]
    # A few trials fit the socket's buffer: sent before the worker's loop reads them.
    parent.send(("trials", sent))
    parent.send(("stop",))
    return parent, BegunReader(begun_ours), child, BegunWriter(begun_theirs.detach()), sent


def _received(parent: Connection) -> list[tuple[Any, ...]]:
    messages = []
    while parent.poll(0):
        messages.append(parent.recv())
    return messages


def _setup() -> worker.WorkerSetup:
    return worker.WorkerSetup(
        name="worker process 1 of 1", policy=b"", policy_name="solution", packs={},
        concurrency=1, in_turn=True,
    )  # fmt: skip


@pytest.mark.usefixtures("sigint_kept")
def test_quick_trials_come_back_in_batches_and_each_start_is_on_the_channel(
    company: ScenarioSet,
) -> None:
    parent, begun, child, writer, sent = _play_parent(company, 20)
    worker._run_in_turn(child, _setup(), solution_policy, None, {"pack": company}, writer)
    messages = _received(parent)
    assert {message[0] for message in messages} == {"results"}
    returned = [(index, result) for message in messages for index, result in message[1]]
    assert [index for index, _ in returned] == list(range(20))
    assert all(isinstance(result, TrialResult) and result.passed for _, result in returned)
    # A trial of this pack takes about a millisecond: far fewer messages than trials.
    assert len(messages) < len(sent)
    assert begun.drain() == list(range(20))


@pytest.mark.usefixtures("sigint_kept")
def test_a_result_that_waited_its_time_goes_back_at_once(
    company: ScenarioSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no wait allowed, each result is its own message, as a slow trial's is.
    monkeypatch.setattr(worker, "RESULTS_WAIT", 0.0)
    parent, begun, child, writer, _ = _play_parent(company, 5)
    worker._run_in_turn(child, _setup(), solution_policy, None, {"pack": company}, writer)
    messages = _received(parent)
    assert [[index for index, _ in message[1]] for message in messages] == [[i] for i in range(5)]
    assert begun.drain() == list(range(5))


@pytest.mark.usefixtures("sigint_kept")
def test_a_sigint_between_trials_is_left_to_the_stop_message(company: ScenarioSet) -> None:
    # The parent stops a worker with a message and a SIGINT; between trials only the
    # message counts: the loop ends on it, not on a KeyboardInterrupt raised anywhere.
    parent, _, child, writer, _ = _play_parent(company, 3)

    def interrupt_after_the_first_result(*args: Any, **kwargs: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        real(*args, **kwargs)

    real = worker._send_results
    worker._send_results = interrupt_after_the_first_result  # type: ignore[assignment]
    try:
        worker._run_in_turn(child, _setup(), solution_policy, None, {"pack": company}, writer)
    finally:
        worker._send_results = real  # type: ignore[assignment]
    returned = [index for message in _received(parent) for index, _ in message[1]]
    assert returned == [0, 1, 2]
