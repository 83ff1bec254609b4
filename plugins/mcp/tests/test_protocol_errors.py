"""``seahaven mcp`` answers every malformed line with JSON-RPC 2.0's error, and goes on.

Each test drives the real process with raw bytes, reads its answer to each line,
and then hands the same pipes to the SDK's client, which initializes, lists and
calls as if nothing had happened.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from conftest import BOUND_SECONDS, RawClient, Server, message, raw_server
from mcp import types

PARSE, INVALID, NO_METHOD, BAD_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603


def nested(depth: int, inner: str = "1") -> str:
    return "[" * (depth - 1) + inner + "]" * (depth - 1)


def call(id: Any, name: str, arguments: str = "{}") -> bytes:
    """A tools/call line whose name and arguments are JSON text as given (escapes kept)."""
    return (
        f'{{"jsonrpc":"2.0","id":{json.dumps(id)},"method":"tools/call",'
        f'"params":{{"name":{name},"arguments":{arguments}}}}}\n'
    ).encode()


# Each line, and the error code and id it is answered with.
ANSWERED: list[tuple[str, bytes, int, Any]] = [
    ("invalid UTF-8", b"\xff\xfe\n", PARSE, None),
    ("UTF-8 cut short", b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xe2\x82"}\n', PARSE, None),
    ("not JSON", b"not json\n", PARSE, None),
    ("a NUL byte after the value", b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00\n', PARSE, None),
    ("a NUL byte in a string", b'{"jsonrpc":"2.0","id":1,"method":"pi\x00ng"}\n', PARSE, None),
    ("NaN", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}\n', PARSE, None),
    (
        "an id too large for a double",
        b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}\n',
        PARSE,
        None,
    ),
    ("an argument too large for a double", call(15, '"ping"', '{"x":1e400}'), PARSE, None),
    ("Infinity in an argument", call(16, '"ping"', '{"x":-Infinity}'), PARSE, None),
    ("text after the value", b'{"jsonrpc":"2.0","id":1,"method":"ping"} and more\n', PARSE, None),
    ("unclosed", b'{"jsonrpc":"2.0","id":1,"method":"ping"\n', PARSE, None),
    ("a batch", b'[{"jsonrpc":"2.0","id":2,"method":"ping"}]\n', INVALID, None),
    ("an empty batch", b"[]\n", INVALID, None),
    ("null", b"null\n", INVALID, None),
    ("a number", b"42\n", INVALID, None),
    ("a string", b'"ping"\n', INVALID, None),
    ("true", b"true\n", INVALID, None),
    ("an empty object", b"{}\n", INVALID, None),
    ("no method", b'{"jsonrpc":"2.0","id":3}\n', INVALID, 3),
    ("no jsonrpc", b'{"id":4,"method":"ping"}\n', INVALID, 4),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":5,"method":"ping"}\n', INVALID, 5),
    ("a method that is a number", b'{"jsonrpc":"2.0","id":6,"method":5}\n', INVALID, 6),
    ("params that are a string", message(id=7, method="ping", params="x"), INVALID, 7),
    ("an object id", message(id={"a": 1}, method="ping"), INVALID, None),
    ("a list id", message(id=[1], method="ping"), INVALID, None),
    ("a null id", message(id=None, method="ping"), INVALID, None),
    ("a fractional id", message(id=1.5, method="ping"), INVALID, None),
    ("a boolean id", message(id=True, method="ping"), INVALID, None),
    ("result and error", message(id=8, result={}, error={"code": 1, "message": "x"}), INVALID, 8),
    ("an unknown method", message(id=9, method="no/such/method"), NO_METHOD, 9),
    ("a method the server does not serve", message(id=10, method="prompts/list"), NO_METHOD, 10),
    ("params that are a list", message(id=11, method="ping", params=[1]), BAD_PARAMS, 11),
    ("tools/call without a name", message(id=12, method="tools/call", params={}), BAD_PARAMS, 12),
    (
        "a lone surrogate in the id",
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}\n',
        INVALID,
        None,
    ),
    (
        "a lone surrogate in the method",
        b'{"jsonrpc":"2.0","id":13,"method":"\\udfff"}\n',
        INVALID,
        13,
    ),
    ("a lone surrogate in a tool name", call(14, '"pay\\ud800"'), BAD_PARAMS, 14),
    (
        "a lone surrogate in an argument",
        call(15, '"create_customer"', '{"email":"\\ud800"}'),
        BAD_PARAMS,
        15,
    ),
    (
        "a lone surrogate in a member name",
        b'{"jsonrpc":"2.0","id":16,"method":"ping","\\ud800":1}\n',
        INVALID,
        None,
    ),
    ("100000 brackets", b"[" * 100_000 + b"\n", PARSE, None),
    ("50000 open objects", b'{"a":' * 50_000 + b"\n", PARSE, None),
    ("a closed nest 150 deep", nested(150).encode() + b"\n", PARSE, None),
    (
        "arguments 120 deep",
        call(17, '"create_customer"', '{"email":' + nested(120) + "}"),
        PARSE,
        None,
    ),
]

# Lines that are answered with nothing at all: blank lines, notifications, a stray response.
UNANSWERED: list[tuple[str, bytes]] = [
    ("an empty line", b"\n"),
    ("a line of spaces", b"   \r\n"),
    ("an unknown notification", message(method="notifications/no_such_thing")),
    ("a notification with list params", message(method="notifications/cancelled", params=[1])),
    (
        "a notification with a lone surrogate",
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\\ud800"}}\n',
    ),
    ("a response to nothing", message(id=99, result={})),
]


def check_error(name: str, answer: dict[str, Any], code: int, id: Any) -> list[str]:
    problems = []
    if answer.get("jsonrpc") != "2.0" or "result" in answer or "id" not in answer:
        problems.append(f"{name}: not a JSON-RPC error response: {answer}")
    error = answer.get("error") or {}
    if error.get("code") != code or answer.get("id") != id:
        problems.append(f"{name}: wanted code {code} and id {id!r}, got {answer}")
    if not isinstance(error.get("message"), str) or len(error["message"]) > 300:
        problems.append(f"{name}: the message is not a short text: {error.get('message')!r}")
    return problems


async def happy_path(raw: RawClient) -> None:
    """The SDK's client, on the same process: the session went on."""
    async with raw.session() as session:
        with anyio.fail_after(BOUND_SECONDS):
            listed = await session.list_tools()
            assert "create_customer" in [tool.name for tool in listed.tools]
            made = await session.call_tool("create_customer", {"email": "ada@example.com"})
            assert made.isError is False
            block = made.content[0]
            assert isinstance(block, types.TextContent)
            assert json.loads(block.text)["email"] == "ada@example.com"
            unknown = await session.call_tool("no_such_tool", {})
            assert unknown.isError is True


def test_every_malformed_line_is_answered_per_json_rpc_and_the_session_goes_on(
    server_dirs: Callable[[], Server],
) -> None:
    server = server_dirs()

    async def scenario() -> list[str]:
        problems: list[str] = []
        async with raw_server(server, ["--world", "payments", "--seed", "1"]) as raw:
            await raw.initialize()
            for name, line, code, id in ANSWERED:
                await raw.send(line)
                problems += check_error(name, await raw.answer(), code, id)
            for number, (name, line) in enumerate(UNANSWERED):
                await raw.send(line)
                # The next answer is the ping's: nothing was written for the line.
                after = await raw.request(f"after-{number}", "ping")
                if after.get("result") != {}:
                    problems.append(f"{name}: the ping after it got {after}")
            # A line ended by CRLF is a line like any other.
            await raw.send(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
            crlf = await raw.answer()
            if crlf != {"jsonrpc": "2.0", "id": "crlf", "result": {}}:
                problems.append(f"a CRLF line: {crlf}")
            await happy_path(raw)
            await raw.close_stdin()
            with anyio.fail_after(BOUND_SECONDS):
                assert await raw.process.wait() == 0
        return problems

    problems = anyio.run(scenario)
    assert problems == [], "\n".join(problems)
    assert "ExceptionGroup" not in server.stderr
    assert "Traceback" not in server.stderr
    assert server.files() == []


def _peak_memory_kib(pid: int) -> int | None:
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return None
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def test_a_line_longer_than_the_limit_is_refused_without_being_held(
    server_dirs: Callable[[], Server],
) -> None:
    from seahaven_mcp.jsonrpc import MAX_LINE_BYTES

    server = server_dirs()
    size = 4 * MAX_LINE_BYTES
    head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"'
    huge = head + b"a" * size + b'"}}}\n'

    async def scenario() -> None:
        async with raw_server(server, ["--world", "payments", "--seed", "1"]) as raw:
            await raw.initialize()
            before = _peak_memory_kib(raw.process.pid)
            async with anyio.create_task_group() as group:
                # Sent beside the reading: the refusal comes before the line has all gone.
                group.start_soon(raw.send, huge + message(id="next", method="ping"))
                refused = await raw.answer()
                assert check_error("a huge line", refused, INVALID, None) == []
                assert str(MAX_LINE_BYTES) in refused["error"]["message"]
                assert await raw.answer() == {"jsonrpc": "2.0", "id": "next", "result": {}}
            after = _peak_memory_kib(raw.process.pid)
            if before is not None and after is not None:
                # At most the limit and a read are held, never the line.
                assert (after - before) * 1024 < size // 2, (before, after)
            # A line of exactly the limit is read (and is just not JSON).
            await raw.send(b"x" * MAX_LINE_BYTES + b"\n")
            assert (await raw.answer())["error"]["code"] == PARSE
            await happy_path(raw)

    anyio.run(scenario)


LONE_SURROGATE_WORLD = '''
import seahaven

world = seahaven.World(
    name="surrogates",
    version="1.0.0",
    schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT",
    state_format="seahaven.state/1",
)


@world.tool
def broken_text(ctx: seahaven.Ctx) -> dict[str, str]:
    """Return text that is not Unicode: a bug of the world's."""
    return {"text": "\\ud800"}


@world.tool
def fine(ctx: seahaven.Ctx) -> str:
    """Answer."""
    return "fine"
'''


def test_an_answer_that_cannot_be_written_becomes_an_internal_error_and_later_ones_go_out(
    server_dirs: Callable[[], Server],
) -> None:
    server = server_dirs()
    (server.cwd / "surrogate_world.py").write_text(LONE_SURROGATE_WORLD, encoding="utf-8")

    async def scenario() -> None:
        async with raw_server(server, ["--world", "surrogate_world:world", "--seed", "1"]) as raw:
            await raw.initialize()
            broken = await raw.request(1, "tools/call", {"name": "broken_text", "arguments": {}})
            assert check_error("a result with a lone surrogate", broken, INTERNAL, 1) == []
            fine = await raw.request(2, "tools/call", {"name": "fine", "arguments": {}})
            assert fine["result"]["content"][0]["text"] == '"fine"'

    anyio.run(scenario)
    assert "could not be written as JSON" in server.stderr
