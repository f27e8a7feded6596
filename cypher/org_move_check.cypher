// Before the implicit organization moves into $org (memgate migrate --into-org): how
// many agents, teams and requesters $org already has (the move refuses to merge into
// them), and how many of each the implicit organization has to move.
RETURN COUNT { MATCH (n:Agent {org: $org}) } + COUNT { MATCH (n:Team {org: $org}) }
         + COUNT { MATCH (n:Principal {org: $org}) } AS taken,
       COUNT { MATCH (n:Agent {org: ''}) } AS agents,
       COUNT { MATCH (n:Team {org: ''}) } AS teams,
       COUNT { MATCH (n:Principal {org: ''}) } AS principals
