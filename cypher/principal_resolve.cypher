// Everything the Authorizer needs about one requester, in one round trip. grants: the
// shares and delegations made to it, one expansion for both, each as [kind, agent,
// in force]. A share whose expires_at has passed grants nothing; it is read apart
// (lapsed), so a use of it can be audited; a lapsed delegation grants nothing and is
// dropped. asserted: which of the teams its host asserts ($asserted) exist in its
// organization.
OPTIONAL MATCH (p:Principal {org: $org, id: $id})
RETURN coalesce(p.promoter, false) AS promoter,
       COLLECT { MATCH (p)-[m:MEMBER_OF]->(t:Team) RETURN [t.name, m.role] } AS teams,
       COLLECT { MATCH (a:Agent {org: $org, owner_id: $id}) RETURN a.id } AS owns,
       COLLECT { MATCH (s:Agent)-[g:SHARED_WITH|DELEGATED_TO]->(p)
                 RETURN [type(g), s.id, g.expires_at IS NULL OR g.expires_at > datetime()] } AS grants,
       COLLECT { UNWIND $asserted AS name MATCH (t:Team {org: $org, name: name}) RETURN t.name } AS asserted
