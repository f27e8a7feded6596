"""Loads entities and facts from memgate's Neo4j with graphiti-core's own loaders.

Run it through scripts/graphiti-venv, which installs graphiti-core==0.31.2 first:

    scripts/graphiti-venv scripts/graphiti_load.py --uri bolt://127.0.0.1:PORT \
        --nodes UUID [UUID ...] --edges UUID [UUID ...]

EntityNode.get_by_uuids and EntityEdge.get_by_uuids are what Graphiti reads nodes and
edges with (get_entity_node_from_record, get_entity_edge_from_record): their
attributes are the node's or edge's properties less Graphiti's own. Prints one JSON
object to stdout: each node's uuid, name, group_id, labels and attributes, each
edge's uuid, name and attributes, an attribute as {"type": its Python type's name,
"value": its text}. Exits non-zero when graphiti-core fails to load one, or loads
fewer than asked for. Nothing is written; Graphiti's index builder is never run.
"""

import argparse
import asyncio
import json
import os
import sys

os.environ['GRAPHITI_TELEMETRY_ENABLED'] = 'false'

from graphiti_core.driver.neo4j_driver import Neo4jDriver  # noqa: E402
from graphiti_core.edges import EntityEdge  # noqa: E402
from graphiti_core.nodes import EntityNode  # noqa: E402


class SchemaReadOnlyNeo4jDriver(Neo4jDriver):
    """Graphiti's Neo4j driver, minus its index builder: memgate owns the schema."""

    async def build_indices_and_constraints(self, delete_existing=False):
        pass


def typed(attributes):
    return {k: {'type': type(v).__name__, 'value': str(v)} for k, v in sorted(attributes.items())}


async def run(args):
    # memgate's local Neo4j runs without authentication and accepts any credentials.
    driver = SchemaReadOnlyNeo4jDriver(args.uri, 'neo4j', os.environ.get('NEO4J_PASSWORD', ''))
    try:
        nodes = await EntityNode.get_by_uuids(driver, args.nodes) if args.nodes else []
        edges = await EntityEdge.get_by_uuids(driver, args.edges) if args.edges else []
    finally:
        await driver.close()
    if len(nodes) != len(args.nodes) or len(edges) != len(args.edges):
        raise RuntimeError(f'loaded {len(nodes)} of {len(args.nodes)} nodes, {len(edges)} of {len(args.edges)} edges')
    return {
        'nodes': [{'uuid': n.uuid, 'name': n.name, 'group_id': n.group_id, 'labels': sorted(n.labels),
                   'attributes': typed(n.attributes)} for n in nodes],
        'edges': [{'uuid': e.uuid, 'name': e.name, 'group_id': e.group_id, 'attributes': typed(e.attributes)}
                  for e in edges],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--uri', required=True, help='bolt://127.0.0.1:PORT')
    parser.add_argument('--nodes', nargs='*', default=[], help='entity uuids')
    parser.add_argument('--edges', nargs='*', default=[], help='RELATES_TO uuids')
    args = parser.parse_args()
    json.dump(asyncio.run(run(args)), sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
