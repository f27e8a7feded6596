# Sourced by scripts/test, scripts/reliability and scripts/bench: a Neo4j for the run.
# Uses MG_TEST_NEO4J_URI when set; otherwise the local launcher with data under
# .data/neo4j-test: one already running there is used as it is (the scripts empty it),
# else one is started on a fresh folder, on a port it picks itself (or
# MG_TEST_NEO4J_PORT), and stopped on exit.
if [ -z "${MG_TEST_NEO4J_URI:-}" ]; then
  export NEO4J_LOCAL_BOLT_PORT=${MG_TEST_NEO4J_PORT:-0}
  export NEO4J_LOCAL_HTTP_PORT=0
  export NEO4J_LOCAL_DATA=.data/neo4j-test
  if ! scripts/neo4j-local status >/dev/null; then
    rm -rf .data/neo4j-test
    trap 'scripts/neo4j-local stop' EXIT
  fi
  MG_TEST_NEO4J_URI=$(scripts/neo4j-local start)
  export MG_TEST_NEO4J_URI
fi
echo "test Neo4j: $MG_TEST_NEO4J_URI" >&2
