// Organizations: an agent id, a team name and a requester id are unique within one
// organization (org; '' is the implicit one of a deployment that configures none), so
// two organizations may both have agent "assistant". What was written before
// organizations existed is the implicit one's (org_backfill, which Migrate runs after
// the schema); the constraints on the id alone that earlier schemas created are
// dropped.
DROP CONSTRAINT agent_id IF EXISTS;
DROP CONSTRAINT team_name IF EXISTS;
DROP CONSTRAINT principal_id IF EXISTS;
CREATE CONSTRAINT agent_org_id IF NOT EXISTS FOR (n:Agent) REQUIRE (n.org, n.id) IS UNIQUE;
CREATE CONSTRAINT team_org_name IF NOT EXISTS FOR (n:Team) REQUIRE (n.org, n.name) IS UNIQUE;
CREATE CONSTRAINT principal_org_id IF NOT EXISTS FOR (n:Principal) REQUIRE (n.org, n.id) IS UNIQUE;
