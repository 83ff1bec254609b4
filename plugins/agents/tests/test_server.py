"""The scripted server speaks the Chat Completions wire, to the real ``openai`` client."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Callable

import openai
import pytest
from seahaven_agents.testing import (
    MAX_BODY,
    ChatRequest,
    Reply,
    ScriptedChatServer,
    answer,
    call,
    error,
    flaky,
    hang,
    tool_calls,
)

Start = Callable[..., ScriptedChatServer]


def client(server: ScriptedChatServer, **options: float) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url=server.url, max_retries=0, **options)


def post(server: ScriptedChatServer, body: bytes, **headers: str) -> tuple[int, dict[str, object]]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request(
        "POST",
        "/v1/chat/completions",
        body=body,
        headers={"Content-Type": "application/json", **headers},
    )
    answered = connection.getresponse()
    data = json.loads(answered.read())
    connection.close()
    return answered.status, data


def test_the_sdk_reads_tool_calls_answers_and_usage(scripted: Start) -> None:
    server = scripted(
        [
            tool_calls(
                call("list_invoices", {"status": "paid"}), call("whoami"), content="Looking"
            ),
            answer("6"),
        ]
    )
    sdk = client(server)
    tools = [{"type": "function", "function": {"name": "list_invoices", "parameters": {}}}]
    first = sdk.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "How many?"}], tools=tools
    )
    message = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls" and message.content == "Looking"
    assert [c.function.name for c in message.tool_calls or []] == ["list_invoices", "whoami"]
    assert json.loads((message.tool_calls or [])[0].function.arguments) == {"status": "paid"}
    assert first.usage is not None and first.usage.prompt_tokens > 0
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
    second = sdk.chat.completions.create(model="any", messages=[{"role": "user", "content": "?"}])
    assert second.choices[0].message.content == "6" and second.choices[0].finish_reason == "stop"
    [request, _] = server.requests
    assert request.instructions == "How many?" and request.tools == ["list_invoices"]
    assert request.headers["authorization"] == "Bearer sk-test"
    assert [m.id for m in sdk.models.list().data] == ["scripted"]


def test_a_function_of_the_request_answers_and_sees_the_conversation(scripted: Start) -> None:
    def script(request: ChatRequest) -> Reply:
        if request.turn == 0:
            return tool_calls(call("lookup", {"q": request.instructions}))
        return answer(f"got {request.tool_results}")

    sdk = client(scripted(script))
    messages: list[dict[str, object]] = [{"role": "user", "content": "ada"}]
    first = sdk.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    tool_call = (first.choices[0].message.tool_calls or [])[0]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": tool_call.id, "content": '{"owed": 65}'},
    ]
    second = sdk.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert second.choices[0].message.content == "got [{'owed': 65}]"


def test_errors_carry_their_status_and_retry_after(scripted: Start) -> None:
    server = scripted([error(429, "slow down", retry_after=2.5), error(503), answer("ok")])
    sdk = client(server)
    with pytest.raises(openai.RateLimitError) as limited:
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert limited.value.response.headers["retry-after"] == "2.5"
    assert "slow down" in str(limited.value)
    with pytest.raises(openai.InternalServerError):
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    ok = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert ok.choices[0].message.content == "ok"
    # Past the end of a list, the script's own failure: a 400 the client does not retry.
    with pytest.raises(openai.BadRequestError, match="no reply left"):
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_a_hanging_reply_times_the_client_out_and_is_let_go_on_stop() -> None:
    server = ScriptedChatServer([hang()]).start()
    sdk = client(server, timeout=0.3)
    with pytest.raises(openai.APITimeoutError):
        sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    stopped = threading.Thread(target=server.stop)
    stopped.start()
    stopped.join(10)
    assert not stopped.is_alive(), "stop() waited on the hanging request"


def test_a_script_that_fails_is_a_400_naming_it(scripted: Start) -> None:
    def broken(request: ChatRequest) -> Reply:
        raise KeyError("turn")

    server = scripted(broken)
    with pytest.raises(openai.BadRequestError, match="the script raised KeyError"):
        client(server).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    assert server.script_errors == ["the script raised KeyError: 'turn'"]


def test_hostile_requests_get_an_error_and_the_server_goes_on(scripted: Start) -> None:
    server = scripted(lambda request: answer("fine"))
    assert post(server, b"{not json")[0] == 400
    assert post(server, b'{"messages": "no"}')[0] == 400
    assert post(server, b"[1, 2]")[0] == 400
    status, data = post(server, b'{"messages": []}', Host="attacker.example")
    assert status == 403 and "127.0.0.1 or localhost" in str(data)
    status, _ = post(server, b'{"messages": []}', Origin="http://attacker.example")
    assert status == 403
    # A body claimed bigger than the limit is refused before it is read.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Content-Length: {MAX_BODY + 1}\r\n\r\n".encode()
        )
        assert raw.recv(100).startswith(b"HTTP/1.1 413")
    # Garbage on the socket does not take the server down.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(b"\x00\xff\xfe garbage\r\n\r\n")
        raw.recv(100)
    assert post(server, b'{"messages": [], "model": "m"}')[0] == 200
    assert len(server.requests) == 1  # only the request that was one reached the script


def test_requests_are_answered_side_by_side(scripted: Start) -> None:
    # Eight requests that each wait for all eight: served one at a time, they never would.
    everyone = threading.Barrier(8, timeout=60)

    def together(request: ChatRequest) -> Reply:
        everyone.wait()
        return answer("together")

    server = scripted(together, delay=0.01)
    sdk = client(server)
    answers: list[str | None] = []

    def ask() -> None:
        reply = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        answers.append(reply.choices[0].message.content)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == ["together"] * 8 and not server.script_errors


def test_flaky_fails_a_request_once_and_answers_its_retry_however_others_interleave() -> None:
    def request(index: int, text: str) -> ChatRequest:
        body = {"model": "m", "messages": [{"role": "user", "content": text}]}
        return ChatRequest(index=index, body=body, headers={})

    script = flaky(lambda _: answer("fine"), every=2, status=429)
    # "a" fails, "b" comes in between, and "a"'s retry lands on the count's next failing turn:
    # with a plain count it would fail again; a retry is always answered.
    statuses = [script(request(i, text)).status for i, text in enumerate("abac")]
    assert statuses == [429, 200, 200, 429]
