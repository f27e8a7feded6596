"""A small synchronous client of memgate's REST API, on the standard library's urllib."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, TypedDict, Union, cast

__all__ = [
    "Accepted",
    "ContextBlock",
    "Entity",
    "Fact",
    "MemoryRecord",
    "MemgateClient",
    "MemgateError",
    "MemoryPage",
    "Message",
    "SearchResult",
]


class _MessageRequired(TypedDict):
    role: str
    content: str


class Message(_MessageRequired, total=False):
    """One message of a conversation: role is system, developer, user, assistant, tool or function."""

    name: str
    timestamp: str


class Accepted(TypedDict, total=False):
    """The answer to a write: the memory's id, its space and status queued."""

    id: str
    group_id: str
    status: str
    confined: bool
    replayed: bool
    visibility_rule: str


class MemoryRecord(TypedDict, total=False):
    """A stored memory (an episode) as GET /v1/memories/{id} answers it."""

    id: str
    agent_id: str
    group_id: str
    space: str
    status: str  # queued, processing, done, failed
    attempts: int
    last_error: str
    source: str
    source_description: str
    content: str
    messages: List[Message]
    metadata: Dict[str, Any]
    tags: List[str]
    priority: str
    confidence: float
    reference_time: str
    created_at: str
    expires_at: str
    version: int
    updated_at: str
    score: float


class Entity(TypedDict, total=False):
    id: str
    group_id: str
    visibility: str
    name: str
    type: str
    summary: str
    created_at: str
    score: float


class Fact(TypedDict, total=False):
    id: str
    group_id: str
    visibility: str
    relation: str
    fact: str
    source: Entity
    target: Entity
    valid_at: Optional[str]
    invalid_at: Optional[str]
    created_at: str
    expired_at: Optional[str]
    episodes: List[str]
    conflicts: List[str]
    score: float


class SearchResult(TypedDict):
    """What POST /v1/memories/search answers, each list best first."""

    facts: List[Fact]
    entities: List[Entity]
    episodes: List[MemoryRecord]


class ContextBlock(TypedDict):
    """What POST /v1/agents/{id}/context answers: plain text for a system prompt
    (empty when nothing bears on the turn), its size, and the ids it drew on."""

    context: str
    tokens: int
    tokenizer: str
    facts: List[str]
    entities: List[str]
    episodes: List[str]


class MemoryPage(TypedDict):
    items: List[MemoryRecord]
    next_cursor: str
    has_more: bool


class MemgateError(Exception):
    """An error answered by memgate, in its one shape {"error": {code, message, request_id}}.

    status is the HTTP status. An answer that is not in that shape keeps its status and
    its text as the message, with code "http"; a request that got no answer at all
    (refused connection, timeout) has status 0 and code "unavailable", as memgate's own
    503 would: retry it.
    """

    def __init__(self, status: int, code: str, message: str, request_id: str = "") -> None:
        super().__init__(f"memgate: {status} {code}: {message}" + (f" (request {request_id})" if request_id else ""))
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id


def _error_of(status: int, body: bytes, request_id: str) -> MemgateError:
    try:
        decoded: Any = json.loads(body)
        err = decoded["error"]
        return MemgateError(status, str(err["code"]), str(err["message"]), str(err.get("request_id", request_id)))
    except (ValueError, KeyError, TypeError):
        return MemgateError(status, "http", body.decode("utf-8", "replace").strip()[:500], request_id)


class MemgateClient:
    """memgate's REST API as one requester.

    Every call sends ``Authorization: Bearer <api_key>`` (a host key; none in dev mode)
    and ``X-Requester-Id: <requester>``. Errors raise :class:`MemgateError`. The client
    keeps no connection open between calls; after :meth:`close` it refuses calls.

    The consistency token of its last write (``X-Consistency-Token``) goes with every
    later call, so it reads its own writes whichever memgate replica answers;
    :attr:`consistency_token` hands it to another client.
    """

    def __init__(self, base_url: str, api_key: Optional[str], requester: str, *, timeout: float = 30.0) -> None:
        if not requester:
            raise ValueError("requester is required")
        self._base = base_url.rstrip("/")
        self._api_key = api_key
        self._requester = requester
        self._timeout = timeout
        self._closed = False
        self._token = ""

    @property
    def requester(self) -> str:
        return self._requester

    @property
    def consistency_token(self) -> str:
        """The token of the last write this client made ("" before its first)."""
        return self._token

    @consistency_token.setter
    def consistency_token(self, token: str) -> None:
        self._token = token

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> MemgateClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None,
                 headers: Optional[Mapping[str, str]] = None) -> Any:
        if self._closed:
            raise RuntimeError("MemgateClient is closed")
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self._base + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        req.add_header("X-Requester-Id", self._requester)
        if self._api_key:
            req.add_header("Authorization", "Bearer " + self._api_key)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self._token:
            req.add_header("X-Consistency-Token", self._token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                raw = resp.read()
                self._token = resp.headers.get("X-Consistency-Token") or self._token
        except urllib.error.HTTPError as e:
            try:
                text = e.read()
            finally:
                e.close()
            raise _error_of(e.code, text, e.headers.get("X-Request-Id", "")) from None
        except (urllib.error.URLError, OSError) as e:
            raise MemgateError(0, "unavailable", str(getattr(e, "reason", e))) from e
        return json.loads(raw) if raw else None

    def add_memory(
        self,
        agent_id: str,
        messages: Union[str, Sequence[Message]],
        *,
        source: Optional[str] = None,
        source_description: Optional[str] = None,
        visibility: Optional[str] = None,
        team: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        tags: Optional[Sequence[str]] = None,
        reference_time: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Accepted:
        """POST /v1/memories: stores the memory (extraction follows); answers its id."""
        body: Dict[str, Any] = {"agent_id": agent_id, "messages": messages if isinstance(messages, str) else list(messages)}
        for key, value in (("source", source), ("source_description", source_description), ("visibility", visibility),
                           ("team", team), ("metadata", None if metadata is None else dict(metadata)),
                           ("tags", None if tags is None else list(tags)), ("reference_time", reference_time)):
            if value is not None:
                body[key] = value
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return cast(Accepted, self._request("POST", "/v1/memories", body, headers))

    def get_memory(self, memory_id: str) -> MemoryRecord:
        """GET /v1/memories/{id}; not_found when it does not exist or is not visible."""
        return cast(MemoryRecord, self._request("GET", "/v1/memories/" + urllib.parse.quote(memory_id, safe="")))

    def delete_memory(self, memory_id: str) -> None:
        """DELETE /v1/memories/{id}: the memory and what only it supports."""
        self._request("DELETE", "/v1/memories/" + urllib.parse.quote(memory_id, safe=""))

    def list_memories(self, agent_id: str, *, space: Optional[str] = None, cursor: Optional[str] = None,
                      limit: Optional[int] = None) -> MemoryPage:
        """GET /v1/memories: one page of the agent's memories, newest first."""
        params = {"agent_id": agent_id}
        if space:
            params["space"] = space
        if cursor:
            params["cursor"] = cursor
        if limit is not None:
            params["limit"] = str(limit)
        page = self._request("GET", "/v1/memories?" + urllib.parse.urlencode(params))
        return MemoryPage(items=list(page.get("items") or []), next_cursor=str(page.get("next_cursor") or ""),
                          has_more=bool(page.get("has_more")))

    def iter_memories(self, agent_id: str, *, space: Optional[str] = None, page_size: Optional[int] = None) -> Iterator[MemoryRecord]:
        """Every memory list_memories reaches, following next_cursor page by page."""
        cursor: Optional[str] = None
        while True:
            page = self.list_memories(agent_id, space=space, cursor=cursor, limit=page_size)
            yield from page["items"]
            if not page["has_more"] or not page["next_cursor"]:
                return
            cursor = page["next_cursor"]

    def search(
        self,
        agent_id: str,
        query: str,
        *,
        include: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        scopes: Optional[Sequence[str]] = None,
        as_of: Optional[str] = None,
    ) -> SearchResult:
        """POST /v1/memories/search: facts, entities and memories the requester sees for the agent."""
        body: Dict[str, Any] = {"agent_id": agent_id, "query": query}
        if include is not None:
            body["include"] = list(include)
        if limit is not None:
            body["limit"] = limit
        if scopes is not None:
            body["scopes"] = list(scopes)
        if as_of is not None:
            body["as_of"] = as_of
        res = self._request("POST", "/v1/memories/search", body)
        return SearchResult(facts=list(res.get("facts") or []), entities=list(res.get("entities") or []),
                            episodes=list(res.get("episodes") or []))

    def context(
        self,
        agent_id: str,
        *,
        messages: Optional[Sequence[Message]] = None,
        query: Optional[str] = None,
        max_tokens: Optional[int] = None,
        scopes: Optional[Sequence[str]] = None,
        as_of: Optional[str] = None,
    ) -> ContextBlock:
        """POST /v1/agents/{id}/context: the memory that bears on the next turn, given the
        recent conversation (oldest first) or a query, within max_tokens."""
        body: Dict[str, Any] = {}
        if messages is not None:
            body["messages"] = list(messages)
        if query is not None:
            body["query"] = query
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if scopes is not None:
            body["scopes"] = list(scopes)
        if as_of is not None:
            body["as_of"] = as_of
        res = self._request("POST", "/v1/agents/" + urllib.parse.quote(agent_id, safe="") + "/context", body)
        return ContextBlock(context=str(res.get("context") or ""), tokens=int(res.get("tokens") or 0),
                            tokenizer=str(res.get("tokenizer") or ""), facts=list(res.get("facts") or []),
                            entities=list(res.get("entities") or []), episodes=list(res.get("episodes") or []))
