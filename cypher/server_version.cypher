// The version of the Neo4j server, e.g. 5.26.30 or 2026.01.4: which vector plans and
// schema steps it supports (vplan.go, cypher.Migration).
CALL dbms.components() YIELD name, versions
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version
