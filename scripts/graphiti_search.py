"""Times Graphiti's own search (graphiti-core, Graphiti.search) against memgate's Neo4j.

Run it through scripts/graphiti-search, which installs graphiti-core==0.31.2 first:

    graphiti_search.py --uri bolt://127.0.0.1:PORT --queries FILE --iterations N \
        [--warmup-seconds S] [--max-seconds T]

FILE is JSON: {"group_ids": [...], "queries": [{"text": ..., "embedding": [...]}],
"limit": 10}. Each call is Graphiti.search(text, group_ids=..., num_results=limit),
Graphiti's default search, one call at a time, rotating through the queries. The
query's embedding is the one in FILE: nothing is computed, no LLM or reranker is
called (the stand-ins below raise if Graphiti ever calls one). Graphiti's index
builder is never run; memgate's schema must already hold what the search queries.

Prints one JSON line to stdout; logs go to stderr. Exits non-zero on any error, and
when a returned fact belongs to a space not in group_ids (a leak).
"""

import argparse
import asyncio
import importlib.metadata
import json
import logging
import os
import sys
import time

# Graphiti sends usage telemetry by default; a benchmark must not reach the network.
os.environ['GRAPHITI_TELEMETRY_ENABLED'] = 'false'

import graphiti_core.graphiti as graphiti_module  # noqa: E402
from graphiti_core import Graphiti  # noqa: E402
from graphiti_core.cross_encoder.client import CrossEncoderClient  # noqa: E402
from graphiti_core.driver.neo4j_driver import Neo4jDriver  # noqa: E402
from graphiti_core.embedder.client import EmbedderClient  # noqa: E402
from graphiti_core.llm_client.client import LLMClient  # noqa: E402
from graphiti_core.llm_client.config import LLMConfig  # noqa: E402
from graphiti_core.search import search_config_recipes  # noqa: E402

log = logging.getLogger('graphiti-search')

# The fulltext index Graphiti's edge search calls by name. Its cosine search names
# no index: it computes vector.similarity.cosine over every edge of the spaces, which
# Neo4j finds through the relation_group_id range index (memgate has it too).
REQUIRED_INDEXES = ['edge_name_and_fact']


class FileEmbedder(EmbedderClient):
    """Returns the embedding FILE gives for a query text; unknown text is an error."""

    def __init__(self, queries):
        # Graphiti replaces newlines with spaces before embedding a query.
        self.vectors = {q['text'].replace('\n', ' '): q['embedding'] for q in queries}

    async def create(self, input_data):
        text = input_data[0] if isinstance(input_data, list) else input_data
        if text not in self.vectors:
            raise RuntimeError(f'no embedding in the queries file for {text!r}')
        return self.vectors[text]

    async def create_batch(self, input_data_list):
        return [await self.create(text) for text in input_data_list]


class NoLLM(LLMClient):
    """Graphiti's constructor wants an LLM client; search must never use it."""

    def __init__(self):
        super().__init__(LLMConfig(api_key='unused'))

    async def generate_response(self, *args, **kwargs):
        raise RuntimeError('Graphiti called the LLM during search')

    async def _generate_response(self, *args, **kwargs):
        raise RuntimeError('Graphiti called the LLM during search')


class NoCrossEncoder(CrossEncoderClient):
    """The default search reranks with RRF; a cross-encoder call would be an error."""

    async def rank(self, query, passages):
        raise RuntimeError('Graphiti called the cross encoder during search')


class SchemaReadOnlyNeo4jDriver(Neo4jDriver):
    """Graphiti's Neo4j driver, minus its index builder.

    Neo4jDriver's constructor schedules build_indices_and_constraints when an event
    loop is running. memgate owns the schema, so that becomes a no-op here.
    """

    async def build_indices_and_constraints(self, delete_existing=False):
        log.info('skipped Graphiti build_indices_and_constraints (memgate owns the schema)')


def config_name(config):
    """The name of Graphiti's recipe that is this very SearchConfig object."""
    for name in dir(search_config_recipes):
        if getattr(search_config_recipes, name) is config:
            return name
    return 'custom'


async def default_config(graphiti, query, group_ids, limit):
    """Runs one search with Graphiti's inner search() wrapped, to see the config it gets.

    Returns that SearchConfig and the facts the search returned."""
    seen = []
    inner = graphiti_module.search

    async def spy(clients, query, group_ids, config, *args, **kwargs):
        seen.append(config)
        return await inner(clients, query, group_ids, config, *args, **kwargs)

    graphiti_module.search = spy
    try:
        facts = await graphiti.search(query, group_ids=group_ids, num_results=limit)
    finally:
        graphiti_module.search = inner
    if len(seen) != 1:
        raise RuntimeError(f'Graphiti.search ran its inner search {len(seen)} times, not once')
    return seen[0], facts


def check_spaces(text, facts, allowed):
    """Fails when a returned fact belongs to a space the caller did not ask for."""
    leaks = [(f.uuid, f.group_id) for f in facts if f.group_id not in allowed]
    if leaks:
        raise RuntimeError(f'LEAK: {text!r} returned facts of other spaces: {leaks}')


async def check_indexes(driver):
    """Fails when memgate's schema lacks an index Graphiti's search queries by name."""
    records, _, _ = await driver.execute_query(
        'SHOW INDEXES YIELD name, state WHERE name IN $names RETURN name, state',
        names=REQUIRED_INDEXES,
    )
    online = {r['name'] for r in records if r['state'] == 'ONLINE'}
    missing = [n for n in REQUIRED_INDEXES if n not in online]
    if missing:
        raise RuntimeError(f'memgate schema lacks (or has not populated) index(es) {missing}')


class Once(logging.Filter):
    """Lets a logger's first record through and drops the rest: the Neo4j driver logs
    a server notification on every call, which would flood stderr during timing."""

    def __init__(self):
        super().__init__()
        self.seen = False

    def filter(self, record):
        first, self.seen = not self.seen, True
        return first


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, -(-len(sorted_values) * p // 100))  # ceil(n * p / 100)
    return sorted_values[int(rank) - 1]


async def run(args):
    with open(args.queries) as f:
        spec = json.load(f)
    group_ids, queries, limit = spec['group_ids'], spec['queries'], int(spec.get('limit', 10))
    if not group_ids or not queries or args.iterations < 1:
        raise ValueError('need group_ids, queries and --iterations >= 1')
    allowed = set(group_ids)

    # memgate's local Neo4j runs without authentication and then accepts any
    # credentials, so an empty password works there.
    driver = SchemaReadOnlyNeo4jDriver(args.uri, 'neo4j', os.environ.get('NEO4J_PASSWORD', ''))
    graphiti = Graphiti(
        graph_driver=driver,
        llm_client=NoLLM(),
        embedder=FileEmbedder(queries),
        cross_encoder=NoCrossEncoder(),
    )
    try:
        await check_indexes(driver)
        config, facts = await default_config(graphiti, queries[0]['text'], group_ids, limit)
        check_spaces(queries[0]['text'], facts, allowed)
        edge = config.edge_config
        if config.node_config or config.episode_config or config.community_config:
            log.warning('the default search also searches nodes, episodes or communities')

        async def call(i):
            """One timed search; returns (microseconds, facts)."""
            text = queries[i % len(queries)]['text']
            start = time.perf_counter_ns()
            facts = await graphiti.search(text, group_ids=group_ids, num_results=limit)
            elapsed = (time.perf_counter_ns() - start) / 1000
            check_spaces(text, facts, allowed)
            return elapsed, facts

        # Warm up (untimed) for the given seconds, rotating through the queries.
        deadline, i = time.monotonic() + args.warmup_seconds, 0
        while time.monotonic() < deadline:
            await call(i)
            i += 1
        log.info('warm-up: %d calls in %.0f s', i, args.warmup_seconds)

        # Timed calls, starting again from the first query: N of them, or as many as
        # --max-seconds allow when Graphiti is slow (at least 10).
        times, hits, min_hits = [], [], None
        deadline = time.monotonic() + args.max_seconds
        for i in range(args.iterations):
            if i >= 10 and time.monotonic() > deadline:
                break
            elapsed, facts = await call(i)
            times.append(elapsed)
            if i < len(queries):
                hits.append([f.uuid for f in facts])
            min_hits = len(facts) if min_hits is None else min(min_hits, len(facts))
    finally:
        await graphiti.close()

    times.sort()
    return {
        'graphiti_core': importlib.metadata.version('graphiti-core'),
        'config': config_name(config),
        'methods': [m.value for m in edge.search_methods],
        'reranker': edge.reranker.value,
        'sim_min_score': edge.sim_min_score,
        'calls': len(times),
        'p50_us': round(percentile(times, 50), 1),
        'p99_us': round(percentile(times, 99), 1),
        'mean_us': round(sum(times) / len(times), 1),
        'hits': hits,
        'min_hits': min_hits,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--uri', required=True, help='bolt://127.0.0.1:PORT')
    parser.add_argument('--queries', required=True, help='JSON file of group_ids, queries, limit')
    parser.add_argument('--iterations', type=int, required=True, help='timed calls')
    parser.add_argument('--warmup-seconds', type=float, default=10, help='untimed calls first')
    parser.add_argument('--max-seconds', type=float, default=float('inf'),
                        help='stop the timed calls after this long (at least 10 calls)')
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format='graphiti-search: %(levelname)s %(name)s: %(message)s')
    logging.getLogger('neo4j').setLevel(logging.WARNING)
    logging.getLogger('neo4j.notifications').addFilter(Once())
    logging.getLogger('httpx').setLevel(logging.WARNING)
    try:
        result = asyncio.run(run(args))
    except Exception as e:
        log.exception('failed: %s', e)
        sys.exit(1)
    print(json.dumps(result), flush=True)


if __name__ == '__main__':
    main()
