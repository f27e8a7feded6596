"""memgate as AutoGen memory: MemgateMemory (an autogen_core.memory.Memory) and
MemgateClient, a small client of memgate's REST API."""

from ._client import (
    Accepted,
    ContextBlock,
    Entity,
    Fact,
    MemgateClient,
    MemgateError,
    MemoryRecord,
    MemoryPage,
    Message,
    SearchResult,
)
from ._memory import MemgateMemory, MemgateMemoryConfig, conversation_of

__all__ = [
    "Accepted",
    "ContextBlock",
    "Entity",
    "Fact",
    "MemgateClient",
    "MemgateError",
    "MemgateMemory",
    "MemgateMemoryConfig",
    "MemoryRecord",
    "MemoryPage",
    "Message",
    "SearchResult",
    "conversation_of",
]
