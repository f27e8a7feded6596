// Everything the Authorizer needs about each requester asked, in one round trip:
// $requests is a list of {i, org, id, asserted}, one request's or the several a group
// of requests arriving together gathers (graph/neo4jstore/directory.go), and each
// gets its own row, i naming it. grants: the shares and delegations made to it, one
// expansion for both, each as [kind, agent, in force]. A share whose expires_at has
// passed grants nothing; it is read apart (lapsed), so a use of it can be audited; a
// lapsed delegation grants nothing and is dropped. asserted: which of the teams its
// host asserts (asserted) exist in its organization.
// CYPHER replan=skip: the plan Neo4j made first is kept when the statistics change;
// planning this query costs about 0.17 s of Neo4j's CPU, and it starts from unique
// constraints or group_id indexes whatever the statistics (docs/architecture.md,
// "Plans kept").
CYPHER replan=skip
UNWIND $requests AS r
CALL (r) {
  OPTIONAL MATCH (p:Principal {org: r.org, id: r.id})
  RETURN coalesce(p.promoter, false) AS promoter,
         COLLECT { MATCH (p)-[m:MEMBER_OF]->(t:Team) RETURN [t.name, m.role] } AS teams,
         COLLECT { MATCH (a:Agent {org: r.org, owner_id: r.id}) RETURN a.id } AS owns,
         COLLECT { MATCH (s:Agent)-[g:SHARED_WITH|DELEGATED_TO]->(p)
                   RETURN [type(g), s.id, g.expires_at IS NULL OR g.expires_at > datetime()] } AS grants,
         COLLECT { UNWIND r.asserted AS name MATCH (t:Team {org: r.org, name: name}) RETURN t.name } AS asserted
}
RETURN r.i AS i, promoter, teams, owns, grants, asserted
