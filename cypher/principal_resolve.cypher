// Everything the Authorizer needs about one requester, in one round trip. A share
// whose expires_at has passed grants nothing; it is listed apart (expired), so a use
// of it can be audited. asserted: which of the teams its host asserts ($asserted)
// exist in its organization. A delegation whose expires_at has passed grants nothing
// and is not read.
OPTIONAL MATCH (p:Principal {org: $org, id: $id})
RETURN coalesce(p.promoter, false) AS promoter,
       COLLECT { MATCH (p)-[m:MEMBER_OF]->(t:Team) RETURN [t.name, m.role] } AS teams,
       COLLECT { MATCH (a:Agent {org: $org, owner_id: $id}) RETURN a.id } AS owns,
       COLLECT { MATCH (s:Agent)-[g:SHARED_WITH]->(p) WHERE g.expires_at IS NULL OR g.expires_at > datetime()
                 RETURN s.id } AS shared,
       COLLECT { MATCH (s:Agent)-[g:SHARED_WITH]->(p) WHERE g.expires_at <= datetime() RETURN s.id } AS expired,
       COLLECT { UNWIND $asserted AS name MATCH (t:Team {org: $org, name: name}) RETURN t.name } AS asserted,
       COLLECT { MATCH (d:Agent)-[g:DELEGATED_TO]->(p) WHERE g.expires_at IS NULL OR g.expires_at > datetime()
                 RETURN d.id } AS delegated
