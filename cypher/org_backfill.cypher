// Agents, teams and requesters stored before organizations existed are the implicit
// organization's (org ''). Only unset ones are touched, so Migrate runs it at every
// start, after the schema.
CALL () { MATCH (n:Agent) WHERE n.org IS NULL SET n.org = '' }
CALL () { MATCH (n:Team) WHERE n.org IS NULL SET n.org = '' }
CALL () { MATCH (n:Principal) WHERE n.org IS NULL SET n.org = '' }
RETURN true AS done
