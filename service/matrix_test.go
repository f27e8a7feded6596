package service_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/accesstest"
	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// hosts are the host keys of the matrix's principals, each bound to any requester
// (the matrix is about spaces; bindings are tested in access and handlers).
var hosts = map[string]access.Host{
	"trusted":  {Name: "agent-host", Trusted: true, Requesters: []string{"*"}},
	"admin":    {Name: "ops", Trusted: true, Admin: true, Requesters: []string{"*"}},
	"confined": {Name: "plugin", Requesters: []string{"*"}},
	// Another organization's, where the world holds nothing, with the same requester ids.
	"globex_trusted":   {Org: "globex", Name: "globex-agent-host", Trusted: true, Requesters: []string{"*"}},
	"globex_admin":     {Org: "globex", Name: "globex-ops", Trusted: true, Admin: true, Requesters: []string{"*"}},
	"globex_confined":  {Org: "globex", Name: "globex-plugin", Requesters: []string{"*"}},
	"globex_asserting": {Org: "globex", Name: "globex-team-host", Trusted: true, Requesters: []string{"*"}, AssertTeams: true},
	// A trusted key with assert_teams: its principals assert teams (X-Requester-Teams).
	"asserting": {Name: "team-host", Trusted: true, Requesters: []string{"*"}, AssertTeams: true},
}

// world is the matrix world stored through the service in the real store, its ids
// suffixed with the test's mark.
type world struct {
	t        *testing.T
	ctx      context.Context
	m        *accesstest.Matrix
	mark     string
	svc      *service.Service
	db       *neo4jstore.DB
	seeds    map[string]string // space column -> a memory there (system: an audit event's id)
	failed   map[string]string // space column -> a memory there whose ingestion failed
	expiring map[string]string // space column -> a memory there that get_expired lets expire
	tokens   map[string]string // space column -> a word only its seed holds
	fresh    int               // agents and teams made for agent and team operations so far
	// ruleKept: space column -> a memory the visibility rule kept private, rewritten and
	// moved there (versions_rule); secret is the number the rule matched in it.
	ruleKept map[string]string
	secret   string
	copies   map[string]string         // copy column -> the copy copy_update rewrites and copy_move moves
	dissolve map[string]copyTeam       // team column -> the team copy_dissolve dissolves next
	seen     map[string][]shown        // principal -> what list and search showed it
	hooks    map[string]*graph.Webhook // "principal column" -> the webhook subscribe registered

	expired   bool // the expiring memories have expired
	quotaUsed bool // the world's agents have made their public writes of the day

	distil distilWorld
}

// distilWorld is what compact_words, reflect_words and move_distilled read: per space
// column a distil seed (its writer's own words) and a distil plant (words that are not
// their agent's owner's), each with a word only it holds; and the agents whose owner
// has written a memory of their own.
type distilWorld struct {
	start         time.Time
	seeds, tokens map[string]string
	plants        map[string]string // column -> the plant's word
	own           map[string]bool
}

// plantDistil writes the distil seeds and plants of the world (matrix.json's
// distil_plants) and returns what they are.
func (w *world) plantDistil(start time.Time) distilWorld {
	w.t.Helper()
	d := distilWorld{start: start, seeds: map[string]string{}, tokens: map[string]string{}, plants: map[string]string{}, own: map[string]bool{}}
	for _, col := range w.m.Spaces {
		if col == "system" {
			continue
		}
		d.tokens[col] = fmt.Sprintf("dtok%s%s", col, w.mark)
		d.seeds[col] = w.seed(col, fmt.Sprintf("A distil seed of %s: %s.", col, d.tokens[col]))
	}
	for col, pl := range w.m.DistilPlants {
		d.plants[col] = fmt.Sprintf("ptok%s%s", col, w.mark)
		host, asserts := "trusted", ""
		if pl.Asserts != "" {
			host, asserts = "asserting", (accesstest.Principal{Asserts: pl.Asserts}).AssertedTeams(w.id)
		}
		writer, err := w.resolve(w.m.World.Agents[pl.Writer], host, asserts)
		if err != nil {
			w.t.Fatal(err)
		}
		_, visibility, team := w.space(col)
		text := "A distil plant of " + col + ": " + d.plants[col] + "."
		if pl.Rewriter != "" {
			text = "A note of " + col + "."
		}
		e := w.mustAdd(writer, service.NewMemory{AgentID: w.id(pl.Agent), Visibility: visibility, Team: team, Text: text})
		if pl.Rewriter != "" {
			if _, err := w.svc.Update(w.ctx, w.call(w.m.World.Agents[pl.Rewriter], "trusted"), e.UUID, service.Patch{Given: map[string]bool{"messages": true},
				Memory: service.NewMemory{Text: "A distil plant of " + col + ", rewritten: " + d.plants[col] + "."}}); err != nil {
				w.t.Fatalf("rewriting the distil plant of %s: %v", col, err)
			}
		}
	}
	return d
}

// ownMemory has agent's owner write one memory of its own for it, once.
func (w *world) ownMemory(agent string) {
	if w.distil.own[agent] {
		return
	}
	w.distil.own[agent] = true
	w.mustAdd(w.call(w.m.World.Agents[agent], "trusted"), service.NewMemory{AgentID: w.id(agent), Visibility: "private",
		Text: "An own memory of " + agent + "."})
}

// distilled says what of column's distil seed and plant text holds: leaked when the
// plant's word is there, found when the seed's is, absent when neither.
func (w *world) distilled(column, text string) string {
	if plant := w.distil.plants[column]; plant != "" && strings.Contains(text, plant) {
		return "leaked " + plant
	}
	if token := w.distil.tokens[column]; token != "" && strings.Contains(text, token) {
		return "found"
	}
	return "absent"
}

func (w *world) id(name string) string { return name + "-" + w.mark }

// call resolves requester through host as the service does once per request, so each
// call sees the store as it is now.
func (w *world) call(requester, host string) service.Call {
	w.t.Helper()
	c, err := w.resolve(requester, host, "")
	if err != nil {
		w.t.Fatalf("resolving %s: %v", requester, err)
	}
	return c
}

// resolve resolves requester through host with the teams asserted (an
// X-Requester-Teams value, "" for none).
func (w *world) resolve(requester, host, asserts string) (service.Call, error) {
	w.t.Helper()
	h, ok := hosts[host]
	if !ok {
		w.t.Fatalf("matrix: unknown host %q", host)
	}
	var asserted map[string]graph.Role
	if asserts != "" {
		var err error
		if asserted, err = access.ParseAssertedTeams(asserts); err != nil {
			w.t.Fatalf("matrix: %v", err)
		}
	}
	return w.svc.Resolve(w.ctx, h, "", w.id(requester), asserted, "matrix-"+w.mark)
}

func (w *world) principal(name string) service.Call {
	return w.principalWith(name, "", "")
}

// principalWith resolves a principal of the matrix for an operation on team, a team
// made like the world's team column: what it asserts of column it asserts of team.
func (w *world) principalWith(name, column, team string) service.Call {
	w.t.Helper()
	p := w.m.Principals[name]
	c, err := w.resolve(p.Requester, p.Host, p.AssertedTeams(func(t string) string {
		if t == column {
			return team
		}
		return w.id(t)
	}))
	if err != nil {
		w.t.Fatalf("resolving %s: %v", name, err)
	}
	return c
}

func (w *world) admin() service.Call { return w.call("root", "admin") }

// webhookInput is the webhook following a space column's space: its agent's for an
// agent's space, its team's, the audit webhook for system, and for the others
// (global, a shared space) a request that names none, as none follows them.
func (w *world) webhookInput(principal, column string) service.WebhookInput {
	// One URL per principal and column: the webhooks of a_private and a_public follow
	// the same agent, and a host key has one webhook per URL and agent.
	in := service.WebhookInput{URL: "https://hooks.example.com/" + w.mark + "/" + principal + "/" + column, Events: graph.MemoryEvents}
	agent, _, team := w.space(column)
	switch {
	case column == "system":
		in.Audit, in.Events = true, []string{graph.EventAccessDenied}
	case team != "":
		in.Team = team
	case column != "global" && !strings.HasSuffix(column, "_shared"):
		in.AgentID = agent
	}
	return in
}

// hostRing finds the matrix's hosts by name, as the keyring finds configured keys.
type hostRing struct{}

func (hostRing) Host(name string) (access.Host, bool) {
	for _, h := range hosts {
		if h.Name == name {
			return h, true
		}
	}
	return access.Host{}, false
}

// space returns the agent, the visibility and the team a space column names, as a
// client would write them (agent is empty for team, global and system).
func (w *world) space(column string) (agent, visibility, team string) {
	return accesstest.SpaceArgs(column, w.id)
}

func (w *world) groupID(column string) string {
	agent, visibility, team := w.space(column)
	switch {
	case visibility == "shared":
		return "user-" + w.id(w.m.World.Agents[w.m.SeedAgent(column)]) + "-shared"
	case agent != "":
		return "agent-" + agent + "-" + visibility
	case team != "":
		return "team-" + team
	}
	return visibility
}

// writer is who stores seeds in a column of the world, and with which of its agents:
// the owner of the column's seed agent (for global, a promoter, who promotes a public
// memory).
func (w *world) writer(column string) (service.Call, string) {
	agent := w.m.SeedAgent(column)
	owner, ok := w.m.World.Agents[agent]
	if !ok {
		w.t.Fatalf("matrix: nobody in the world can write to %s", column)
	}
	return w.call(owner, "trusted"), w.id(agent)
}

func (w *world) mustAdd(c service.Call, m service.NewMemory) *graph.Episode {
	w.t.Helper()
	added, errs := w.svc.Add(w.ctx, c, []service.NewMemory{m}, "")
	if errs[0] != nil {
		w.t.Fatalf("%s adding to %s %s %s: %v", c.P.ID, m.AgentID, m.Visibility, m.Team, errs[0])
	}
	return added[0].Episode
}

// seed stores a memory in column as the column's writer and returns its id.
func (w *world) seed(column, text string) string {
	w.t.Helper()
	c, own := w.writer(column)
	if column == "global" {
		src := w.mustAdd(c, service.NewMemory{AgentID: own, Visibility: "public", Text: text})
		e, err := w.svc.Promote(w.ctx, c, src.UUID, "global")
		if err != nil {
			w.t.Fatalf("promoting a seed to global: %v", err)
		}
		return e.UUID
	}
	agent, visibility, team := w.space(column)
	if agent == "" {
		agent = own
	}
	e := w.mustAdd(c, service.NewMemory{AgentID: agent, Visibility: visibility, Team: team, Text: text})
	if e.GroupID != w.groupID(column) {
		w.t.Fatalf("a seed of %s landed in %s", column, e.GroupID)
	}
	return e.UUID
}

// fail makes the ingestion of the memory id of column fail, as a worker does when it
// gives up: claimed from the queue, then released with no retry. In an agent's or
// team's space of this world the memory must be the oldest one not done (the queue
// serves a space in order). The global space is shared with every other test, where
// the queue would serve another test's memory first, so there the state is set
// directly.
func (w *world) fail(column, id string) {
	w.t.Helper()
	group := w.groupID(column)
	if column == "global" {
		err := neo4jtest.Run(neo4jtest.URI(w.t), `
MATCH (e:Episodic {uuid: $uuid, group_id: 'global'})
WHERE e.status = 'queued'
SET e.status = 'failed', e.last_error = $reason, e.attempts = coalesce(e.attempts, 0) + 1`,
			map[string]any{"uuid": id, "reason": "failed by the matrix test"})
		if err != nil {
			w.t.Fatal(err)
		}
	} else {
		worker := "matrix-" + w.mark
		claimed, _, err := w.db.Claim(w.ctx, worker, group, time.Minute, 1, 0)
		if err != nil {
			w.t.Fatal(err)
		}
		if len(claimed) != 1 || claimed[0].Episode.UUID != id {
			w.t.Fatalf("the queue of %s served %d memories, not %s first", group, len(claimed), id)
		}
		if err := w.db.Release(w.ctx, id, worker, "failed by the matrix test", nil, graph.Cost{}); err != nil {
			w.t.Fatal(err)
		}
	}
	if status := w.status(column, id); status != graph.StatusFailed {
		w.t.Fatalf("memory %s in %s is %s after failing it", id, group, status)
	}
}

// status reads a memory of column from the store, past the Authorizer: its
// ingestion status, or "gone".
func (w *world) status(column, id string) string {
	w.t.Helper()
	return w.statusIn(w.groupID(column), id)
}

func (w *world) statusIn(group, id string) string {
	w.t.Helper()
	e, err := w.db.GetEpisode(w.ctx, id, graph.Visible{GroupIDs: []string{group}})
	switch {
	case graph.ErrorCode(err) == graph.ENOTFOUND:
		return "gone"
	case err != nil:
		w.t.Fatal(err)
	}
	return e.Status
}

func newWorld(t *testing.T) *world {
	t.Helper()
	m, err := accesstest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	mark := "m" + hex.EncodeToString(b[:])
	neo4jtest.Forget(t, mark)
	// A number of its own, so that a test counting the stored copies of another one
	// meanwhile finds none of this world's.
	secret := fmt.Sprintf("%03d-%02d-%04d", 100+int(b[0])%900, 10+int(b[1])%90, 1000+(int(b[2])<<8|int(b[3]))%9000)
	db := neo4jtest.DB(t)
	svc := &service.Service{
		Auth: access.Policy{AllowPrivate: true}, Dir: db, Mem: db, Find: db, Queue: db, Audit: db, Hooks: db, Hosts: hostRing{},
		Log: neo4jtest.Logger(t), Now: time.Now, Embedder: extract.Hashing{Dimensions: neo4jtest.Dimensions}, Summarizer: extract.Extractive{},
		Ontology: accesstest.TypesOntology,
		Limits: service.Limits{DefaultVisibility: "private", RefuseCredentials: true, MaxContentBytes: 64 << 10,
			BatchMaxItems: 10, PageSizeDefault: 20, PageSizeMax: 100, PublicWritesPerDay: quota,
			VisibilityRules: []service.VisibilityRule{{Name: "ssn", Pattern: regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)}}},
	}
	// No deadline of its own: how long the matrix takes is the machine's, and go test's
	// -timeout bounds the run.
	ctx := t.Context()
	w := &world{t: t, ctx: ctx, m: m, mark: mark, svc: svc, db: db,
		seeds: map[string]string{}, failed: map[string]string{}, expiring: map[string]string{}, tokens: map[string]string{},
		ruleKept: map[string]string{}, secret: secret, copies: map[string]string{}, dissolve: map[string]copyTeam{},
		seen: map[string][]shown{}, hooks: map[string]*graph.Webhook{}}

	root := w.admin()
	start := time.Now().UTC()
	for agent, owner := range m.World.Agents {
		if _, err := svc.CreateAgent(ctx, root, w.id(agent), w.id(owner)); err != nil {
			t.Fatal(err)
		}
	}
	for team, members := range m.World.Teams {
		if err := svc.CreateTeam(ctx, root, w.id(team), w.id(m.World.TeamOwner(team))); err != nil {
			t.Fatal(err)
		}
		for member, role := range members {
			if err := svc.SetMember(ctx, root, w.id(team), w.id(member), graph.Role(role)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range m.World.Promoters {
		if err := svc.SetPromoter(ctx, root, w.id(p), true); err != nil {
			t.Fatal(err)
		}
	}
	for agent, grantees := range m.World.Shares {
		for _, g := range grantees {
			if err := svc.Share(ctx, w.call(m.World.Agents[agent], "trusted"), w.id(agent), w.id(g), true, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Shares that lapse in a moment.
	for agent, grantees := range m.World.LapsedShares {
		for _, g := range grantees {
			lapse := time.Now().Add(2 * time.Second)
			if err := svc.Share(ctx, w.call(m.World.Agents[agent], "trusted"), w.id(agent), w.id(g), true, &lapse); err != nil {
				t.Fatal(err)
			}
		}
	}
	for agent, delegates := range m.World.Delegations {
		for _, d := range delegates {
			if err := svc.Delegate(ctx, w.call(m.World.Agents[agent], "trusted"), w.id(agent), w.id(d), graph.RoleWriter, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Delegations that lapse in a moment.
	for agent, delegates := range m.World.LapsedDelegations {
		for _, d := range delegates {
			lapse := time.Now().Add(2 * time.Second)
			if err := svc.Delegate(ctx, w.call(m.World.Agents[agent], "trusted"), w.id(agent), w.id(d), graph.RoleWriter, &lapse); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The first memory of each space is the one whose ingestion fails, while it is the
	// oldest there; then the seeds that the reads look for.
	for _, col := range m.Spaces {
		if col == "system" {
			continue
		}
		w.failed[col] = w.seed(col, "A memory of "+col+" whose ingestion failed.")
		w.fail(col, w.failed[col])
	}
	for _, col := range m.Spaces {
		w.tokens[col] = fmt.Sprintf("tok%s%s", col, mark)
		if col != "system" {
			w.seeds[col] = w.seed(col, fmt.Sprintf("A seed memory of %s: %s.", col, w.tokens[col]))
			w.expiring[col] = w.seed(col, "A memory of "+col+" that will expire.")
		}
		// The entity ingestion would make of the seed, as the HTTP world's pipeline makes
		// it (global's seed is not ingested there: it has none).
		if col != "system" && col != "global" {
			if err := neo4jtest.Run(neo4jtest.URI(t), `CREATE (:Entity {uuid: randomUUID(), name: $name, group_id: $group_id,
  summary: '', created_at: datetime()})`, map[string]any{"name": entityOf(w.tokens[col]), "group_id": w.groupID(col)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.distil = w.plantDistil(start)
	// The system space holds audit events; the id of one stands for its memory.
	events, _, err := svc.ListAudit(ctx, root, graph.AuditFilter{Actor: w.id("root"), Page: graph.PageRequest{Limit: 1}})
	if err != nil || len(events) != 1 {
		t.Fatalf("no audit event to use as the system space's memory (%v)", err)
	}
	w.seeds["system"], w.failed["system"], w.expiring["system"] = events[0].ID, events[0].ID, events[0].ID
	for _, col := range m.Spaces {
		w.ruleKept[col] = w.seeds["system"]
		if col != "system" {
			w.ruleKept[col] = w.keepByRule(col)
		}
	}
	neo4jtest.ForgetEventsAbout(t, []string{w.expiring["global"]})
	// The cells run once the lapsing shares have lapsed for their grantees.
	for agent, grantees := range m.World.LapsedShares {
		for _, g := range grantees {
			for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; w.call(g, "trusted").P.SharedWith[w.id(agent)]; wait = neo4jtest.Poll(wait) {
				if time.Now().After(deadline) {
					t.Fatalf("%s still holds %s's share a minute after it lapsed", g, agent)
				}
			}
		}
	}
	for agent, delegates := range m.World.LapsedDelegations {
		for _, d := range delegates {
			for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; w.call(d, "trusted").P.Delegated[w.id(agent)]; wait = neo4jtest.Poll(wait) {
				if time.Now().After(deadline) {
					t.Fatalf("%s still holds %s's delegation a minute after it lapsed", d, agent)
				}
			}
		}
	}
	return w
}

// expire gives every expiring memory an expires_at a moment ahead, through an update
// by the column's writer, and waits until its writer no longer reads any of them.
func (w *world) expire() {
	w.t.Helper()
	if w.expired {
		return
	}
	for col, id := range w.expiring {
		if col == "system" {
			continue
		}
		c, _ := w.writer(col)
		at := time.Now().Add(time.Second)
		if _, err := w.svc.Update(w.ctx, c, id, service.Patch{Given: map[string]bool{"expires_at": true},
			Memory: service.NewMemory{ExpiresAt: &at}}); err != nil {
			w.t.Fatalf("setting expires_at of %s's memory: %v", col, err)
		}
	}
	for col, id := range w.expiring {
		if col == "system" {
			continue
		}
		c, _ := w.writer(col)
		for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
			if _, err := w.svc.Get(w.ctx, c, id); graph.ErrorCode(err) == graph.ENOTFOUND {
				break
			}
			if time.Now().After(deadline) {
				w.t.Fatalf("the writer of %s still reads its memory a minute after it expired", col)
			}
		}
	}
	w.expired = true
}

// quota is the public writes a day of the matrix's agents; create_over_quota uses it
// up first (useQuota).
const quota = 1000

// useQuota records that every agent of the world has made its public writes today, as
// agent_public_write counts them.
func (w *world) useQuota() {
	w.t.Helper()
	if w.quotaUsed {
		return
	}
	err := neo4jtest.Run(neo4jtest.URI(w.t), `MATCH (a:Agent) WHERE a.id ENDS WITH $mark
SET a.public_writes_day = $day, a.public_writes = $quota`,
		map[string]any{"mark": "-" + w.mark, "day": time.Now().UTC().Format(time.DateOnly), "quota": int64(quota)})
	if err != nil {
		w.t.Fatal(err)
	}
	w.quotaUsed = true
}

// outcome names an error in the matrix's words.
func outcome(err error) string {
	switch code := graph.ErrorCode(err); code {
	case "":
		return "allow"
	case graph.EINVALID:
		return "400"
	case graph.EFORBIDDEN:
		return "403"
	case graph.ENOTFOUND:
		return "404"
	case graph.ECONFLICT:
		return "409"
	case graph.EQUOTA:
		return "429"
	default:
		return fmt.Sprintf("%s (%v)", code, err)
	}
}

// shown is a memory, fact or entity that a list or a search showed a principal.
type shown struct{ kind, id, group string }

// TestMatrix_Service runs the cells of access/testdata/matrix.json through
// service.Service on the real store, as the principal of its row (accesstest.Run):
// every cell under make reliability, the ones HTTP does not decide under make test.
// Then: everything a list or search showed a principal, that principal can read by
// id; and every 403 left exactly one namespace_denied event, every other outcome none.
func TestMatrix_Service(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	forbidden := w.m.Forbidden(accesstest.Run(t, w.m, w))

	t.Run("ListAndSearchAgreeWithGet", func(t *testing.T) {
		for name, items := range w.seen {
			c := w.principal(name)
			for _, s := range items {
				var err error
				switch s.kind {
				case "memory":
					_, err = w.svc.Get(w.ctx, c, s.id)
				case "fact":
					_, err = w.svc.GetFact(w.ctx, c, s.id)
				case "entity":
					_, err = w.svc.GetEntity(w.ctx, c, s.id)
				}
				if err != nil && !(s.kind == "memory" && w.erased(s.id, s.group)) {
					t.Errorf("%s was shown %s %s, but reading it answers %v", name, s.kind, s.id, err)
				}
			}
		}
	})

	t.Run("EveryForbiddenIsAudited", func(t *testing.T) {
		actors := map[accesstest.Actor]bool{}
		for _, p := range w.m.Principals {
			actors[accesstest.Actor{Requester: p.Requester, AdminHost: p.AdminHost()}] = true
		}
		for actor := range actors {
			root, requester := w.call("root", actor.AdminHost), actor.Requester
			events := 0
			f := graph.AuditFilter{Actor: w.id(requester), Kind: graph.AuditNamespaceDenied, Page: graph.PageRequest{Limit: 100}}
			for {
				page, next, err := w.svc.ListAudit(w.ctx, root, f)
				if err != nil {
					t.Fatal(err)
				}
				events += len(page)
				if f.Page.Cursor = next; next == "" {
					break
				}
			}
			if events != forbidden[actor] {
				t.Errorf("%s (audited by %s): %d outcomes were 403, %d namespace_denied events", w.id(requester), actor.AdminHost, forbidden[actor], events)
			}
		}
	})
}

// Perform runs one cell for accesstest.Run and keeps what a list or search showed.
// Under make test it leaves the cells the HTTP tier decides (accesstest.OverHTTP) to
// handlers' TestMatrix, whose requests reach the same service calls.
func (w *world) Perform(cell accesstest.Cell) string {
	if !accesstest.ServiceRepeatsHTTP && accesstest.OverHTTP(cell) {
		return accesstest.Undecided
	}
	// A principal whose teams are refused is refused before anything: one audited 403.
	if p := w.m.Principals[cell.Principal]; p.Asserts != "" {
		if _, err := w.resolve(p.Requester, p.Host, p.AssertedTeams(w.id)); err != nil {
			return outcome(err)
		}
	}
	got, showed := w.run(cell)
	w.seen[cell.Principal] = append(w.seen[cell.Principal], showed...)
	return got
}

// entityOf is the name of the entity a seed's token stands for.
func entityOf(token string) string { return "T" + token[1:] }

// gone says the memory id is no longer stored, or has expired, since it was shown
// (the global space is shared with other tests, which erase what they wrote there and
// may let memories there expire).
func gone(t *testing.T, id string) bool {
	return neo4jtest.Count(t, "MATCH (e:Episodic {uuid: $id}) WHERE e.expires_at IS NULL OR e.expires_at > datetime() RETURN count(e)",
		map[string]any{"id": id}) == 0
}

// listed pages through a list as the cell's principal (page answers the ids of one
// page and the next cursor) and says whether the column's agent or team is on it.
func (w *world) listed(cell accesstest.Cell, page func(cursor string) ([]string, string, error)) string {
	want := w.id(cell.Column)
	for cursor := ""; ; {
		ids, next, err := page(cursor)
		switch {
		case err != nil:
			return outcome(err)
		case slices.Contains(ids, want):
			return "listed"
		case next == "":
			return "absent"
		}
		cursor = next
	}
}

// run performs one cell as its principal and returns what happened, in the matrix's
// words, with what a list or search showed.
func (w *world) run(cell accesstest.Cell) (string, []shown) {
	w.t.Helper()
	c := w.principal(cell.Principal)
	switch cell.Operation {
	case "list_entities":
		col := cell.Column
		agent, _, _ := accesstest.SpaceArgs(col, w.id)
		if agent == "" {
			agent = w.id(w.m.Principals[cell.Principal].Agent)
		}
		name := entityOf(w.tokens[col])
		page, err := w.svc.ListEntities(w.ctx, c, service.EntityList{AgentID: agent, NamePrefix: name})
		if err != nil {
			return outcome(err), nil
		}
		var showed []shown
		found := false
		for _, e := range page.Entities {
			showed = append(showed, shown{"entity", e.UUID, e.GroupID})
			found = found || e.Name == name
		}
		return map[bool]string{true: "found", false: "absent"}[found], showed
	case "list_agents", "list_agents_all":
		q := service.AgentList{All: cell.Operation == "list_agents_all"}
		return w.listed(cell, func(cursor string) ([]string, string, error) {
			q.Page = graph.PageRequest{Cursor: cursor, Limit: 2}
			page, err := w.svc.ListAgents(w.ctx, c, q)
			var ids []string
			for _, a := range page.Agents {
				ids = append(ids, a.ID)
			}
			return ids, page.NextCursor, err
		}), nil
	case "list_teams", "list_teams_all":
		return w.listed(cell, func(cursor string) ([]string, string, error) {
			page, err := w.svc.ListTeams(w.ctx, c, cell.Operation == "list_teams_all", graph.PageRequest{Cursor: cursor, Limit: 2})
			var names []string
			for _, t := range page.Teams {
				names = append(names, t.Team.Name)
			}
			return names, page.NextCursor, err
		}), nil
	case "share", "unshare", "delegate", "undelegate", "transfer", "erase", "compact", "reflect", "usage":
		return w.runAgent(cell), nil
	case "set_types", "set_team_types":
		return w.runSetTypes(c, cell), nil
	case "dissolve":
		team := w.id(cell.Column)
		_, err := w.svc.DissolveTeam(w.ctx, c, team, true)
		if _, terr := w.svc.GetTeam(w.ctx, w.admin(), team); err == nil && terr != nil {
			return "a dry run dissolved the team", nil
		}
		return outcome(err), nil
	case "copy_dissolve":
		return w.runCopyDissolve(cell), nil
	case "move_into_dissolved":
		return w.runMoveIntoDissolved(cell), nil
	case "copy_update", "copy_delete", "copy_move":
		return w.runCopy(c, cell), nil
	}
	col := cell.Column
	own := w.id(w.m.Principals[cell.Principal].Agent)
	agent, visibility, team := w.space(col)
	switch cell.Operation {
	case "compact_words":
		w.ownMemory(w.m.Principals[cell.Principal].Agent)
		e, err := w.svc.Compact(w.ctx, c, service.CompactQuery{AgentID: own, Since: &w.distil.start, MaxTokens: 8192})
		if err != nil {
			return outcome(err), nil
		}
		return w.distilled(col, e.Content), nil

	case "reflect_words":
		w.ownMemory(w.m.Principals[cell.Principal].Agent)
		eps, err := w.svc.Reflect(w.ctx, c, service.ReflectQuery{AgentID: own, Since: &w.distil.start, MaxTokens: 8192})
		if err != nil {
			return outcome(err), nil
		}
		var text strings.Builder
		for _, e := range eps {
			text.WriteString(e.Content + "\n")
		}
		return w.distilled(col, text.String()), nil

	case "move_distilled":
		// A compaction of the principal's agent derived from the column's distil seed,
		// with its words, as memgate wrote one before compaction drew on own words alone.
		agentName := w.m.Principals[cell.Principal].Agent
		source := w.distil.seeds[col]
		if col == "system" {
			source = w.seeds["system"] // an audit event's id: no memory
		}
		e := w.mustAdd(w.call(w.m.World.Agents[agentName], "trusted"), service.NewMemory{AgentID: own, Visibility: "private",
			SourceDescription: service.SourceCompaction, Text: "A compaction: " + w.distil.tokens[col] + "."})
		if err := neo4jtest.Run(neo4jtest.URI(w.t), `MATCH (e:Episodic {uuid: $id}) SET e.derived_from = [$from]`,
			map[string]any{"id": e.UUID, "from": source}); err != nil {
			w.t.Fatal(err)
		}
		moved, err := w.svc.Update(w.ctx, c, e.UUID, service.Patch{Given: map[string]bool{"visibility": true},
			Memory: service.NewMemory{Visibility: "public"}})
		switch {
		case err != nil && w.statusIn("agent-"+own+"-private", e.UUID) == "gone":
			return outcome(err) + ", but the compaction left the private space", nil
		case err != nil:
			return outcome(err), nil
		case moved.GroupID != "agent-"+own+"-public":
			return "moved wrongly, to " + moved.GroupID, nil
		}
		return "allow", nil
	}
	switch cell.Operation {
	case "create", "create_over_quota", "create_fact":
		if cell.Operation == "create_over_quota" {
			w.useQuota()
		}
		if agent == "" {
			agent = own
		}
		var added []service.Added
		var errs []error
		if cell.Operation == "create_fact" { // the fact's memory, without waiting for the pipeline
			_, a, err := w.svc.AddFact(w.ctx, c, service.NewFact{AgentID: agent, Visibility: visibility, Team: team,
				Source: service.NamedEntity{Name: "Matrix"}, Relation: "NOTES", Target: service.NamedEntity{Name: col}}, "", 0)
			added, errs = []service.Added{a}, []error{err}
		} else {
			added, errs = w.svc.Add(w.ctx, c, []service.NewMemory{{AgentID: agent, Visibility: visibility, Team: team,
				Text: "created by the matrix"}}, "")
		}
		if errs[0] != nil {
			return outcome(errs[0]), nil
		}
		switch e := added[0].Episode; {
		case added[0].Confined && e.GroupID == "agent-"+agent+"-private":
			return "confine", nil
		case !added[0].Confined && e.GroupID == w.groupID(col):
			return "allow", nil
		default:
			return fmt.Sprintf("stored in %s (confined %v)", e.GroupID, added[0].Confined), nil
		}

	case "get":
		e, err := w.svc.Get(w.ctx, c, w.seeds[col])
		if err == nil && e.UUID != w.seeds[col] {
			return "answered with " + e.UUID, nil
		}
		return outcome(err), nil

	case "get_expired":
		w.expire()
		_, err := w.svc.Get(w.ctx, c, w.expiring[col])
		return outcome(err), nil

	case "update":
		before := w.status(col, w.seeds[col])
		e, err := w.svc.Update(w.ctx, c, w.seeds[col], service.Patch{Given: map[string]bool{"tags": true},
			Memory: service.NewMemory{Tags: []string{"matrix", c.P.ID}}})
		if err == nil && (len(e.Tags) != 2 || e.Tags[1] != c.P.ID || e.Version < 2 || e.Status != before) {
			return fmt.Sprintf("updated wrongly: version %d, tags %v, %s", e.Version, e.Tags, e.Status), nil
		}
		return outcome(err), nil

	case "move":
		id, to := w.seeds[col], "private"
		if col != "system" {
			id = w.seed(col, "A memory of "+col+" to be moved.")
		}
		if visibility == "private" {
			to = "public"
		}
		e, err := w.svc.Update(w.ctx, c, id, service.Patch{Given: map[string]bool{"visibility": true},
			Memory: service.NewMemory{Visibility: to}})
		if col == "system" {
			return outcome(err), nil
		}
		want := "agent-" + w.id(w.m.SeedAgent(col)) + "-" + to
		switch {
		case err == nil && (e.GroupID != want || w.statusIn(want, id) != graph.StatusQueued):
			return "moved wrongly, to " + e.GroupID, nil
		case err != nil && w.status(col, id) == "gone":
			return outcome(err) + ", but the memory left " + col, nil
		}
		return outcome(err), nil

	case "list":
		q := service.ListQuery{AgentID: agent, Space: visibility, Page: graph.PageRequest{Limit: 100}}
		if team != "" {
			q.Space = "team:" + team
		}
		var showed []shown
		for {
			page, err := w.svc.List(w.ctx, c, q)
			if err != nil {
				return outcome(err), showed
			}
			for _, e := range page.Episodes {
				showed = append(showed, shown{"memory", e.UUID, e.GroupID})
				if e.UUID == w.seeds[col] {
					return "allow", showed
				}
			}
			if q.Page.Cursor = page.NextCursor; !page.HasMore {
				return "absent", showed // answered, without the seed
			}
		}

	case "search":
		q := service.SearchQuery{Query: w.tokens[col], AgentID: agent, Limit: 100}
		switch {
		case team != "":
			q.AgentID, q.Scopes = own, []string{"team:" + team}
		case agent == "":
			q.AgentID, q.Scopes = own, []string{"global"}
		}
		res, err := w.svc.Search(w.ctx, c, q)
		if err != nil {
			return outcome(err), nil
		}
		var showed []shown
		found := false
		for _, h := range res.Episodes {
			showed = append(showed, shown{"memory", h.Episode.UUID, h.Episode.GroupID})
			found = found || h.Episode.UUID == w.seeds[col]
		}
		for _, h := range res.Facts {
			showed = append(showed, shown{"fact", h.Fact.UUID, h.Fact.GroupID})
		}
		for _, h := range res.Entities {
			showed = append(showed, shown{"entity", h.Entity.UUID, h.Entity.GroupID})
		}
		if found {
			return "found", showed
		}
		return "absent", showed

	case "context":
		q := service.ContextQuery{Query: w.tokens[col], AgentID: agent, MaxTokens: service.MaxContextTokens}
		switch {
		case team != "":
			q.AgentID, q.Scopes = own, []string{"team:" + team}
		case agent == "":
			q.AgentID, q.Scopes = own, []string{"global"}
		}
		tc, err := w.svc.Context(w.ctx, c, q)
		if err != nil {
			return outcome(err), nil
		}
		// What the block drew on, the principal reads by id now (the block names no
		// group_id to check later).
		for _, id := range tc.Episodes {
			if _, err := w.svc.Get(w.ctx, c, id); err != nil && !gone(w.t, id) {
				return "the context drew on memory " + id + ", which reading answers " + err.Error(), nil
			}
		}
		for _, id := range tc.Facts {
			if _, err := w.svc.GetFact(w.ctx, c, id); err != nil {
				return "the context drew on fact " + id + ", which reading answers " + err.Error(), nil
			}
		}
		for _, id := range tc.Entities {
			if _, err := w.svc.GetEntity(w.ctx, c, id); err != nil {
				return "the context drew on entity " + id + ", which reading answers " + err.Error(), nil
			}
		}
		if !slices.Contains(tc.Episodes, w.seeds[col]) {
			return "absent", nil
		}
		if !strings.Contains(tc.Text, w.tokens[col]) {
			return "found, but its words are not in the text", nil
		}
		return "found", nil

	case "delete":
		id := w.seeds[col]
		if col != "system" {
			id = w.seed(col, "A memory of "+col+" to be deleted.")
		}
		err := w.svc.Delete(w.ctx, c, id)
		if col == "system" {
			return outcome(err), nil
		}
		switch after := w.status(col, id); {
		case err == nil && after != "gone":
			return "deleted, but the memory is still there: " + after, nil
		case err != nil && after == "gone":
			return outcome(err) + ", but the memory is gone", nil
		}
		return outcome(err), nil

	case "resolve_conflict":
		id := w.seeds[col] // system: an audit event's id
		if col != "system" {
			id = neo4jtest.SeedConflict(w.t, w.groupID(col), "Matrix")
		}
		hit, err := w.svc.ResolveConflict(w.ctx, c, id, graph.KeepBoth)
		if err == nil && (hit.Conflict.UUID != id || hit.Conflict.Keep != graph.KeepBoth || len(hit.Old.Fact.Conflicts) != 0) {
			return fmt.Sprintf("resolved wrongly: %+v", hit.Conflict), nil
		}
		return outcome(err), nil

	case "retry":
		id := w.failed[col]
		e, err := w.svc.Retry(w.ctx, c, id)
		if col == "system" {
			return outcome(err), nil
		}
		after := w.status(col, id)
		switch {
		case err == nil && (e.UUID != id || after != graph.StatusQueued):
			return fmt.Sprintf("retried, but the memory is %s (answered %s)", after, e.UUID), nil
		case err == nil:
			w.fail(col, id) // failed again for the next cell
		case after != graph.StatusFailed:
			return outcome(err) + ", but the memory is now " + after, nil
		}
		return outcome(err), nil

	case "promote", "promote_team":
		target, group := "global", "global"
		if cell.Operation == "promote_team" {
			target, group = "team:"+w.id(w.m.PromoteToTeam), "team-"+w.id(w.m.PromoteToTeam)
		}
		e, err := w.svc.Promote(w.ctx, c, w.seeds[col], target)
		switch {
		case err != nil:
			return outcome(err), nil
		case e.GroupID != group || e.PromotedFrom != w.seeds[col] || e.PromotedBy != c.P.ID:
			return fmt.Sprintf("promoted wrongly: %s from %s by %s", e.GroupID, e.PromotedFrom, e.PromotedBy), nil
		}
		if _, err := w.svc.Get(w.ctx, c, e.UUID); err != nil {
			return "promoted, but the copy cannot be read: " + outcome(err), nil
		}
		return "allow", nil

	case "subscribe":
		h, err := w.svc.CreateWebhook(w.ctx, c, w.webhookInput(cell.Principal, col))
		if err != nil {
			return outcome(err), nil
		}
		w.hooks[cell.Principal+" "+col] = h
		return "allow", nil

	case "webhook_event":
		h, ok := w.hooks[cell.Principal+" "+col]
		if !ok {
			// Not subscribed: the refusal again, which a request would meet.
			_, err := w.svc.CreateWebhook(w.ctx, c, w.webhookInput(cell.Principal, col))
			return outcome(err), nil
		}
		// The event the seed's next change would put in the outbox, decided as the
		// deliverer decides it when it sends it.
		d := &graph.Delivery{EventID: "matrix", Kind: graph.EventMemoryUpdated, GroupID: w.groupID(col), Subject: w.seeds[col]}
		if col == "system" {
			d.Kind, d.GroupID = graph.EventAccessDenied, "system"
		}
		aud, err := w.svc.WebhookAudience(w.ctx, h, d)
		switch {
		case err != nil:
			return outcome(err), nil
		case aud.Sees && aud.Content != nil && col != "system":
			return "content shown to a webhook that did not ask", nil
		case aud.Sees:
			return "received", nil
		}
		return "dropped", nil

	case "versions_rule":
		id := w.ruleKept[col]
		e, page, err := w.svc.Versions(w.ctx, c, id, graph.PageRequest{Limit: 100})
		if err != nil {
			return outcome(err), nil
		}
		matched := strings.Contains(e.Content, w.secret)
		for _, v := range page.Versions {
			matched = matched || strings.Contains(v.Memory.Content, w.secret)
		}
		switch {
		case e.UUID != id || e.Content != rewritten(col):
			return fmt.Sprintf("answered with %s: %q", e.UUID, e.Content), nil
		case col != "global" && len(page.Versions) == 0:
			return "answered without its earlier versions", nil
		case matched:
			return "matched", nil
		}
		return "allow", nil
	}
	return "unknown operation " + cell.Operation, nil
}

// rewritten is the text the memory of versions_rule in column says once its owner
// rewrote it.
func rewritten(column string) string { return "Her birthday is in May (" + column + ")." }

// keepByRule writes, as the writer of column, a memory that the visibility rule keeps
// in the writing agent's private space (written to public, or to the column's team),
// rewrites it without the number, and moves it to column's space (global: promotes
// it; private: it stays), as versions_rule says; it returns the memory's id there.
func (w *world) keepByRule(column string) string {
	w.t.Helper()
	c, own := w.writer(column)
	agent, visibility, team := w.space(column)
	if agent == "" {
		agent = own
	}
	first := service.NewMemory{AgentID: agent, Visibility: "public", Text: "Her SSN is " + w.secret + "."}
	if team != "" {
		first.Visibility, first.Team = "team", team
	}
	e := w.mustAdd(c, first)
	if e.GroupID != "agent-"+agent+"-private" || e.VisibilityRule != "ssn" {
		w.t.Fatalf("the rule did not keep the memory for %s private: it is in %s (rule %q)", column, e.GroupID, e.VisibilityRule)
	}
	if _, err := w.svc.Update(w.ctx, c, e.UUID, service.Patch{Given: map[string]bool{"messages": true},
		Memory: service.NewMemory{Text: rewritten(column)}}); err != nil {
		w.t.Fatalf("rewriting the rule-kept memory for %s: %v", column, err)
	}
	switch visibility {
	case "private":
		return e.UUID
	case "global":
		cp, err := w.svc.Promote(w.ctx, c, e.UUID, "global")
		if err != nil {
			w.t.Fatalf("promoting the rewritten memory: %v", err)
		}
		return cp.UUID
	}
	moved, err := w.svc.Update(w.ctx, c, e.UUID, service.Patch{Given: map[string]bool{"visibility": true, "team": true},
		Memory: service.NewMemory{Visibility: visibility, Team: team}})
	if err != nil || moved.GroupID != w.groupID(column) {
		w.t.Fatalf("moving the rewritten memory to %s: %v", column, err)
	}
	return e.UUID
}

// episode reads a memory of group from the store, past the Authorizer; nil when it is
// not there.
func (w *world) episode(group, id string) *graph.Episode {
	w.t.Helper()
	e, err := w.db.GetEpisode(w.ctx, id, graph.Visible{GroupIDs: []string{group}})
	if graph.ErrorCode(err) == graph.ENOTFOUND {
		return nil
	} else if err != nil {
		w.t.Fatal(err)
	}
	return e
}

// promoteCopy promotes the copy_source seed into the space of column (a column of
// Copies) as the owner of the column's seed writer, and returns the copy's id.
func (w *world) promoteCopy(column string) string {
	w.t.Helper()
	c, _ := w.writer(column)
	target := "global"
	if _, _, team := w.space(column); team != "" {
		target = "team:" + team
	}
	e, err := w.svc.Promote(w.ctx, c, w.seeds[w.m.CopySource], target)
	if err != nil {
		w.t.Fatalf("promoting a copy to %s: %v", column, err)
	}
	if e.GroupID != w.groupID(column) || e.AgentID != w.id(w.m.SeedAgent(w.m.CopySource)) || e.ContentAgent != "" {
		w.t.Fatalf("a copy promoted to %s: %s of agent %s, content agent %q", column, e.GroupID, e.AgentID, e.ContentAgent)
	}
	return e.UUID
}

// runCopy performs a copy operation: copy_update rewrites the column's copy,
// copy_delete deletes a fresh copy, copy_move moves the column's copy (which the
// copy_update cells rewrote) to its agent's private space. The copy stays its
// promoter's whoever rewrites it (content agent ""), and a refused change leaves it
// as it was.
func (w *world) runCopy(c service.Call, cell accesstest.Cell) string {
	w.t.Helper()
	col, group := cell.Column, w.groupID(cell.Column)
	if cell.Operation == "copy_delete" {
		id := w.promoteCopy(col)
		err := w.svc.Delete(w.ctx, c, id)
		switch after := w.episode(group, id); {
		case err == nil && after != nil:
			return "deleted, but the copy is still there"
		case err != nil && after == nil:
			return outcome(err) + ", but the copy is gone"
		case w.status(w.m.CopySource, w.seeds[w.m.CopySource]) == "gone":
			return outcome(err) + ", and the original is gone"
		}
		return outcome(err)
	}
	id, ok := w.copies[col]
	if !ok {
		id = w.promoteCopy(col)
		w.copies[col] = id
	}
	before := w.episode(group, id)
	var e *graph.Episode
	var err error
	switch cell.Operation {
	case "copy_update":
		text := "The copy of " + col + " as " + c.P.ID + " rewrote it."
		e, err = w.svc.Update(w.ctx, c, id, service.Patch{Given: map[string]bool{"messages": true},
			Memory: service.NewMemory{Text: text}})
		if err == nil && (e.Content != text || e.GroupID != group) {
			return fmt.Sprintf("rewritten wrongly: %q in %s", e.Content, e.GroupID)
		}
	case "copy_move":
		e, err = w.svc.Update(w.ctx, c, id, service.Patch{Given: map[string]bool{"visibility": true},
			Memory: service.NewMemory{Visibility: "private"}})
		if err == nil {
			return "allow, moved to " + e.GroupID
		}
	}
	after := w.episode(group, id)
	switch {
	case after == nil:
		return outcome(err) + ", but the copy left " + col
	case after.ContentAgent != "":
		return outcome(err) + ", and the copy is now agent " + after.ContentAgent + "'s own"
	case err != nil && (after.Content != before.Content || after.Version != before.Version):
		return outcome(err) + ", but the copy changed"
	}
	return outcome(err)
}

// copyTeam is a team made like one of the world's for a cell that dissolves it: a
// copy of the copy_source seed its writer promoted there and rewrote to say planted,
// and a memory its writer's agent wrote there.
type copyTeam struct {
	name, copy, own, planted string
}

// makeTeam creates a team like the world's team column (its owner and members).
func (w *world) makeTeam(column string) string {
	w.t.Helper()
	w.fresh++
	name, root := w.id(fmt.Sprintf("%s%d", column, w.fresh)), w.admin()
	if err := w.svc.CreateTeam(w.ctx, root, name, w.id(w.m.World.TeamOwner(column))); err != nil {
		w.t.Fatal(err)
	}
	for member, role := range w.m.World.Teams[column] {
		if err := w.svc.SetMember(w.ctx, root, name, w.id(member), graph.Role(role)); err != nil {
			w.t.Fatal(err)
		}
	}
	return name
}

// teamWithCopy makes a copyTeam like the world's team column.
func (w *world) teamWithCopy(column string) copyTeam {
	w.t.Helper()
	ct := copyTeam{name: w.makeTeam(column)}
	writerAgent := w.m.SeedWriters["team_"+column]
	c := w.call(w.m.World.Agents[writerAgent], "trusted")
	cp, err := w.svc.Promote(w.ctx, c, w.seeds[w.m.CopySource], "team:"+ct.name)
	if err != nil {
		w.t.Fatal(err)
	}
	ct.copy, ct.planted = cp.UUID, "planted"+strings.ReplaceAll(ct.name, "-", "")
	if _, err := w.svc.Update(w.ctx, c, ct.copy, service.Patch{Given: map[string]bool{"messages": true},
		Memory: service.NewMemory{Text: "Written into the copy by its promoter: " + ct.planted + "."}}); err != nil {
		w.t.Fatal(err)
	}
	ct.own = w.mustAdd(c, service.NewMemory{AgentID: w.id(writerAgent), Visibility: "team", Team: ct.name,
		Text: "A team memory of the writer's own."}).UUID
	return ct
}

// runCopyDissolve dissolves, as the cell's principal, a team made like the world's
// team of the column (ghost: one that does not exist), holding a rewritten copy and a
// memory of its writer's agent. Dissolved, the team is gone, the memory is back in
// its agent's private space, and the copy is erased with everything it said, never in
// the private space of the agent it was copied from; refused, all is as it was.
func (w *world) runCopyDissolve(cell accesstest.Cell) string {
	w.t.Helper()
	col := cell.Column
	if _, ok := w.m.World.Teams[col]; !ok {
		_, err := w.svc.DissolveTeam(w.ctx, w.principal(cell.Principal), w.id(col), false)
		return outcome(err)
	}
	ct, ok := w.dissolve[col]
	if !ok {
		ct = w.teamWithCopy(col)
		w.dissolve[col] = ct
	}
	c := w.principalWith(cell.Principal, col, ct.name) // resolved once the team exists
	d, err := w.svc.DissolveTeam(w.ctx, c, ct.name, false)
	got := outcome(err)
	_, terr := w.svc.GetTeam(w.ctx, w.admin(), ct.name)
	gone := graph.ErrorCode(terr) == graph.ENOTFOUND
	writer := w.id(w.m.SeedWriters["team_"+col])
	source := "agent-" + w.id(w.m.SeedAgent(w.m.CopySource)) + "-private"
	if err != nil {
		if gone || w.episode("team-"+ct.name, ct.copy) == nil || w.episode("team-"+ct.name, ct.own) == nil {
			return got + ", but the team or its memories are gone"
		}
		return got
	}
	delete(w.dissolve, col) // the next cell dissolves a team of its own
	switch {
	case !gone:
		return "dissolved, but the team is still there"
	case d.Erased != 1 || len(d.Moved) != 1 || d.Moved[writer] != 1:
		return fmt.Sprintf("dissolved wrongly: moved %v, erased %d", d.Moved, d.Erased)
	case w.episode("agent-"+writer+"-private", ct.own) == nil:
		return "dissolved, but the writer's own memory is not back in its private space"
	case w.episode(source, ct.copy) != nil || neo4jtest.Stored(w.t, ct.planted, "team-"+ct.name) != 0:
		return "dissolved, but the copy or what it said is still stored"
	}
	return got
}

// runMoveIntoDissolved moves a private memory of the principal's agent (written by
// the agent's owner) into a team made like the world's team of the column, with the
// principal's request resolved before the team is dissolved (ghost: a team that
// never existed). No memory or version may be left in the dissolved team's space;
// refused, the memory stays where it was.
func (w *world) runMoveIntoDissolved(cell accesstest.Cell) string {
	w.t.Helper()
	p := w.m.Principals[cell.Principal]
	agent := w.id(p.Agent)
	e := w.mustAdd(w.call(w.m.World.Agents[p.Agent], "trusted"), service.NewMemory{AgentID: agent, Visibility: "private",
		Text: "A memory of " + agent + " moved into a dissolved team."})
	team := w.id(cell.Column)
	_, exists := w.m.World.Teams[cell.Column]
	if exists {
		team = w.makeTeam(cell.Column)
	}
	c := w.principalWith(cell.Principal, cell.Column, team) // as the team still is
	if exists {
		if _, err := w.svc.DissolveTeam(w.ctx, w.admin(), team, false); err != nil {
			w.t.Fatal(err)
		}
	}
	moved, err := w.svc.Update(w.ctx, c, e.UUID, service.Patch{Given: map[string]bool{"visibility": true, "team": true},
		Memory: service.NewMemory{Visibility: "team", Team: team}})
	got := outcome(err)
	switch left := neo4jtest.Stored(w.t, "", "team-"+team); {
	case left != 0:
		return fmt.Sprintf("%s, and %d memories or versions are in the space of the team that does not exist", got, left)
	case err == nil:
		return "allow, moved to " + moved.GroupID
	case w.episode("agent-"+agent+"-private", e.UUID) == nil:
		return got + ", but the memory left its private space"
	}
	return got
}

// runAgent performs an agent operation on a fresh agent made like the world's agent of
// the column (its owner, its shares, its delegations, one private memory), or on an
// agent that does not exist when the world has none of that name, and checks what the
// store holds after.
func (w *world) runAgent(cell accesstest.Cell) string {
	w.t.Helper()
	w.fresh++
	agent := w.id(fmt.Sprintf("%s%d", cell.Column, w.fresh))
	grantee, heir := w.id("gina"), w.id("olga")
	owner, exists := w.m.World.Agents[cell.Column]
	var private string
	if exists {
		if _, err := w.svc.CreateAgent(w.ctx, w.admin(), agent, w.id(owner)); err != nil {
			w.t.Fatal(err)
		}
		oc := w.call(owner, "trusted")
		for _, g := range w.m.World.Shares[cell.Column] {
			if err := w.svc.Share(w.ctx, oc, agent, w.id(g), true, nil); err != nil {
				w.t.Fatal(err)
			}
		}
		for _, d := range w.m.World.Delegations[cell.Column] {
			if err := w.svc.Delegate(w.ctx, oc, agent, w.id(d), graph.RoleWriter, nil); err != nil {
				w.t.Fatal(err)
			}
		}
		switch cell.Operation {
		case "unshare":
			if err := w.svc.Share(w.ctx, oc, agent, grantee, true, nil); err != nil {
				w.t.Fatal(err)
			}
		case "undelegate":
			if err := w.svc.Delegate(w.ctx, oc, agent, grantee, graph.RoleWriter, nil); err != nil {
				w.t.Fatal(err)
			}
		}
		private = w.mustAdd(oc, service.NewMemory{AgentID: agent, Visibility: "private", Text: "A private memory of " + agent + "."}).UUID
	}
	// reads reports whether requester can read the private memory.
	reads := func(requester string) bool {
		_, err := w.svc.Get(w.ctx, w.call(requester, "trusted"), private)
		if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
			w.t.Fatal(err)
		}
		return err == nil
	}
	// writes reports whether requester may write a memory to the agent's public space
	// (refused, the refusal is audited under requester, no principal of the matrix).
	writes := func(requester string) bool {
		_, errs := w.svc.Add(w.ctx, w.call(requester, "trusted"), []service.NewMemory{{AgentID: agent, Visibility: "public",
			Text: "A delegate's memory of " + agent + "."}}, "")
		if errs[0] != nil && graph.ErrorCode(errs[0]) != graph.EFORBIDDEN {
			w.t.Fatal(errs[0])
		}
		return errs[0] == nil
	}
	// ownerNow is the agent's owner as the store holds it, "" when it does not exist.
	ownerNow := func() string {
		v, err := w.svc.GetAgent(w.ctx, w.admin(), agent)
		if graph.ErrorCode(err) == graph.ENOTFOUND {
			return ""
		} else if err != nil {
			w.t.Fatal(err)
		}
		return v.OwnerID
	}

	c := w.principal(cell.Principal) // resolved after the agent's creation, as a request then would be
	var err error
	switch cell.Operation {
	case "share":
		err = w.svc.Share(w.ctx, c, agent, grantee, true, nil)
	case "unshare":
		err = w.svc.Share(w.ctx, c, agent, grantee, false, nil)
	case "delegate":
		err = w.svc.Delegate(w.ctx, c, agent, grantee, graph.RoleWriter, nil)
	case "undelegate":
		err = w.svc.Delegate(w.ctx, c, agent, grantee, "", nil)
	case "transfer":
		err = w.svc.TransferOwner(w.ctx, c, agent, heir)
	case "erase":
		_, err = w.svc.DeleteAgent(w.ctx, c, agent)
	case "compact":
		var e *graph.Episode
		since := time.Now().Add(-time.Hour)
		e, err = w.svc.Compact(w.ctx, c, service.CompactQuery{AgentID: agent, Since: &since, MaxTokens: 100})
		if err == nil && (e.GroupID != "agent-"+agent+"-private" || len(e.DerivedFrom) != 1 || e.DerivedFrom[0] != private) {
			return fmt.Sprintf("compacted wrongly: into %s from %v", e.GroupID, e.DerivedFrom)
		}
	case "usage":
		var u graph.Usage
		u, err = w.svc.Usage(w.ctx, c, graph.UsageQuery{AgentID: agent})
		if err == nil && u.Memories != 1 { // its one private memory
			return fmt.Sprintf("summed wrongly: %d memories", u.Memories)
		}
	case "reflect":
		var eps []*graph.Episode
		since := time.Now().Add(-time.Hour)
		eps, err = w.svc.Reflect(w.ctx, c, service.ReflectQuery{AgentID: agent, Since: &since, MaxTokens: 100})
		if err == nil && (len(eps) == 0 || eps[0].GroupID != "agent-"+agent+"-private" || len(eps[0].DerivedFrom) != 1) {
			return fmt.Sprintf("reflected wrongly: %d memories", len(eps))
		}
	}
	got := outcome(err)
	if !exists {
		if ownerNow() != "" {
			return got + ", and now the agent exists"
		}
		return got
	}
	if cell.Operation == "usage" {
		return got // nothing changes
	}
	if cell.Operation == "compact" || cell.Operation == "reflect" {
		if page, lerr := w.db.ListEpisodes(w.ctx, graph.Visible{GroupIDs: []string{"agent-" + agent + "-private"}}, "",
			graph.PageRequest{Limit: 10}); lerr != nil || (err != nil && len(page.Episodes) != 1) {
			return fmt.Sprintf("%s, but the private space holds %d memories (%v)", got, len(page.Episodes), lerr)
		}
		return got
	}
	if cell.Operation == "erase" {
		agentGone, memoryGone := ownerNow() == "", w.statusIn("agent-"+agent+"-private", private) == "gone"
		switch {
		case err == nil && !(agentGone && memoryGone):
			return fmt.Sprintf("erased, but the agent gone %v, its memory gone %v", agentGone, memoryGone)
		case err != nil && (agentGone || memoryGone):
			return fmt.Sprintf("%s, but the agent gone %v, its memory gone %v", got, agentGone, memoryGone)
		}
		return got
	}
	changed, what := false, ""
	switch cell.Operation {
	case "share":
		changed, what = reads("gina"), "the grantee reads its private memory"
	case "unshare":
		changed, what = !reads("gina"), "the grantee no longer reads its private memory"
	case "delegate":
		changed, what = writes("gina"), "the grantee writes its memories"
	case "undelegate":
		changed, what = !writes("gina"), "the grantee no longer writes its memories"
	case "transfer":
		now := ownerNow()
		changed, what = now != w.id(owner), "its owner is "+now
		if now == heir && (!reads("olga") || reads(owner)) {
			return got + ", the owner changed, but the private memory did not follow"
		}
		if now == heir { // asked of resolution: a refused write would be one more 403 of a principal of the matrix
			for _, d := range w.m.World.Delegations[cell.Column] {
				if w.call(d, "trusted").P.Delegated[agent] {
					return got + ", the owner changed, but the old owner's delegate " + d + " still holds its delegation"
				}
			}
		}
	}
	switch {
	case err == nil && !changed:
		return "allow, but nothing changed"
	case err != nil && changed:
		return got + ", but " + what
	}
	return got
}

// erased reports whether a memory is gone from its space altogether: the global space
// is shared, and a test running beside this one erases its memories there when it
// ends, after this one listed them.
func (w *world) erased(id, group string) bool {
	_, err := w.db.GetEpisode(w.ctx, id, graph.Visible{GroupIDs: []string{group}})
	return graph.ErrorCode(err) == graph.ENOTFOUND
}

// runSetTypes sets, as the cell's principal, the types of the world's agent
// (set_types) or team (set_team_types) of the column itself: all of the deployment's
// in an order of the cell's own (accesstest.NextTypes). Allowed, the agent or team
// stores that order; refused, what it stored before; ghost, none is made.
func (w *world) runSetTypes(c service.Call, cell accesstest.Cell) string {
	w.t.Helper()
	label, name := "Agent", w.id(cell.Column)
	if cell.Operation == "set_team_types" {
		label = "Team"
	}
	before, _ := neo4jtest.SpaceTypes(w.t, label, name)
	sent := accesstest.NextTypes(before)
	var err error
	if label == "Agent" {
		err = w.svc.SetAgentTypes(w.ctx, c, name, sent)
	} else {
		err = w.svc.SetTeamTypes(w.ctx, c, name, sent)
	}
	after, found := neo4jtest.SpaceTypes(w.t, label, name)
	return accesstest.TypesOutcome(outcome(err), before, sent, after, found)
}
