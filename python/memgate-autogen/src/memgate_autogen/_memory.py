"""MemgateMemory: memgate as an AutoGen memory (autogen_core.memory.Memory)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, List, Optional, ParamSpec, Sequence, TypeVar

from autogen_core import CancellationToken, Component, FunctionCall, Image
from autogen_core.memory import Memory, MemoryContent, MemoryMimeType, MemoryQueryResult, UpdateContextResult
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import (
    AssistantMessage,
    FunctionExecutionResultMessage,
    LLMMessage,
    SystemMessage,
    UserMessage,
)
from pydantic import BaseModel, SecretStr
from typing_extensions import Self

from ._client import ContextBlock, MemgateClient, MemgateError, Message, SearchResult

__all__ = ["MemgateMemory", "MemgateMemoryConfig", "conversation_of"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

# The recent messages update_context sends: memgate searches by the newest 1024 bytes
# of them, so more would not change the block.
_RECENT_MESSAGES = 20
# A message's text is cut to this many characters before it is sent.
_MESSAGE_CHARS = 8000
_TOOL_ROLES = ("tool", "function")


class MemgateMemoryConfig(BaseModel):
    """The configuration of a :class:`MemgateMemory` (its component config)."""

    base_url: str
    api_key: Optional[SecretStr] = None
    requester: str
    agent_id: str
    max_tokens: int = 1000
    name: Optional[str] = None
    timeout: float = 30.0


class MemgateMemory(Memory, Component[MemgateMemoryConfig]):
    """An AutoGen memory kept by memgate for one agent, acting for one requester.

    - :meth:`add` stores a text memory for the agent (JSON as JSON, markdown as text);
      memgate extracts entities and facts from it in the background.
    - :meth:`query` searches what the requester may see for the agent: facts, entities
      and memories, each a text :class:`MemoryContent` whose metadata holds its id.
    - :meth:`update_context` sends the model context's recent messages to memgate's
      context endpoint and adds the block it answers as a :class:`SystemMessage`
      (nothing when the block is empty).
    - :meth:`clear` deletes the memories this object added, and nothing else.
    - :meth:`close` closes the client.

    Args:
        base_url: memgate's address, e.g. ``http://127.0.0.1:8080``.
        api_key: a host key (sent as ``Authorization: Bearer``); None in dev mode.
        requester: who the calls act for (``X-Requester-Id``).
        agent_id: the agent whose memory this is.
        max_tokens: the most tokens the context block may hold (1 to 32000).
        name: a name for this memory; ``memgate:<agent_id>`` when not given.
        timeout: seconds each HTTP request may take.
    """

    component_type = "memory"
    component_provider_override = "memgate_autogen.MemgateMemory"
    component_config_schema = MemgateMemoryConfig

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str],
        requester: str,
        agent_id: str,
        *,
        max_tokens: int = 1000,
        name: Optional[str] = None,
        timeout: float = 30.0,
    ) -> None:
        if not agent_id:
            raise ValueError("agent_id is required")
        if not 1 <= max_tokens <= 32000:
            raise ValueError("max_tokens must be between 1 and 32000")
        self._config = MemgateMemoryConfig(
            base_url=base_url,
            api_key=None if api_key is None else SecretStr(api_key),
            requester=requester,
            agent_id=agent_id,
            max_tokens=max_tokens,
            name=name,
            timeout=timeout,
        )
        self._client = MemgateClient(base_url, api_key, requester, timeout=timeout)
        self._written: List[str] = []

    @property
    def name(self) -> str:
        return self._config.name or "memgate:" + self._config.agent_id

    @property
    def agent_id(self) -> str:
        return self._config.agent_id

    @property
    def client(self) -> MemgateClient:
        """The REST client this memory uses, for the routes the protocol has no method for."""
        return self._client

    @property
    def written(self) -> Sequence[str]:
        """The ids of the memories this object added and :meth:`clear` has not deleted yet."""
        return tuple(self._written)

    async def _run(self, token: Optional[CancellationToken], fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Runs a blocking client call in a thread; the token cancels the wait for it."""
        fut = asyncio.ensure_future(asyncio.to_thread(fn, *args, **kwargs))
        if token is not None:
            token.link_future(fut)
        return await fut

    async def add(self, content: MemoryContent, cancellation_token: Optional[CancellationToken] = None) -> None:
        """Stores content as a memory of the agent. Text and markdown go as text, JSON
        (a dict, or a string holding JSON) as JSON; images and other binary content are
        refused with ValueError. The content's metadata goes with it."""
        text, source = _text_of(content)
        metadata: Optional[Dict[str, Any]] = None
        if content.metadata:
            metadata = json.loads(json.dumps(content.metadata, default=str))
        accepted = await self._run(
            cancellation_token,
            self._client.add_memory,
            self._config.agent_id,
            text,
            source=source,
            source_description="autogen",
            metadata=metadata,
        )
        self._written.append(accepted["id"])

    async def query(
        self,
        query: str | MemoryContent = "",
        cancellation_token: Optional[CancellationToken] = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """Searches the agent's memory the requester may see. Facts come first, then
        entities, then memories, each best first, as text; metadata holds ``kind``
        (fact, entity, memory), ``id`` and ``score``, and for a fact its relation, the
        names of its source and target, valid_at, invalid_at and the ids of the memories
        that support it.

        Keyword arguments go to search: ``include`` (any of facts, entities, episodes),
        ``limit`` (per kind), ``scopes``, ``as_of``.
        """
        text = query if isinstance(query, str) else _text_of(query)[0]
        if not text.strip():
            return MemoryQueryResult(results=[])
        allowed = {"include", "limit", "scopes", "as_of"}
        unknown = set(kwargs) - allowed
        if unknown:
            raise TypeError(f"query got unknown keyword arguments {sorted(unknown)}; known: {sorted(allowed)}")
        res = await self._run(cancellation_token, self._client.search, self._config.agent_id, text, **kwargs)
        return MemoryQueryResult(results=_contents_of(res))

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Adds what memgate knows that bears on the next turn to model_context, as one
        SystemMessage, when there is any. The block is also the one result, with the ids
        of the facts, entities and memories it drew on in its metadata."""
        conversation = conversation_of(await model_context.get_messages())[-_RECENT_MESSAGES:]
        if not any(m["role"] not in _TOOL_ROLES and m["content"].strip() for m in conversation):
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        block: ContextBlock = await self._run(
            None, self._client.context, self._config.agent_id, messages=conversation, max_tokens=self._config.max_tokens
        )
        if not block["context"].strip():
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        await model_context.add_message(SystemMessage(content=block["context"]))
        content = MemoryContent(
            content=block["context"],
            mime_type=MemoryMimeType.TEXT,
            metadata={
                "kind": "context",
                "facts": block["facts"],
                "entities": block["entities"],
                "episodes": block["episodes"],
                "tokens": block["tokens"],
                "tokenizer": block["tokenizer"],
            },
        )
        return UpdateContextResult(memories=MemoryQueryResult(results=[content]))

    async def clear(self) -> None:
        """Deletes the memories this object added (with the facts only they support),
        as its requester, one by one; what others wrote, or this requester wrote some
        other way, stays. A memory already gone counts as deleted. Raises the first
        error after trying every one; those that failed are kept for another try."""
        failed: List[str] = []
        first: Optional[MemgateError] = None
        for memory_id in list(self._written):
            try:
                await self._run(None, self._client.delete_memory, memory_id)
            except MemgateError as e:
                if e.code == "not_found":
                    continue
                failed.append(memory_id)
                first = first or e
        self._written = failed
        if first is not None:
            raise first

    async def close(self) -> None:
        self._client.close()

    def _to_config(self) -> MemgateMemoryConfig:
        return self._config.model_copy()

    @classmethod
    def _from_config(cls, config: MemgateMemoryConfig) -> Self:
        return cls(
            config.base_url,
            None if config.api_key is None else config.api_key.get_secret_value(),
            config.requester,
            config.agent_id,
            max_tokens=config.max_tokens,
            name=config.name,
            timeout=config.timeout,
        )


def _text_of(content: MemoryContent) -> tuple[str, str]:
    """The text memgate stores for content, and its source (text or json)."""
    mime = content.mime_type.value if isinstance(content.mime_type, MemoryMimeType) else content.mime_type
    value = content.content
    if isinstance(value, Image):
        raise ValueError("memgate stores text: an image cannot be added")
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False), "json"
    if isinstance(value, bytes):
        if not (mime.startswith("text/") or mime == MemoryMimeType.JSON.value):
            raise ValueError(f"memgate stores text: {mime} content cannot be added")
        value = value.decode("utf-8")
    if mime == MemoryMimeType.JSON.value:
        try:
            json.loads(value)
            return value, "json"
        except ValueError:
            pass
    return value, "text"


def _text_of_message(message: LLMMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts: List[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, FunctionCall):
            parts.append(f"called {part.name}({part.arguments})")
        # Images are left out: memgate searches by text.
    return "\n".join(p for p in parts if p)


def conversation_of(messages: Sequence[LLMMessage]) -> List[Message]:
    """AutoGen's messages as memgate's conversation, oldest first: SystemMessage as
    system, UserMessage as user, AssistantMessage as assistant (function calls as
    ``called name(arguments)``), each result of a FunctionExecutionResultMessage as
    tool. Images are left out, and so are messages left without text. Each text is cut
    to 8000 characters."""
    out: List[Message] = []
    for m in messages:
        if isinstance(m, FunctionExecutionResultMessage):
            for r in m.content:
                if r.content:
                    out.append(Message(role="tool", content=r.content[:_MESSAGE_CHARS], name=r.name))
            continue
        if isinstance(m, SystemMessage):
            role = "system"
        elif isinstance(m, UserMessage):
            role = "user"
        elif isinstance(m, AssistantMessage):
            role = "assistant"
        else:  # a message type AutoGen adds later
            continue
        text = _text_of_message(m)
        if text.strip():
            out.append(Message(role=role, content=text[:_MESSAGE_CHARS]))
    return out


def _contents_of(res: SearchResult) -> List[MemoryContent]:
    out: List[MemoryContent] = []
    for f in res["facts"]:
        out.append(
            MemoryContent(
                content=f.get("fact", ""),
                mime_type=MemoryMimeType.TEXT,
                metadata={
                    "kind": "fact",
                    "id": f.get("id", ""),
                    "relation": f.get("relation", ""),
                    "source": f.get("source", {}).get("name", ""),
                    "target": f.get("target", {}).get("name", ""),
                    "valid_at": f.get("valid_at"),
                    "invalid_at": f.get("invalid_at"),
                    "episodes": f.get("episodes", []),
                    "score": f.get("score"),
                },
            )
        )
    for e in res["entities"]:
        name, summary = e.get("name", ""), e.get("summary", "")
        out.append(
            MemoryContent(
                content=f"{name}: {summary}" if summary else name,
                mime_type=MemoryMimeType.TEXT,
                metadata={"kind": "entity", "id": e.get("id", ""), "type": e.get("type", ""), "score": e.get("score")},
            )
        )
    for ep in res["episodes"]:
        out.append(
            MemoryContent(
                content=ep.get("content", ""),
                mime_type=MemoryMimeType.TEXT,
                metadata={
                    "kind": "memory",
                    "id": ep.get("id", ""),
                    "created_at": ep.get("created_at"),
                    "score": ep.get("score"),
                },
            )
        )
    return out
