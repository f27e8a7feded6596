package service

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// NewMemory is one memory to add, as a client described it. It has no group_id,
// owner or status: where it lands is decided here.
type NewMemory struct {
	AgentID           string
	Visibility        string // private, public, team, shared, global; empty: the configured default
	Team              string
	Text              string          // a plain text episode
	Messages          []graph.Message // or a conversation
	Source            string          // message, text, json; empty: from the content
	SourceDescription string
	Metadata          map[string]any
	ReferenceTime     *time.Time
	Tags              []string
	Priority          string
	ExpiresAt         *time.Time
	Confidence        *float64
	// NoExtraction stores it as given, searchable as a memory, done at once: no
	// entities, no facts, no LLM call.
	NoExtraction bool
	// ExtractionInstructions are the writer's words to the model for this memory's
	// extraction alone (graph.MaxExtractionInstructions characters at most).
	ExtractionInstructions string
}

// Added is the outcome of one add.
type Added struct {
	Episode  *graph.Episode
	Confined bool // stored in the agent's private space instead of the team asked for
	Replayed bool
}

const (
	maxTags          = 32
	maxTagBytes      = 64
	maxMessages      = 1000
	maxMetadataBytes = 16 << 10
	maxNameBytes     = 128
)

// validate checks every field and returns the space named (before authorization);
// shared is the space of c's requester.
func (s *Service) validate(c Call, m *NewMemory) (graph.Space, error) {
	if err := graph.CheckID("agent_id", m.AgentID); err != nil {
		return graph.Space{}, err
	}
	var space graph.Space
	vis := m.Visibility
	if vis == "" {
		vis = s.Limits.DefaultVisibility
	}
	switch vis {
	case "private":
		space = c.P.Org.Private(m.AgentID)
	case "public":
		space = c.P.Org.Public(m.AgentID)
	case "global":
		space = c.P.Org.Global()
	case "shared":
		space = c.P.Org.Shared(c.P.ID)
	case "team":
		if err := graph.CheckID("team", m.Team); err != nil {
			return graph.Space{}, err
		}
		space = c.P.Org.Team(m.Team)
	default:
		return graph.Space{}, graph.Errorf(graph.EINVALID, "visibility must be private, public, team, shared or global")
	}
	if vis != "team" && m.Team != "" {
		return graph.Space{}, graph.Errorf(graph.EINVALID, "team is only for visibility team")
	}

	switch {
	case m.Text != "" && m.Messages != nil:
		return graph.Space{}, graph.Errorf(graph.EINVALID, "messages is either a string or a list, not both")
	case strings.TrimSpace(m.Text) == "" && len(m.Messages) == 0:
		return graph.Space{}, graph.Errorf(graph.EINVALID, "messages must not be empty")
	case len(m.Messages) > maxMessages:
		return graph.Space{}, graph.Errorf(graph.EINVALID, "messages has %d entries; at most %d", len(m.Messages), maxMessages)
	}
	for i, msg := range m.Messages {
		if strings.TrimSpace(msg.Content) == "" {
			return graph.Space{}, graph.Errorf(graph.EINVALID, "messages[%d].content must not be empty", i)
		}
		if msg.Role == "" || len(msg.Role) > 32 || strings.ContainsAny(msg.Role, "\n\r:") {
			return graph.Space{}, graph.Errorf(graph.EINVALID, "messages[%d].role must be a short word such as user or assistant", i)
		}
		if len(msg.Name) > maxNameBytes || strings.ContainsAny(msg.Name, "\n\r") {
			return graph.Space{}, graph.Errorf(graph.EINVALID, "messages[%d].name is too long or spans lines", i)
		}
	}
	switch m.Source {
	case "":
	case graph.SourceMessage, graph.SourceText:
	case graph.SourceJSON:
		if m.Messages != nil || !json.Valid([]byte(m.Text)) {
			return graph.Space{}, graph.Errorf(graph.EINVALID, "source json needs messages to be a string holding JSON")
		}
	default:
		return graph.Space{}, graph.Errorf(graph.EINVALID, "source must be message, text or json")
	}
	if n := utf8.RuneCountInString(m.ExtractionInstructions); n > graph.MaxExtractionInstructions || !utf8.ValidString(m.ExtractionInstructions) ||
		strings.ContainsRune(m.ExtractionInstructions, 0) {
		return graph.Space{}, graph.Errorf(graph.EINVALID, "extraction_instructions must be text of at most %d characters", graph.MaxExtractionInstructions)
	}
	if len(m.SourceDescription) > 512 {
		return graph.Space{}, graph.Errorf(graph.EINVALID, "source_description is longer than 512 bytes")
	}
	if len(m.Tags) > maxTags {
		return graph.Space{}, graph.Errorf(graph.EINVALID, "at most %d tags", maxTags)
	}
	for i, t := range m.Tags {
		if t == "" || len(t) > maxTagBytes || !utf8.ValidString(t) || strings.ContainsAny(t, "\n\r\x00") {
			return graph.Space{}, graph.Errorf(graph.EINVALID, "tags[%d] must be 1 to %d bytes on one line", i, maxTagBytes)
		}
	}
	switch m.Priority {
	case "", "low", "medium", "high":
	default:
		return graph.Space{}, graph.Errorf(graph.EINVALID, "priority must be low, medium or high")
	}
	if m.Confidence != nil && (*m.Confidence < 0 || *m.Confidence > 1 || *m.Confidence != *m.Confidence) {
		return graph.Space{}, graph.Errorf(graph.EINVALID, "confidence must be between 0 and 1")
	}
	if m.ExpiresAt != nil && !m.ExpiresAt.After(s.Now()) {
		return graph.Space{}, graph.Errorf(graph.EINVALID, "expires_at must be in the future")
	}
	if m.Metadata != nil {
		b, err := json.Marshal(m.Metadata)
		if err != nil || len(b) > maxMetadataBytes {
			return graph.Space{}, graph.Errorf(graph.EINVALID, "metadata must be a JSON object of at most %d bytes", maxMetadataBytes)
		}
	}
	if n := len(renderContent(m)); n > s.Limits.MaxContentBytes {
		return graph.Space{}, graph.Errorf(graph.ETOOLARGE, "content is %d bytes; at most %d", n, s.Limits.MaxContentBytes)
	}
	if !utf8.ValidString(renderContent(m)) {
		return graph.Space{}, graph.Errorf(graph.EINVALID, "content must be valid UTF-8")
	}
	return space, nil
}

// renderContent is the episode text: the string, or the messages one per line as
// Graphiti renders conversation episodes.
func renderContent(m *NewMemory) string {
	if m.Messages == nil {
		return m.Text
	}
	var b strings.Builder
	for _, msg := range m.Messages {
		who := msg.Role
		if msg.Name != "" {
			who = msg.Name + " (" + msg.Role + ")"
		}
		fmt.Fprintf(&b, "%s: %s\n", who, msg.Content)
	}
	return b.String()
}

// MaxIdempotencyKey is the longest idempotency key a write takes, in bytes.
const MaxIdempotencyKey = 255

// CheckWrite refuses a write of n memories that the service never takes, whatever
// they hold: none, more than memory.batch_max_items, or an idempotency key over
// MaxIdempotencyKey bytes. Add applies it to every write; a handler calls it before it
// reads a batch's items, so that a batch over the limits is refused whole.
func (s *Service) CheckWrite(n int, idemKey string) error {
	switch {
	case n == 0:
		return graph.Errorf(graph.EINVALID, "items must not be empty")
	case s.Limits.BatchMaxItems > 0 && n > s.Limits.BatchMaxItems:
		return graph.Errorf(graph.EINVALID, "a batch holds at most %d items; got %d", s.Limits.BatchMaxItems, n)
	case len(idemKey) > MaxIdempotencyKey:
		return graph.Errorf(graph.EINVALID, "the idempotency key is longer than %d bytes", MaxIdempotencyKey)
	}
	return nil
}

// Add stores memories: each is validated and authorized on its own, so one item's
// failure leaves the others intact; then the batch's memories are stored in one
// call, in the batch's order (created a nanosecond apart, committed no later than the
// next one), so a space extracts them in that order. idemKey (may be empty) makes
// retries safe; in a batch each item gets its own key derived from it.
func (s *Service) Add(ctx context.Context, c Call, items []NewMemory, idemKey string) ([]Added, []error) {
	ctx, end := s.span(ctx, "Add", c)
	defer end(nil)
	out, errs := make([]Added, len(items)), make([]error, len(items))
	if err := s.CheckWrite(len(items), idemKey); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	eps := make([]*graph.Episode, len(items))
	now := s.Now().UTC()
	var wg sync.WaitGroup
	for i := range items {
		key := idemKey
		if key != "" && len(items) > 1 {
			key = fmt.Sprintf("%s#%d", idemKey, i)
		}
		wg.Go(func() {
			eps[i], out[i].Confined, errs[i] = s.prepare(ctx, c, &items[i], key, now.Add(time.Duration(i)))
		})
	}
	wg.Wait()
	var write []int // the items to store, in order
	for i, e := range eps {
		if e != nil {
			write = append(write, i)
		}
	}
	if len(write) == 0 {
		return out, errs
	}
	batch := make([]*graph.Episode, len(write))
	queuedBy := traceParent(ctx) // the ingestion's span links to this request's
	for k, i := range write {
		batch[k] = eps[i]
		if eps[i].Status == graph.StatusQueued {
			eps[i].TraceParent = queuedBy
		}
	}
	for k, res := range s.Mem.CreateEpisodes(ctx, batch) {
		i := write[k]
		switch {
		case graph.ErrorCode(res.Err) == graph.EQUOTA:
			errs[i] = s.quotaExceeded(ctx, c, eps[i], res.Err)
		case res.Err != nil:
			errs[i] = res.Err
		default:
			out[i].Episode, out[i].Replayed = res.Episode, res.Replayed
		}
	}
	return out, errs
}

// prepare validates and authorizes one memory and returns it as it is to be stored,
// created at created, and whether its space was confined.
func (s *Service) prepare(ctx context.Context, c Call, m *NewMemory, idemKey string, created time.Time) (*graph.Episode, bool, error) {
	space, err := s.validate(c, m)
	if err != nil {
		return nil, false, err
	}
	// An agent the requester owns exists as of its principal (the write itself checks
	// it still does); any other is looked up, so that one that does not exist is 404.
	if !c.P.Owns[m.AgentID] {
		if _, err := s.Dir.GetAgent(ctx, c.P.Org, m.AgentID); err != nil {
			return nil, false, err
		}
	}
	content := renderContent(m)
	rule := s.classify(space, m.AgentID, graph.Texts(m.Source, m.SourceDescription, content))
	if rule != "" {
		space = c.P.Org.Private(m.AgentID)
	}
	d := s.Auth.Write(c.P, m.AgentID, space)
	if d.Effect == access.Deny {
		return nil, false, s.deny(ctx, c, m.AgentID, space.GroupID(), d.Reason)
	}
	if s.Limits.RefuseCredentials {
		if err := refuseCredentials(m, content); err != nil {
			return nil, false, err
		}
	}
	e := s.newEpisode(c, m, d.Space, content, created)
	s.embedUnextracted(ctx, e)
	e.VisibilityRule = rule
	if idemKey != "" {
		e.IdempotencyKey = idempotencyKey(c, idemKey)
		e.RequestHash = requestHash(m)
	}
	if d.Space.Kind == graph.SpacePublic {
		e.PublicQuota = s.Limits.PublicWritesPerDay
	}
	return e, d.Effect == access.Confine, nil
}

// quotaExceeded records a write e refused by the public-write quota and returns the
// refusal err; EUNAVAILABLE when it cannot be recorded.
func (s *Service) quotaExceeded(ctx context.Context, c Call, e *graph.Episode, err error) error {
	reason := fmt.Sprintf("over %d public writes a day", e.PublicQuota)
	if rerr := s.Audit.RecordAudit(ctx, s.event(c, graph.AuditQuotaExceeded, e.AgentID, e.GroupID, reason)); rerr != nil {
		return graph.Wrap(graph.EUNAVAILABLE, rerr, "the write was refused by its quota but the refusal could not be recorded; retry later")
	}
	return err
}

// classify returns the name of the first visibility rule whose pattern matches
// content bound for a public, team or global space, or "": such a write goes to the
// agent's private space, and such a copy is not made. Rules never widen, so private
// writes are left alone.
func (s *Service) classify(space graph.Space, agent string, texts []string) string {
	if space.Kind != graph.SpacePublic && space.Kind != graph.SpaceTeam && space.Kind != graph.SpaceGlobal {
		return ""
	}
	for _, r := range s.Limits.VisibilityRules {
		for _, text := range texts {
			if r.Pattern.MatchString(text) {
				return r.Name
			}
		}
	}
	return ""
}

// refuseCredentials checks every string a memory stores: its content, metadata, tags
// and source description.
func refuseCredentials(m *NewMemory, content string) error {
	for _, f := range []struct{ name, text string }{
		{"content", strings.Join(graph.Texts(m.Source, m.SourceDescription, content), "\n")}, {"metadata", metadataText(m.Metadata)},
		{"tags", strings.Join(m.Tags, "\n")}, {"source_description", m.SourceDescription},
		{"extraction_instructions", m.ExtractionInstructions},
	} {
		if reason := access.FindSecret(f.text); reason != "" {
			return graph.Errorf(graph.EUNPROCESSABLE, "refused: the %s carries %s; memgate never stores credentials", f.name, reason)
		}
	}
	return nil
}

// newEpisode is the memory m as stored, created at now.
func (s *Service) newEpisode(c Call, m *NewMemory, space graph.Space, content string, now time.Time) *graph.Episode {
	validAt := now
	if m.ReferenceTime != nil {
		validAt = m.ReferenceTime.UTC()
	}
	source := m.Source
	if source == "" {
		source = graph.SourceText
		if m.Messages != nil {
			source = graph.SourceMessage
		}
	}
	sum := sha256.Sum256([]byte(content))
	status := graph.StatusQueued
	if m.NoExtraction {
		status = graph.StatusDone
	}
	return &graph.Episode{
		UUID: uuid.NewString(), Name: episodeName(content), GroupID: space.GroupID(), AgentID: m.AgentID,
		Source: source, SourceDescription: m.SourceDescription, Content: content, Messages: m.Messages,
		CreatedAt: now, ValidAt: validAt, Status: status, RequesterID: c.P.ID,
		HostKey: c.P.Host.Name, Metadata: m.Metadata, Tags: m.Tags, Priority: m.Priority,
		ExpiresAt: m.ExpiresAt, Confidence: m.Confidence, ContentHash: hex.EncodeToString(sum[:]), Version: 1,
		ContentAgent: contentAgent(c, m.AgentID), AuthorizedAt: c.ResolvedAt, Unextracted: m.NoExtraction,
		ExtractionInstructions: m.ExtractionInstructions,
	}
}

// embedUnextracted embeds the content of a memory stored without extraction, which no
// extraction will embed, so that search ranks it by meaning as it ranks the others.
// Without an embedder, or when it fails (logged), the memory is ranked by its words.
func (s *Service) embedUnextracted(ctx context.Context, e *graph.Episode) {
	if !e.Unextracted || s.Embedder == nil {
		return
	}
	v, err := s.Embedder.Embed(ctx, []string{graph.CleanText(e.Content, graph.EmbedTextBytes)})
	if err != nil || len(v) != 1 {
		s.Log.WarnContext(ctx, "a memory stored without extraction is not embedded: search ranks it by its words", "err", err)
		return
	}
	e.Embedding = v[0]
}

// contentAgent is the content_agent of what c writes for agent: the agent, when c
// owns it; "" when c writes it by delegation (its words are not its agent's owner's,
// so they never move with the agent's own).
func contentAgent(c Call, agent string) string {
	if c.P.Owns[agent] {
		return agent
	}
	return ""
}

// episodeName is the first line of the content, shortened: Graphiti's episode name.
func episodeName(content string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	if len(line) > 80 {
		cut := 80
		for !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

func metadataText(m map[string]any) string {
	if m == nil {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// idempotencyKey is what a memory's Idempotency-Key is stored as: scoped to the host
// key and the requester, and for a named organization to it too (a platform host acts
// in several, whose requester ids may be the same). The implicit organization's keys
// are hashed as before organizations existed, so a retry across the upgrade replays.
func idempotencyKey(c Call, key string) string {
	if c.P.Org == graph.DefaultOrg {
		return hashOf(c.P.Host.Name, c.P.ID, key)
	}
	return hashOf(c.P.Host.Name, c.P.ID, key, "org", string(c.P.Org))
}

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// requestHash identifies the content of a request, to tell a replay from the reuse of
// a key for something else.
func requestHash(m *NewMemory) string {
	b, _ := json.Marshal(m)
	return hashOf(string(b))
}

// Get returns a memory the caller can see; ENOTFOUND otherwise.
func (s *Service) Get(ctx context.Context, c Call, id string) (_ *graph.Episode, err error) {
	ctx, end := s.span(ctx, "Get", c)
	defer func() { end(err) }()
	if err := checkUUID(id); err != nil {
		return nil, err
	}
	e, err := s.Mem.GetEpisode(ctx, id, s.Auth.Visible(c.P))
	if err != nil {
		return nil, err
	}
	s.provenance(c, e)
	return e, nil
}

// provenance hides where a copy was promoted from (the original's id) from a caller
// who cannot see the original: its id would tell that it exists. A copy that does not
// record the original's space hides it from everyone. The memories a compaction or
// reflection was written from (derived_from) lay in its agent's spaces, some perhaps
// private: only those who may change it see them, and of its delegates only those who
// read the agent's private space. Who wrote and who last changed a memory
// (written_by, updated_by) is shown, as who replaced a version is, only to those who
// may change it and to whoever it was.
func (s *Service) provenance(c Call, eps ...*graph.Episode) {
	vis := s.Auth.Visible(c.P)
	for _, e := range eps {
		if e.PromotedFrom != "" && (e.PromotedFromGroup == "" || !vis.Contains(e.PromotedFromGroup)) {
			e.PromotedFrom = ""
		}
		writer := s.Auth.Modify(c.P, e.Space()).Effect == access.Allow
		if len(e.DerivedFrom) > 0 && (!writer || (c.P.Delegated[e.AgentID] && !vis.Contains(c.P.Org.Private(e.AgentID).GroupID()))) {
			e.DerivedFrom = nil
		}
		if !writer && e.RequesterID != c.P.ID {
			e.RequesterID = ""
		}
		if !writer && e.UpdatedBy != c.P.ID {
			e.UpdatedBy = ""
		}
	}
}

func checkUUID(id string) error {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return graph.Errorf(graph.ENOTFOUND, "memory not found")
	}
	return nil
}

// ListQuery selects a list of memories.
type ListQuery struct {
	AgentID string
	Space   string // private, public, team:<name>, shared, global; empty: all of the agent's visible spaces
	Page    graph.PageRequest
}

// List lists the memories of one space, or of one agent's visible spaces. A space
// outside the caller's visible set answers ENOTFOUND, as if it did not exist.
func (s *Service) List(ctx context.Context, c Call, q ListQuery) (_ graph.EpisodePage, err error) {
	ctx, end := s.span(ctx, "List", c)
	defer func() { end(err) }()
	page, err := s.list(ctx, c, q)
	if err != nil {
		return graph.EpisodePage{}, err
	}
	s.provenance(c, page.Episodes...)
	return page, nil
}

func (s *Service) list(ctx context.Context, c Call, q ListQuery) (graph.EpisodePage, error) {
	limit, err := s.pageSize(q.Page.Limit)
	if err != nil {
		return graph.EpisodePage{}, err
	}
	q.Page.Limit = limit
	if q.AgentID != "" {
		if err := graph.CheckID("agent_id", q.AgentID); err != nil {
			return graph.EpisodePage{}, err
		}
		s.noteExpiredShare(ctx, c, q.AgentID)
		// An agent that does not exist in the requester's organization is 404, as a
		// search about it is, whatever space is asked.
		if !c.P.Owns[q.AgentID] {
			if _, err := s.Dir.GetAgent(ctx, c.P.Org, q.AgentID); err != nil {
				return graph.EpisodePage{}, err
			}
		}
	}
	if q.Space == "" {
		if q.AgentID == "" {
			return graph.EpisodePage{}, graph.Errorf(graph.EINVALID, "agent_id or space is required")
		}
		return s.Mem.ListEpisodes(ctx, s.agentView(c, q.AgentID), q.AgentID, q.Page)
	}
	space, err := c.P.Org.ParseSpaceName(q.AgentID, c.P.ID, q.Space)
	if err != nil {
		return graph.EpisodePage{}, err
	}
	agentFilter := ""
	switch space.Kind {
	case graph.SpacePrivate, graph.SpacePublic:
		if q.AgentID == "" {
			return graph.EpisodePage{}, graph.Errorf(graph.EINVALID, "agent_id is required for space %s", q.Space)
		}
	case graph.SpaceShared: // every agent of the owner's memories: the space is theirs in common
	default:
		agentFilter = q.AgentID
	}
	if !s.Auth.Visible(c.P).Contains(space.GroupID()) {
		return graph.EpisodePage{}, graph.Errorf(graph.ENOTFOUND, "space not found")
	}
	return s.Mem.ListEpisodes(ctx, graph.Visible{GroupIDs: []string{space.GroupID()}}, agentFilter, q.Page)
}

// agentView is every space c sees for agent: its public space, its private one where
// c may read it, c's teams and global. A list about the agent shows what the agent
// wrote in them.
func (s *Service) agentView(c Call, agent string) graph.Visible {
	scopes := []graph.Space{c.P.Org.Global()}
	for team := range c.P.Teams {
		scopes = append(scopes, c.P.Org.Team(team))
	}
	return s.Auth.VisibleForAgent(c.P, agent, scopes)
}

// Delete removes a memory and what only it supports. ENOTFOUND when the caller cannot
// see it; an audited EFORBIDDEN when it can see but not change it.
func (s *Service) Delete(ctx context.Context, c Call, id string) (err error) {
	ctx, end := s.span(ctx, "Delete", c)
	defer func() { end(err) }()
	if err := checkUUID(id); err != nil {
		return err
	}
	err = s.Mem.DeleteEpisode(ctx, id, s.Auth.Visible(c.P), func(e *graph.Episode) (*graph.AuditEvent, error) {
		if d := s.Auth.Modify(c.P, e.Space()); d.Effect != access.Allow {
			return nil, forbid(e.UUID, e.GroupID, d.Reason)
		}
		return s.event(c, graph.AuditDeleted, e.UUID, e.GroupID, ""), nil
	})
	return s.recordIfForbidden(ctx, c, err)
}

// Promote copies a memory the caller can see into a team space or the global space,
// with provenance; the copy is queued for extraction in its new space.
func (s *Service) Promote(ctx context.Context, c Call, id, target string) (_ *graph.Episode, err error) {
	ctx, end := s.span(ctx, "Promote", c)
	defer func() { end(err) }()
	if err := checkUUID(id); err != nil {
		return nil, err
	}
	to, err := c.P.Org.ParseSpaceName("", c.P.ID, target)
	if err != nil || (to.Kind != graph.SpaceTeam && to.Kind != graph.SpaceGlobal) {
		return nil, graph.Errorf(graph.EINVALID, "target must be team:<name> or global")
	}
	vis := s.Auth.Visible(c.P)
	// A derived memory's copy out of its agent's private space, where it was written,
	// is judged against its sources too (sourcesAllow): each must be one c may promote
	// there. Out of another space it is not: its owner's move put it there, judged so.
	original, err := s.Mem.GetEpisode(ctx, id, vis)
	if err != nil {
		return nil, err
	}
	var sources *lineage
	if original.GroupID == c.P.Org.Private(original.AgentID).GroupID() {
		l, err := s.sources(ctx, c, original)
		if err != nil {
			return nil, err
		}
		sources = &l
	}
	promotable := func(e *graph.Episode) string {
		if d := s.Auth.Promote(c.P, e.Space(), to); d.Effect != access.Allow {
			return d.Reason
		}
		if rule := s.classify(to, e.AgentID, graph.Texts(e.Source, e.SourceDescription, e.Content)); rule != "" {
			return "its content matches visibility rule " + rule + ", which keeps it out of " + target
		}
		return ""
	}
	copied, err := s.Mem.PromoteEpisode(ctx, id, vis, func(e *graph.Episode) (*graph.Episode, *graph.AuditEvent, error) {
		if d := s.Auth.Promote(c.P, e.Space(), to); d.Effect != access.Allow {
			return nil, nil, forbid(e.UUID, to.GroupID(), d.Reason)
		}
		if e.GroupID == to.GroupID() {
			return nil, nil, graph.Errorf(graph.EINVALID, "the memory is already in %s", target)
		}
		if reason := promotable(e); reason != "" {
			return nil, nil, forbid(e.UUID, to.GroupID(), reason)
		}
		if sources != nil {
			// Out of its agent's private space a memory, and each it was derived from, is
			// copied only in the agent's own words, as it would move (Update): a
			// delegate's, or the agent's former owner's, stays.
			ownWords := func(e *graph.Episode) string {
				if !e.OwnWords(c.P.ID) {
					return notOwnWords(e.UUID, "a promotion out of a private space copies")
				}
				return promotable(e)
			}
			if reason := cmp.Or(ownWords(e), sourcesAllow(e, *sources, ownWords)); reason != "" {
				return nil, nil, forbid(e.UUID, to.GroupID(), reason)
			}
		}
		now := s.Now().UTC()
		cp := *e
		cp.UUID, cp.GroupID, cp.CreatedAt = uuid.NewString(), to.GroupID(), now
		cp.Status, cp.Attempts, cp.LastError = graph.StatusQueued, 0, ""
		if cp.Unextracted {
			cp.Status = graph.StatusDone
		}
		cp.RequesterID, cp.HostKey = c.P.ID, c.P.Host.Name
		cp.PromotedFrom, cp.PromotedFromGroup, cp.PromotedBy, cp.PromotedAt = e.UUID, e.GroupID, c.P.ID, &now
		cp.IdempotencyKey, cp.RequestHash, cp.VisibilityRule = "", "", ""
		// The copy is its promoter's: it never counts as its agent's own words, and
		// what its original was written from is not its own provenance.
		cp.ContentAgent, cp.Version, cp.UpdatedAt, cp.UpdatedBy, cp.DerivedFrom = "", 1, nil, "", nil
		cp.AuthorizedAt = c.ResolvedAt
		cp.TraceParent = ""
		if cp.Status == graph.StatusQueued {
			cp.TraceParent = traceParent(ctx)
		}
		return &cp, s.event(c, graph.AuditPromoted, e.UUID, to.GroupID(), "from "+e.GroupID), nil
	})
	if err != nil {
		return nil, s.recordIfForbidden(ctx, c, err)
	}
	s.provenance(c, copied)
	return copied, nil
}

// Retry puts a failed memory back in the ingestion queue. ENOTFOUND when the caller
// cannot see it; an audited EFORBIDDEN when it may not change it; ECONFLICT when it
// has not failed.
func (s *Service) Retry(ctx context.Context, c Call, id string) (_ *graph.Episode, err error) {
	ctx, end := s.span(ctx, "Retry", c)
	defer func() { end(err) }()
	if err := checkUUID(id); err != nil {
		return nil, err
	}
	vis := s.Auth.Visible(c.P)
	e, err := s.Mem.GetEpisode(ctx, id, vis)
	if err != nil {
		return nil, err
	}
	if d := s.Auth.Modify(c.P, e.Space()); d.Effect != access.Allow {
		return nil, s.deny(ctx, c, e.UUID, e.GroupID, d.Reason)
	}
	e, err = s.Queue.Requeue(ctx, id, vis)
	if err != nil {
		return nil, err
	}
	s.provenance(c, e)
	return e, nil
}

// Sweeper is the actor of the audit events the expiry sweeper writes: not a requester
// id (those have no colon), so no requester can be mistaken for it.
const Sweeper = "system:expiry-sweeper"

// SweepExpired erases every memory whose expires_at has passed, with the delete
// cascade, each audited as expired, and audits every share grant that has lapsed
// (share_expired). Reads hide such a memory, and resolution ignores such a grant,
// from its expires_at on; this frees the space and records the end. Several processes
// may sweep at once: each memory is erased, and each event written, once.
func (s *Service) SweepExpired(ctx context.Context) (int, error) {
	const batch = 100
	// Its events go to the system space of the organization of what it erased.
	sweeper := func(org graph.Org) Call { return Call{P: access.Principal{Org: org, ID: Sweeper}} }
	total := 0
	for {
		n, err := s.Mem.EraseExpired(ctx, batch, func(e *graph.Episode) *graph.AuditEvent {
			return s.event(sweeper(e.Space().Org), graph.AuditExpired, e.UUID, e.GroupID, "expires_at "+e.ExpiresAt.UTC().Format(time.RFC3339))
		})
		total += n
		if err != nil {
			return total, err
		}
		if n < batch {
			break
		}
	}
	for {
		n, err := s.Dir.LapseShares(ctx, batch, func(org graph.Org, agent, principal string, at time.Time) *graph.AuditEvent {
			return s.event(sweeper(org), graph.AuditShareExpired, agent, org.Private(agent).GroupID(),
				"the share with "+principal+" lapsed at "+at.UTC().Format(time.RFC3339))
		})
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}

// RunExpirySweeper sweeps every interval until ctx ends.
func (s *Service) RunExpirySweeper(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.SweepExpired(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.WarnContext(ctx, "expiry sweep", "error", err.Error(), "erased", n)
		} else if n > 0 {
			s.Log.InfoContext(ctx, "expiry sweep", "erased", n)
		}
	}
}
