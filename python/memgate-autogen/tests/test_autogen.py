"""MemgateMemory against a running memgate, driven by a real AutoGen AssistantAgent.

cmd/memgate's TestAutoGen starts memgate with a host key that may name two
requesters, creates an agent owned by the first, and runs this script with:

    MG_AUTOGEN_URL        memgate's base URL
    MG_AUTOGEN_KEY        the host key
    MG_AUTOGEN_OWNER      the requester that owns the agent
    MG_AUTOGEN_OTHER      another requester, not the owner
    MG_AUTOGEN_AGENT      the agent's id

It exits 0 when every check holds; otherwise it prints what failed and exits 1.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import List, Sequence

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import MemoryQueryEvent
from autogen_core import FunctionCall, Image
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import (
    AssistantMessage,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    SystemMessage,
    UserMessage,
)
from PIL import Image as PILImage
from autogen_ext.models.replay import ReplayChatCompletionClient

from memgate_autogen import MemgateClient, MemgateError, MemgateMemory, conversation_of

QUESTION = "Where does Alice work?"


STARTED = time.monotonic()


def check(ok: bool, what: str) -> None:
    if not ok:
        raise AssertionError(what)
    print(f"ok ({time.monotonic() - STARTED:.1f} s): {what}")


def wait_done(client: MemgateClient, memory_id: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while True:
        m = client.get_memory(memory_id)
        if m.get("status") == "done":
            return
        if m.get("status") == "failed":
            raise AssertionError(f"memory {memory_id} failed: {m.get('last_error')}")
        if time.monotonic() > deadline:
            raise AssertionError(f"memory {memory_id} not done after {limit}s: {m}")
        time.sleep(0.1)


def gone(client: MemgateClient, memory_id: str) -> bool:
    try:
        client.get_memory(memory_id)
    except MemgateError as e:
        if e.code == "not_found" and e.status == 404 and e.request_id:
            return True
        raise
    return False


def sent_messages(replay: ReplayChatCompletionClient) -> List[LLMMessage]:
    calls = replay.create_calls
    check(len(calls) == 1, f"the model was called once (got {len(calls)})")
    messages: Sequence[LLMMessage] = calls[0]["messages"]
    return list(messages)


def memory_systems(messages: Sequence[LLMMessage], default: str) -> List[str]:
    """The system messages sent to the model other than the agent's own."""
    return [m.content for m in messages if isinstance(m, SystemMessage) and m.content != default]


def check_conversation() -> None:
    """AutoGen's message types map to memgate's roles; what is not text is rendered or left out."""
    image = Image.from_pil(PILImage.new("RGB", (1, 1)))
    got = conversation_of([
        SystemMessage(content="Be brief."),
        UserMessage(content=["Look:", image, "where is it?"], source="user"),
        UserMessage(content=[image], source="user"),
        AssistantMessage(content=[FunctionCall(id="1", name="locate", arguments='{"q": "it"}')], source="a"),
        FunctionExecutionResultMessage(content=[
            FunctionExecutionResult(content="Paris", name="locate", call_id="1"),
            FunctionExecutionResult(content="", name="locate", call_id="2"),
        ]),
        AssistantMessage(content="It is in Paris.", source="a"),
    ])
    want = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Look:\nwhere is it?"},
        {"role": "assistant", "content": 'called locate({"q": "it"})'},
        {"role": "tool", "content": "Paris", "name": "locate"},
        {"role": "assistant", "content": "It is in Paris."},
    ]
    check(got == want, f"conversation_of maps roles, renders calls, leaves images and empty output out: {got}")


async def main() -> None:
    check_conversation()
    url, key = os.environ["MG_AUTOGEN_URL"], os.environ["MG_AUTOGEN_KEY"]
    owner, other, agent = os.environ["MG_AUTOGEN_OWNER"], os.environ["MG_AUTOGEN_OTHER"], os.environ["MG_AUTOGEN_AGENT"]
    rest = MemgateClient(url, key, owner)
    mine = MemgateMemory(url, key, owner, agent, max_tokens=300)
    theirs = MemgateMemory(url, key, other, agent, max_tokens=300)

    # The owner's memory adds a fact; the owner also writes one through REST directly.
    await mine.add(MemoryContent(content="Alice works at Acme as an engineer.", mime_type=MemoryMimeType.TEXT))
    check(len(mine.written) == 1, "add keeps the id of what it wrote")
    added = mine.written[0]
    await mine.add(MemoryContent(content={"team": "platform", "lead": "Alice"}, mime_type=MemoryMimeType.JSON,
                                 metadata={"from": "autogen-test"}))
    added_json = mine.written[1]
    check(rest.consistency_token == "", "a client that has not written holds no consistency token")
    direct = rest.add_memory(agent, "Bob works at Globex as a designer.")["id"]
    check(rest.consistency_token != "", "a write leaves the client its consistency token")
    reader = MemgateClient(url, key, owner)
    reader.consistency_token = rest.consistency_token
    check(reader.get_memory(direct).get("id") == direct, "another client with the token reads the write")
    reader.consistency_token = "not-a-token"
    try:
        reader.get_memory(direct)
        check(False, "a malformed consistency token is refused")
    except MemgateError as e:
        check(e.status == 400 and e.code == "invalid", f"a malformed consistency token is 400 invalid: {e}")
    for memory_id in (added, added_json, direct):
        wait_done(rest, memory_id)
    stored = rest.get_memory(added_json)
    check(stored.get("source") == "json" and stored.get("metadata") == {"from": "autogen-test"},
          f"JSON content is stored as JSON, with its metadata: {stored.get('source')}, {stored.get('metadata')}")
    check(rest.get_memory(added).get("source") == "text", "text content is stored as text")
    listed = [m["id"] for m in rest.iter_memories(agent, page_size=1)]
    check(sorted(listed) == sorted([added, added_json, direct]),
          f"the list, a page of one at a time, holds the three memories: {listed}")

    # An AssistantAgent with the memory: the model sees the context block.
    default_system = "You are a helpful AI assistant."
    replay = ReplayChatCompletionClient(["Alice works at Acme."])
    assistant = AssistantAgent("assistant", model_client=replay, memory=[mine], system_message=default_system)
    result = await assistant.run(task=QUESTION)
    sent = sent_messages(replay)
    blocks = memory_systems(sent, default_system)
    check(len(blocks) == 1 and "Acme" in blocks[0], f"the model got one system message with Acme from memgate: {blocks}")
    check(any(isinstance(m, UserMessage) and m.content == QUESTION for m in sent), "the model got the task")
    events = [m for m in result.messages if isinstance(m, MemoryQueryEvent)]
    check(len(events) == 1 and events[0].content[0].content == blocks[0],
          "the run reports the block as a MemoryQueryEvent")
    meta = events[0].content[0].metadata or {}
    check(len(meta.get("facts", [])) >= 1, f"the block names the facts it drew on: {meta}")

    # query finds the fact, with its id.
    found = await mine.query(QUESTION)
    facts = [r for r in found.results if (r.metadata or {}).get("kind") == "fact"]
    check(any("Acme" in str(r.content) and (r.metadata or {}).get("id") for r in facts),
          f"query finds the Acme fact with its id: {[r.content for r in facts]}")
    check(all((r.metadata or {}).get("id") in meta["facts"] or "Acme" not in str(r.content) for r in facts),
          "the Acme fact query finds is the one the block drew on")

    # Another requester, not the owner, sees none of it: no block, no result.
    ctx = UnboundedChatCompletionContext([UserMessage(content=QUESTION, source="user")])
    none = await theirs.update_context(ctx)
    check(none.memories.results == [], "the other requester's context block is empty")
    check(len(await ctx.get_messages()) == 1, "and nothing is added to its model context")
    check((await theirs.query(QUESTION)).results == [], "the other requester's query finds nothing")
    check((await theirs.query("Alice Acme engineer Bob Globex")).results == [], "not by names either")
    replay_b = ReplayChatCompletionClient(["I do not know."])
    their_assistant = AssistantAgent("assistant", model_client=replay_b, memory=[theirs], system_message=default_system)
    await their_assistant.run(task=QUESTION)
    check(memory_systems(sent_messages(replay_b), default_system) == [],
          "an AssistantAgent with the other requester's memory gets no block")
    await theirs.clear()
    check(not gone(rest, added) and not gone(rest, direct), "the other requester's clear deletes nothing")

    # clear deletes what this memory wrote, and only that.
    await mine.clear()
    check(gone(rest, added) and gone(rest, added_json), "after clear, GET of each memory it wrote answers 404 not_found")
    check(not gone(rest, direct), "the memory written through REST directly stays")
    check(mine.written == (), "clear forgets the ids it deleted")
    found = await mine.query(QUESTION)
    check(not any("Acme" in str(r.content) for r in found.results), "and the Acme fact went with it")

    # A typed error carries memgate's code, message and request id.
    try:
        rest.get_memory(added)
        check(False, "GET of a deleted memory raises")
    except MemgateError as e:
        check(e.status == 404 and e.code == "not_found" and e.message != "" and e.request_id != "",
              f"MemgateError carries status, code, message, request_id: {e}")

    for client, want in ((MemgateClient(url, "not-the-key", owner), (401, "unauthenticated")),
                         (MemgateClient(url, key, other + "-unnamed"), (403, "forbidden"))):
        try:
            client.search(agent, QUESTION)
            check(False, f"{want[1]} search raises")
        except MemgateError as e:
            check((e.status, e.code) == want and e.request_id != "",
                  f"a wrong key or a requester the key may not name raises {want}: {e}")

    # The component config round-trips without the key showing in its JSON.
    dumped = mine.dump_component()
    check(key not in dumped.model_dump_json(), "the dumped config does not show the host key")
    loaded = MemgateMemory.load_component(dumped)
    check(isinstance(loaded, MemgateMemory) and loaded.agent_id == agent, "the config loads back")
    await loaded.close()

    rest.delete_memory(direct)
    for m in (mine, theirs):
        await m.close()
    rest.close()
    try:
        await mine.query(QUESTION)
        check(False, "a closed memory refuses calls")
    except RuntimeError:
        check(True, "a closed memory refuses calls")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as e:
        print("FAILED:", e, file=sys.stderr)
        sys.exit(1)
    print("test_autogen: all checks passed")
