// What erasing requester $id of organization $org erases, or would: the one count a
// dry run answers and an erasure (after its locks, before it changes anything) does.
// $group_ids are the spaces it empties: both spaces of each of its agents, and its
// shared space $shared.
CALL () {
  MATCH (a:Agent {org: $org, owner_id: $id})
  RETURN count(a) AS agents
}
CALL () {
  MATCH (e:Episodic) WHERE e.group_id IN $group_ids
  RETURN count(e) AS memories, sum(COUNT { (e)-[:HAS_VERSION]->(:MemoryVersion) }) AS versions
}
CALL () {
  MATCH (n:Entity) WHERE n.group_id IN $group_ids
  RETURN count(n) AS entities, sum(COUNT { (n)-[:RELATES_TO]->(:Entity) }) AS facts
}
CALL () {
  MATCH (c:Conflict) WHERE c.group_id IN $group_ids
  RETURN count(c) AS conflicts
}
CALL () {
  CALL () {
    MATCH (:Agent {org: $org, owner_id: $id})-[s:SHARED_WITH]->(:Principal)
    RETURN s
    UNION
    MATCH (:Agent)-[s:SHARED_WITH]->(:Principal {org: $org, id: $id})
    RETURN s
  }
  RETURN count(s) AS shares
}
CALL () {
  CALL () {
    MATCH (:Agent {org: $org, owner_id: $id})-[d:DELEGATED_TO]->(:Principal)
    RETURN d
    UNION
    MATCH (:Agent)-[d:DELEGATED_TO]->(:Principal {org: $org, id: $id})
    RETURN d
  }
  RETURN count(d) AS delegations
}
CALL () {
  OPTIONAL MATCH (p:Principal {org: $org, id: $id})
  RETURN p IS NOT NULL AS principal, coalesce(p.promoter, false) AS promoter,
         COUNT { MATCH (:Principal {org: $org, id: $id})-[:MEMBER_OF]->(:Team) } AS memberships
}
CALL () {
  MATCH (t:Team {org: $org, owner_id: $id})
  RETURN count(t) AS teams
}
CALL () {
{{requester_records}}
  RETURN count(n) AS pseudonymized
}
RETURN agents, memories, versions, entities, facts, conflicts, shares, memberships, promoter, teams, pseudonymized, principal,
       delegations
