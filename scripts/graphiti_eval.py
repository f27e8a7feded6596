"""Runs graphiti-core's own add_episode and search on make eval's conversations.

`go run ./eval -graphiti N` runs it through scripts/graphiti-venv (which installs
graphiti-core==0.31.2 first):

    graphiti_eval.py --input FILE

FILE is JSON:

    {"neo4j_uri": "bolt://127.0.0.1:PORT",
     "llm": {"base_url": ".../v1", "model": "local", "max_tokens": 1024, "schema_beside": false},
     "embedder": {"base_url": ".../v1", "model": "hashing", "dimensions": 256},
     "conversations": [{"group_id": "...", "questions": ["..."],
                        "episodes": [{"reference_time": "2024-11-12T08:15:00Z",
                                      "messages": [{"role": "user", "name": "...", "content": "..."}]}]}]}

Each conversation goes into its own group_id: its episodes through Graphiti.add_episode
one after another, as message episodes ("Name: content" lines); an episode that raises
(a small model's malformed JSON, once Graphiti's own retries are spent) is counted
failed and logged, and the next one goes on. Then each question goes through
Graphiti.search(question, group_ids=[group_id], num_results=5), Graphiti's default
search. Graphiti's index builder runs once first.

The model is reached as Graphiti reaches a local OpenAI-compatible server
(OpenAIGenericClient, json_object: the server refuses json_schema; with schema_beside,
the schema also goes in response_format, where llama-cpp-python constrains decoding to
it, as memgate's json_object mode sends it), with memgate's
eval settings: temperature 0, one call at a time, at most max_tokens an answer (Graphiti
asks edge extraction for up to 16384 tokens; here every call gets max_tokens, as in
memgate's runs). The embedder is OpenAIEmbedder against the eval's endpoint, which
serves memgate's hashing embedder.

Prints one JSON line to stdout:

    {"graphiti_core": "0.31.2", "conversations": [{"group_id", "episodes", "failed",
     "seconds", "errors": ["..."], "answers": [[{"fact", "source", "target"}]]}]}

seconds is the time add_episode took on the conversation's episodes; answers has one
list per question, the search's facts with the names of their two entities. Logs go to
stderr. Exits non-zero on any error but a failed episode.
"""

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import logging
import os
import sys
import time
from datetime import datetime

# Graphiti sends usage telemetry by default; an eval must not reach the network.
os.environ['GRAPHITI_TELEMETRY_ENABLED'] = 'false'

from graphiti_core import Graphiti  # noqa: E402
from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient  # noqa: E402
from graphiti_core.driver.neo4j_driver import Neo4jDriver  # noqa: E402
from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig  # noqa: E402
from graphiti_core.llm_client.config import LLMConfig  # noqa: E402
from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient  # noqa: E402
from graphiti_core.nodes import EntityNode, EpisodeType  # noqa: E402

log = logging.getLogger('graphiti-eval')


class CappedClient(OpenAIGenericClient):
    """OpenAIGenericClient whose every call is held to the configured max_tokens.

    Graphiti passes some prompts their own limit (16384 for edge extraction); memgate's
    runs hold every answer to llm.max_tokens, and a small model that repeats itself
    would otherwise run on for minutes."""

    schema_beside = False

    async def _generate_response(self, messages, response_model=None, max_tokens=None, *args, **kwargs):
        max_tokens = min(max_tokens or self.max_tokens, self.max_tokens)
        return await super()._generate_response(messages, response_model, max_tokens, *args, **kwargs)

    def _build_response_format(self, response_model):
        """With schema_beside, json_object carries the response model's schema where
        llama-cpp-python reads it and constrains decoding to it, as memgate's json_object
        mode does; stock Graphiti only writes the schema into the prompt."""
        fmt = super()._build_response_format(response_model)
        if self.schema_beside and response_model is not None:
            fmt = {'type': 'json_object', 'schema': response_model.model_json_schema()}
        return fmt


def episode_body(messages):
    """Graphiti's message format: one "Name: content" line a message."""
    return '\n'.join(f"{m.get('name') or m['role']}: {m['content']}" for m in messages)


async def answers(graphiti, driver, question, group_id):
    """Graphiti's search's five facts for question, with their entities' names."""
    edges = await graphiti.search(question, group_ids=[group_id], num_results=5)
    uuids = list({u for e in edges for u in (e.source_node_uuid, e.target_node_uuid)})
    names = {n.uuid: n.name for n in await EntityNode.get_by_uuids(driver, uuids)} if uuids else {}
    return [{'fact': e.fact, 'source': names.get(e.source_node_uuid, ''),
             'target': names.get(e.target_node_uuid, '')} for e in edges]


async def conversation(graphiti, driver, conv):
    """Adds one conversation's episodes and asks its questions; returns its result."""
    group_id = conv['group_id']
    result = {'group_id': group_id, 'episodes': 0, 'failed': 0, 'seconds': 0.0, 'errors': [], 'answers': []}
    start = time.monotonic()
    for i, episode in enumerate(conv['episodes'], 1):
        result['episodes'] += 1
        try:
            await graphiti.add_episode(
                name=f'{group_id} episode {i}',
                episode_body=episode_body(episode['messages']),
                source=EpisodeType.message,
                source_description='chat',
                reference_time=datetime.fromisoformat(episode['reference_time']),
                group_id=group_id,
            )
        except Exception as e:  # a failed episode, not a failed eval
            result['failed'] += 1
            result['errors'].append(f'episode {i}: {type(e).__name__}: {e}')
            log.warning('%s episode %d failed: %s: %s', group_id, i, type(e).__name__, e)
        log.info('%s episode %d done (%.0f s so far)', group_id, i, time.monotonic() - start)
    result['seconds'] = round(time.monotonic() - start, 1)
    for question in conv['questions']:
        result['answers'].append(await answers(graphiti, driver, question, group_id))
    return result


def build(spec):
    """Graphiti on the Neo4j, the model and the embedder of spec.

    Built outside the event loop: Neo4jDriver schedules its index builder itself when a
    loop runs, and run calls it once, in the open."""
    llm, emb = spec['llm'], spec['embedder']
    config = LLMConfig(api_key='local', model=llm['model'], small_model=llm['model'],
                       base_url=llm['base_url'], temperature=0, max_tokens=llm['max_tokens'])
    # memgate's local Neo4j runs without authentication and then accepts any
    # credentials, so an empty password works there.
    driver = Neo4jDriver(spec['neo4j_uri'], 'neo4j', os.environ.get('NEO4J_PASSWORD', ''))
    client = CappedClient(config, max_tokens=llm['max_tokens'], structured_output_mode='json_object')
    client.schema_beside = bool(llm.get('schema_beside'))
    graphiti = Graphiti(
        graph_driver=driver,
        llm_client=client,
        embedder=OpenAIEmbedder(OpenAIEmbedderConfig(
            api_key='local', base_url=emb['base_url'], embedding_model=emb['model'],
            embedding_dim=emb['dimensions'])),
        # The default search reranks with RRF and never calls it; were it called, it
        # would reach the same model through the same counting proxy.
        cross_encoder=OpenAIRerankerClient(config),
        max_coroutines=1,  # one model call at a time, as memgate's llm.max_concurrency 1
    )
    return graphiti, driver


async def run(graphiti, driver, conversations):
    try:
        await graphiti.build_indices_and_constraints()
        return {
            'graphiti_core': importlib.metadata.version('graphiti-core'),
            'conversations': [await conversation(graphiti, driver, c) for c in conversations],
        }
    finally:
        await graphiti.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--input', required=True, help='JSON file of the run: see above')
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format='graphiti-eval: %(levelname)s %(name)s: %(message)s')
    log.setLevel(logging.INFO)
    with open(args.input) as f:
        spec = json.load(f)
    try:
        # Whatever a library prints goes to stderr: stdout is the result line alone.
        with contextlib.redirect_stdout(sys.stderr):
            graphiti, driver = build(spec)
            result = asyncio.run(run(graphiti, driver, spec['conversations']))
    except Exception as e:
        log.exception('failed: %s', e)
        sys.exit(1)
    print(json.dumps(result), flush=True)


if __name__ == '__main__':
    main()
