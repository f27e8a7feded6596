package access_test

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/accesstest"
	"github.com/memgate/memgate/graph"
)

// worldFacts derives a requester's facts from the matrix world, as the store would.
func worldFacts(w accesstest.World, requester string) graph.PrincipalFacts {
	f := graph.PrincipalFacts{Teams: map[string]graph.Role{}}
	for agent, owner := range w.Agents {
		if owner == requester {
			f.Owns = append(f.Owns, agent)
		}
	}
	for agent, grantees := range w.Shares {
		for _, g := range grantees {
			if g == requester {
				f.SharedWith = append(f.SharedWith, agent)
			}
		}
	}
	for agent, grantees := range w.LapsedShares {
		if slices.Contains(grantees, requester) {
			f.ExpiredShares = append(f.ExpiredShares, agent)
		}
	}
	for agent, delegates := range w.Delegations { // those that lapsed give nothing: not read
		if slices.Contains(delegates, requester) {
			f.Delegated = append(f.Delegated, agent)
		}
	}
	for team, members := range w.Teams {
		if role, ok := members[requester]; ok {
			f.Teams[team] = graph.Role(role)
		}
	}
	for _, p := range w.Promoters {
		f.Promoter = f.Promoter || p == requester
	}
	return f
}

// hostOf is the host of a principal of the matrix: trusted, admin or confined, of the
// world's organization (the implicit one), or of another (globex_...), where the world
// holds nothing.
func hostOf(kind string) access.Host {
	org, kind, other := strings.Cut(kind, "_")
	if !other {
		org, kind = "", org
	}
	switch kind {
	case "admin":
		return access.Host{Org: graph.Org(org), Name: org + "ops", Trusted: true, Admin: true}
	case "confined":
		return access.Host{Org: graph.Org(org), Name: org + "plugin"}
	case "asserting":
		return access.Host{Org: graph.Org(org), Name: org + "team-host", Trusted: true, AssertTeams: true}
	}
	return access.Host{Org: graph.Org(org), Name: org + "agent-host", Trusted: true}
}

// matrixSpace maps a column of the matrix's spaces to a space.
func matrixSpace(w accesstest.World, column string) graph.Space {
	kind, name := accesstest.SpaceColumn(column)
	switch kind {
	case "private":
		return graph.DefaultOrg.Private(name)
	case "public":
		return graph.DefaultOrg.Public(name)
	case "shared":
		return graph.DefaultOrg.Shared(w.Agents[name])
	case "team":
		return graph.DefaultOrg.Team(name)
	case "global":
		return graph.DefaultOrg.Global()
	}
	return graph.Space{Kind: graph.SpaceSystem}
}

// TestPolicy_Matrix checks the pure default policy against access/testdata/matrix.json:
// each cell against the one decision of the Authorizer that the cell's outcome states.
// Reads by id and list: 404 exactly when the space is outside Visible. Search: found
// exactly when the space is in VisibleForAgent. Create: the effect of Write. Delete and
// retry of a visible memory: 403 exactly when Modify denies; promotions of a visible
// memory: 403 exactly when Promote denies. Agent operations: 403 exactly when Share,
// Delegate, Distil (compact, reflect) or ManageAgent deny; usage: 404 exactly when
// Usage denies. Team operations: 404 for who does not see the team, else 403
// exactly when DissolveTeam denies; a move into a dissolved team: 403 exactly when
// Write denies. Copies: 404 outside the visible set, else 403 exactly when Modify
// (or, for a move, Write) denies. Outcomes the Authorizer does not decide are
// undecided here: 400 (the request is invalid, or a promotion to the space it is in),
// the agent or team that does not exist, a promoted copy that never moves, and which
// versions a visibility rule leaves readable (matched). A principal whose host asserts
// teams is judged with them (Principal.Assert, on the world's teams), or is 403 in
// every cell when the assertion is refused. service/matrix_test.go runs every cell
// through the service and the real store.
func TestPolicy_Matrix(t *testing.T) {
	m, err := accesstest.Load()
	if err != nil {
		t.Fatal(err)
	}
	accesstest.Run(t, m, policyTier{pol: access.Policy{AllowPrivate: true}, m: m})
}

// policyTier answers each cell with the policy's one decision for it, in the matrix's
// words, made for the cell's principal on the facts the store would derive from the
// world; Undecided when the cell's outcome is not the Authorizer's to decide.
type policyTier struct {
	pol access.Policy
	m   *accesstest.Matrix
}

func (pt policyTier) Perform(c accesstest.Cell) string {
	pol, m, w := pt.pol, pt.m, pt.m.World
	pr := m.Principals[c.Principal]
	host := hostOf(pr.Host)
	facts := graph.PrincipalFacts{}
	if host.Org == graph.DefaultOrg {
		facts = worldFacts(w, pr.Requester)
	}
	p, own := access.NewPrincipal(pr.Requester, host, facts), pr.Agent
	if pr.Asserts != "" { // the teams its host asserts, of those the world has
		asserted, err := access.ParseAssertedTeams(pr.Asserts)
		if err != nil {
			return "matrix: " + err.Error()
		}
		var teams []string // the world's, in its organization only
		if host.Org == graph.DefaultOrg {
			teams = slices.Collect(maps.Keys(w.Teams))
		}
		if p, err = p.Assert(asserted, teams); err != nil {
			return "403" // refused before anything
		}
	}
	if c.Want == "400" {
		return accesstest.Undecided
	}
	switch c.Operation {
	case "compact_words", "reflect_words", "move_distilled":
		return pt.distilled(c, p, own)
	}
	if c.Operation == "subscribe" || c.Operation == "webhook_event" {
		// The delivery is judged on the stored facts alone: what a host asserted held
		// for the request that registered the webhook.
		return pt.webhook(c, p, access.NewPrincipal(pr.Requester, host, facts))
	}
	if p.Org != graph.DefaultOrg {
		// A principal of another organization: the world's agents and teams do not
		// exist for it (the store's 404, and what a list or search of them answers is
		// the store's), and the visible set holds none of the world's spaces, so each
		// operation on a memory by id is 404.
		switch c.Operation {
		case "get", "delete", "retry", "promote", "promote_team", "update", "move", "resolve_conflict", "versions_rule",
			"copy_update", "copy_delete", "copy_move":
			if pol.Visible(p).Contains(matrixSpace(w, c.Column).GroupID()) {
				return "visible across organizations"
			}
			return "404"
		case "list_agents_all", "list_teams_all":
			if pol.Admin(p).Effect != access.Allow {
				return "403"
			}
		}
		return accesstest.Undecided
	}
	switch c.Operation {
	case "list_agents_all", "list_teams_all": // every agent or team: admin hosts only
		if pol.Admin(p).Effect != access.Allow {
			return "403"
		}
		return accesstest.Undecided // what is listed is the store's
	case "list_agents", "list_teams":
		return accesstest.Undecided // the requester's own: the store's query
	case "list_entities":
		return accesstest.Undecided // which entities exist is the pipeline's
	}
	if slices.Contains(accesstest.AgentOperations, c.Operation) {
		owner, ok := w.Agents[c.Column]
		if !ok {
			return accesstest.Undecided // an agent that does not exist: the store's 404
		}
		a := &graph.Agent{ID: c.Column, OwnerID: owner}
		d := pol.ManageAgent(p, a) // transfer, erase, set_types
		switch c.Operation {
		case "share", "unshare":
			d = pol.Share(p, a)
		case "delegate", "undelegate":
			d = pol.Delegate(p, a)
		case "compact", "reflect": // what they write goes to the agent's private space
			d = pol.Distil(p, a.ID)
		case "usage": // denied, the agent is not found
			if pol.Usage(p, a).Effect != access.Allow {
				return "404"
			}
			return "allow"
		}
		return effect(d)
	}
	switch c.Operation {
	case "move_into_dissolved":
		// A private memory of the principal's agent, moved into the team by a request
		// resolved before the team was dissolved: the policy judges it on the world's
		// facts.
		private := graph.DefaultOrg.Private(own)
		if !pol.Visible(p).Contains(private.GroupID()) {
			return "404"
		}
		if d := pol.Modify(p, private); d.Effect != access.Allow {
			return effect(d)
		}
		if pol.Write(p, own, graph.DefaultOrg.Team(c.Column)).Effect != access.Allow {
			return "403" // confined: a move is never redirected
		}
		return accesstest.Undecided // allowed, into a team that is gone: the store's 404
	case "copy_update", "copy_delete", "copy_move":
		s := matrixSpace(w, c.Column)
		if !pol.Visible(p).Contains(s.GroupID()) {
			return "404"
		}
		d := pol.Modify(p, s)
		if c.Operation != "copy_move" || d.Effect != access.Allow {
			return effect(d)
		}
		agent := m.SeedAgent(m.CopySource) // the copy keeps its original's agent
		if pol.Write(p, agent, graph.DefaultOrg.Private(agent)).Effect != access.Allow {
			return "403"
		}
		return accesstest.Undecided // a promoted copy never moves: the service's rule
	}
	if c.Operation == "dissolve" || c.Operation == "copy_dissolve" || c.Operation == "set_team_types" {
		if _, ok := w.Teams[c.Column]; !ok {
			return accesstest.Undecided // a team that does not exist: the store's 404
		}
		t := &graph.Team{Name: c.Column, OwnerID: w.TeamOwner(c.Column)}
		if p.Teams[t.Name] == "" && t.OwnerID != p.ID && pol.Admin(p).Effect != access.Allow {
			return "404" // GetTeam's rule: members, its owner and admin hosts see it
		}
		if c.Operation == "set_team_types" { // the team's space's types: its writers'
			return effect(pol.Modify(p, p.Org.Team(t.Name)))
		}
		return effect(pol.DissolveTeam(p, t))
	}
	s := matrixSpace(w, c.Column)
	agent := s.Agent
	if agent == "" {
		agent = own
	}
	if s.Kind == graph.SpaceShared {
		agent = m.SeedAgent(c.Column)
	}
	visible := pol.Visible(p).Contains(s.GroupID())
	switch c.Operation {
	case "create", "create_over_quota", "create_fact": // a direct fact is a memory that records it
		d := pol.Write(p, agent, s)
		if d.Effect == access.Confine && d.Space != graph.DefaultOrg.Private(agent) {
			return "confined to " + d.Space.GroupID()
		}
		if d.Effect == access.Allow && d.Space != s {
			return "allowed into " + d.Space.GroupID()
		}
		if c.Operation == "create_over_quota" && d.Effect == access.Allow && s.Kind == graph.SpacePublic {
			return "429" // allowed, and over the agent's public-write quota
		}
		return effect(d)
	case "get", "list":
		switch {
		case visible:
			return "allow"
		case c.Operation == "list" && s.Kind == graph.SpaceShared:
			return "absent" // "shared" names the requester's own shared space
		}
		return "404"
	case "search", "context": // a context is drawn by search
		if s.Kind == graph.SpaceTeam && !pol.Visible(p).Contains(s.GroupID()) {
			return "404" // a scope the requester cannot read, as a list
		}
		if pol.VisibleForAgent(p, agent, []graph.Space{s}).Contains(s.GroupID()) {
			return "found"
		}
		return "absent"
	}
	// The others act on a memory by id: 404 outside the visible set, else the decision
	// on the change.
	if !visible {
		return "404"
	}
	switch c.Operation {
	case "delete", "retry", "update", "resolve_conflict":
		return effect(pol.Modify(p, s))
	case "move":
		if d := pol.Modify(p, s); d.Effect != access.Allow {
			return effect(d)
		}
		if s.Kind == graph.SpaceGlobal {
			return accesstest.Undecided // its memory is a promoted copy, which the service never moves
		}
		seed := m.SeedAgent(c.Column)
		to := graph.DefaultOrg.Private(seed)
		if s == to {
			to = graph.DefaultOrg.Public(seed)
		}
		if d := pol.Write(p, seed, to); d.Effect != access.Allow || !p.Owns[seed] {
			// Only the creator (the agent's owner) moves a memory, and only where it may
			// write: a delegate writes there too, but what it changes is no longer the
			// agent's own words, and such a memory never moves.
			return "403"
		}
		return "allow"
	case "get_expired":
		return accesstest.Undecided // hidden by the store, whoever asks
	case "versions_rule":
		if c.Want == "matched" {
			return accesstest.Undecided // which versions the visibility rule erased is the service's
		}
		return "allow"
	case "promote":
		return effect(pol.Promote(p, s, graph.DefaultOrg.Global()))
	case "promote_team":
		return effect(pol.Promote(p, s, graph.DefaultOrg.Team(m.PromoteToTeam)))
	}
	return "unknown operation " + c.Operation
}

// webhook decides a webhook cell: subscribe is the registration of a webhook that
// follows the column's space (Follow; a team p cannot see is the service's 404),
// webhook_event whether an event about that space is sent to it (stored sees the
// space; an audit webhook is sent its own organization's events only).
func (pt policyTier) webhook(c accesstest.Cell, p, stored access.Principal) string {
	pol, w := pt.pol, pt.m.World
	s := matrixSpace(w, c.Column)
	world := s
	if p.Org != graph.DefaultOrg {
		if s.Kind != graph.SpaceSystem {
			return accesstest.Undecided // the world's agents and teams: the store's 404
		}
		s = p.Org.System() // an admin registers its own organization's audit webhook
	}
	if s.Kind == graph.SpaceTeam {
		if _, ok := w.Teams[s.Team]; !ok {
			return accesstest.Undecided // a team that does not exist: the store's 404
		}
		if p.Teams[s.Team] == "" && w.TeamOwner(s.Team) != p.ID && pol.Admin(p).Effect != access.Allow {
			return "404" // GetTeam's rule: members, its owner and admin hosts see it
		}
	}
	if got := effect(pol.Follow(p, s)); got != "allow" || c.Operation == "subscribe" {
		return got
	}
	switch {
	case world.GroupID() != s.GroupID():
		return "dropped" // another organization's audit webhook
	case s.Kind == graph.SpaceSystem && pol.Follow(stored, s).Effect == access.Allow:
		return "received"
	case s.Kind != graph.SpaceSystem && pol.Visible(stored).Contains(s.GroupID()):
		return "received"
	}
	return "dropped"
}

func effect(d access.Decision) string {
	switch d.Effect {
	case access.Allow:
		return "allow"
	case access.Confine:
		return "confine"
	}
	if d.Reason == "" {
		return "403 without a reason"
	}
	return "403"
}

func TestPolicy_EmptyVisibleSetSeesNothing(t *testing.T) {
	var v graph.Visible
	for _, g := range []string{"agent-a-public", "agent-a-private", "team-x", "global", "system", ""} {
		if v.Contains(g) {
			t.Errorf("the empty visible set contains %q", g)
		}
	}
}

func TestPolicy_NeverSystem(t *testing.T) {
	pol := access.Policy{AllowPrivate: true}
	everything := access.NewPrincipal("root", access.Host{Name: "ops", Trusted: true, Admin: true}, graph.PrincipalFacts{
		Teams: map[string]graph.Role{"system": graph.RoleWriter}, Promoter: true, Owns: []string{"system"},
	})
	if pol.Visible(everything).Contains("system") {
		t.Error("system is visible")
	}
	sys := graph.Space{Kind: graph.SpaceSystem}
	for name, d := range map[string]access.Decision{
		"write":               pol.Write(everything, "system", sys),
		"delete":              pol.Modify(everything, sys),
		"promote":             pol.Promote(everything, graph.DefaultOrg.Global(), sys),
		"promote from system": pol.Promote(everything, sys, graph.DefaultOrg.Global()),
	} {
		if d.Effect != access.Deny || d.Reason == "" {
			t.Errorf("%s to system = %+v, want a denial with a reason", name, d)
		}
	}
}

func TestPolicy_AllPublicModel(t *testing.T) {
	pol := access.Policy{AllowPrivate: false}
	owner := access.NewPrincipal("alice", hostOf("trusted"), graph.PrincipalFacts{Owns: []string{"a"}})
	if d := pol.Write(owner, "a", graph.DefaultOrg.Private("a")); d.Effect != access.Deny {
		t.Errorf("private write with allow_private=false = %+v, want deny", d)
	}
	if d := pol.Write(owner, "a", graph.DefaultOrg.Public("a")); d.Effect != access.Allow {
		t.Errorf("public write = %+v, want allow", d)
	}
	confined := access.NewPrincipal("alice", hostOf("confined"), graph.PrincipalFacts{Owns: []string{"a"}})
	if d := pol.Write(confined, "a", graph.DefaultOrg.Team("x")); d.Effect != access.Deny {
		t.Errorf("confined team write with allow_private=false = %+v, want deny (nowhere private to land)", d)
	}
}

func TestPolicy_CraftedTargets(t *testing.T) {
	pol := access.Policy{AllowPrivate: true}
	p := access.NewPrincipal("alice", hostOf("trusted"), graph.PrincipalFacts{
		Owns: []string{"a"}, SharedWith: []string{"s"}, Teams: map[string]graph.Role{"x": graph.RoleReader},
	})
	got := pol.CraftedTargets(p, "what does agent:b know, and team:y, agent:a, agent:s, team:x, agent:b again; AGENT:c agent:")
	sort.Strings(got)
	want := []string{"agent-b-private", "team-y"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("CraftedTargets = %v, want %v", got, want)
	}
}

// TestPolicy_Delegation: what the matrix's delegate_a does not show. A delegate that
// also holds a share reads the private space but still never republishes it; a
// confined host is refused a team write for the agent, not redirected; without
// private memories it writes only the public space; it distils nothing, and neither
// does an admin host delegate.
func TestPolicy_Delegation(t *testing.T) {
	pol := access.Policy{AllowPrivate: true}
	both := access.NewPrincipal("dan", hostOf("trusted"), graph.PrincipalFacts{Delegated: []string{"a"}, SharedWith: []string{"a"},
		Teams: map[string]graph.Role{"x": graph.RoleWriter}, Promoter: true})
	confined := access.NewPrincipal("dan", hostOf("confined"), graph.PrincipalFacts{Delegated: []string{"a"}})
	admin := access.NewPrincipal("root", hostOf("admin"), graph.PrincipalFacts{})
	agent := &graph.Agent{ID: "a", OwnerID: "alice"}
	for name, c := range map[string]struct {
		d    access.Decision
		want access.Effect
	}{
		"private write":                   {pol.Write(both, "a", graph.DefaultOrg.Private("a")), access.Allow},
		"public write":                    {pol.Write(both, "a", graph.DefaultOrg.Public("a")), access.Allow},
		"team write of a team it writes":  {pol.Write(both, "a", graph.DefaultOrg.Team("x")), access.Deny},
		"shared write":                    {pol.Write(both, "a", graph.DefaultOrg.Shared("alice")), access.Deny},
		"another agent's space":           {pol.Write(both, "a", graph.DefaultOrg.Public("b")), access.Deny},
		"confined team write":             {pol.Write(confined, "a", graph.DefaultOrg.Team("x")), access.Deny},
		"confined private write":          {pol.Write(confined, "a", graph.DefaultOrg.Private("a")), access.Allow},
		"private write, no private":       {access.Policy{}.Write(both, "a", graph.DefaultOrg.Private("a")), access.Deny},
		"public write, no private":        {access.Policy{}.Write(both, "a", graph.DefaultOrg.Public("a")), access.Allow},
		"modify private":                  {pol.Modify(both, graph.DefaultOrg.Private("a")), access.Allow},
		"promote from private, to global": {pol.Promote(both, graph.DefaultOrg.Private("a"), graph.DefaultOrg.Global()), access.Deny},
		"promote from private, to a team": {pol.Promote(both, graph.DefaultOrg.Private("a"), graph.DefaultOrg.Team("x")), access.Deny},
		"promote from public":             {pol.Promote(both, graph.DefaultOrg.Public("a"), graph.DefaultOrg.Global()), access.Allow},
		"distil":                          {pol.Distil(both, "a"), access.Deny},
		"delegate further":                {pol.Delegate(both, agent), access.Deny},
		"share":                           {pol.Share(both, agent), access.Deny},
		"manage":                          {pol.ManageAgent(both, agent), access.Deny},
		"an admin host delegating":        {pol.Delegate(admin, agent), access.Deny},
	} {
		if c.d.Effect != c.want || (c.want == access.Deny && c.d.Reason == "") {
			t.Errorf("%s: %+v, want effect %d", name, c.d, c.want)
		}
	}
	owner := access.NewPrincipal("alice", hostOf("trusted"), graph.PrincipalFacts{Owns: []string{"a"}})
	if d := pol.Distil(owner, "a"); d.Effect != access.Allow {
		t.Errorf("the owner distilling: %+v", d)
	}
	if d := (access.Policy{}).Distil(owner, "a"); d.Effect != access.Deny {
		t.Errorf("the owner distilling without private memories: %+v", d)
	}
	if d := pol.Delegate(owner, agent); d.Effect != access.Allow {
		t.Errorf("the owner delegating: %+v", d)
	}
}

// TestPolicy_EraseRequester: an admin host may erase any requester of its
// organization, a requester itself only through its own end user's JWT; a host key
// naming the requester, another requester, its own token naming someone else, or
// another JWT user is refused with a reason.
func TestPolicy_EraseRequester(t *testing.T) {
	pol := access.Policy{AllowPrivate: true}
	jwt := func(subject string) access.Host {
		return access.Host{Name: "jwt:" + subject, Requesters: []string{subject}, Subject: subject}
	}
	owner := graph.PrincipalFacts{Owns: []string{"a"}, Promoter: true, Teams: map[string]graph.Role{"x": graph.RoleWriter}}
	for _, c := range []struct {
		name  string
		p     access.Principal
		id    string
		allow bool
	}{
		{"an admin host", access.NewPrincipal("root", hostOf("admin"), graph.PrincipalFacts{}), "alice", true},
		{"an admin host naming the requester itself", access.NewPrincipal("alice", hostOf("admin"), owner), "alice", true},
		{"another organization's admin host, in its own", access.NewPrincipal("root", hostOf("globex_admin"), graph.PrincipalFacts{}), "alice", true},
		{"the requester's own token", access.NewPrincipal("alice", jwt("alice"), owner), "alice", true},
		{"a trusted host key naming the requester", access.NewPrincipal("alice", hostOf("trusted"), owner), "alice", false},
		{"a confined host key naming the requester", access.NewPrincipal("alice", hostOf("confined"), owner), "alice", false},
		{"another requester", access.NewPrincipal("bob", hostOf("trusted"), graph.PrincipalFacts{Promoter: true}), "alice", false},
		{"the requester's token for someone else", access.NewPrincipal("alice", jwt("alice"), owner), "bob", false},
		{"another end user's token", access.NewPrincipal("bob", jwt("bob"), graph.PrincipalFacts{}), "alice", false},
		{"a token whose subject is not the requester", access.NewPrincipal("alice", jwt("bob"), owner), "alice", false},
	} {
		d := pol.EraseRequester(c.p, c.id)
		if got := d.Effect == access.Allow; got != c.allow || (!got && (d.Effect != access.Deny || d.Reason == "")) {
			t.Errorf("%s erasing %s: %+v, want allowed %v (a denial with a reason)", c.name, c.id, d, c.allow)
		}
	}
}

// distilled decides compact_words, reflect_words and move_distilled: what compaction
// and reflection may draw on is the agent's own words for its owner (OwnWords) in its
// private and public spaces; the column's distil seed is that for the principal when
// the principal owns its agent and the agent wrote the seed there (global's is a
// promoted copy, whose original in the agent's public space holds the same words). A derived memory moves, by its owner, only with
// sources it could move itself. A distil plant is never anyone's own words: the
// service's tier checks that none reaches what was written.
func (pt policyTier) distilled(c accesstest.Cell, p access.Principal, own string) string {
	m, w := pt.m, pt.m.World
	if p.Org != graph.DefaultOrg {
		return accesstest.Undecided // its agent does not exist there: the store's 404
	}
	ownWords := c.Column != "system" && m.SeedAgent(c.Column) == own && w.Agents[own] == p.ID
	if c.Operation != "move_distilled" {
		if d := pt.pol.Distil(p, own); d.Effect != access.Allow {
			return effect(d)
		}
		// Read from the agent's private and public spaces alone (global's seed: from its
		// original in the agent's public space).
		if kind, _ := accesstest.SpaceColumn(c.Column); ownWords && (kind == "private" || kind == "public" || kind == "global") {
			return "found"
		}
		return "absent"
	}
	private := graph.DefaultOrg.Private(own)
	if !pt.pol.Visible(p).Contains(private.GroupID()) {
		return "404"
	}
	if d := pt.pol.Modify(p, private); d.Effect != access.Allow {
		return effect(d)
	}
	if w.Agents[own] != p.ID || pt.pol.Write(p, own, graph.DefaultOrg.Public(own)).Effect != access.Allow {
		return "403" // the compaction is its owner's words, and only its owner moves them
	}
	scopes := []graph.Space{graph.DefaultOrg.Global()}
	for team := range p.Teams {
		scopes = append(scopes, graph.DefaultOrg.Team(team))
	}
	if ownWords && c.Column != "global" && pt.pol.VisibleForAgent(p, own, scopes).Contains(matrixSpace(w, c.Column).GroupID()) {
		return "allow"
	}
	return "403" // its source is another's words (global's: a promoted copy), or out of the agent's reach
}
