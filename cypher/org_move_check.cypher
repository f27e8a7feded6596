// Before the implicit organization moves into $org (memgate migrate --into-org): how
// many of its agents, teams and requesters have an id $org already uses (the move
// refuses to merge two under one id), and how many of each it has to move. A move cut
// short has moved some already: they are $org's and no longer collide.
RETURN COUNT { MATCH (n:Agent {org: ''}) WHERE EXISTS { MATCH (:Agent {org: $org, id: n.id}) } }
         + COUNT { MATCH (n:Team {org: ''}) WHERE EXISTS { MATCH (:Team {org: $org, name: n.name}) } }
         + COUNT { MATCH (n:Principal {org: ''}) WHERE EXISTS { MATCH (:Principal {org: $org, id: n.id}) } } AS taken,
       COUNT { MATCH (n:Agent {org: ''}) } AS agents,
       COUNT { MATCH (n:Team {org: ''}) } AS teams,
       COUNT { MATCH (n:Principal {org: ''}) } AS principals
