package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// WebhookInput is a webhook to register: it follows exactly one of an agent's spaces
// (AgentID), a team's space (Team) or, for an admin host, the organization's audit
// events (Audit).
type WebhookInput struct {
	URL     string
	Events  []string
	AgentID string
	Team    string
	Audit   bool
	Content bool
}

// Hosts finds a host key by name: an audit webhook is sent only while the admin key
// that registered it is configured and still admin.
type Hosts interface {
	Host(name string) (access.Host, bool)
}

// maxURLBytes bounds a webhook's URL.
const maxURLBytes = 2048

// MaxWebhooksPerRequester is how many webhooks one requester may register;
// MaxWebhooksPerTarget how many one host key may register following the same agent,
// team or audit events, whatever requesters it names: what one change can make it
// send.
const (
	MaxWebhooksPerRequester = 50
	MaxWebhooksPerTarget    = 50
)

// CreateWebhook registers a webhook for c's requester and returns it with its signing
// secret, which is never shown again. An agent's webhook follows its private and
// public spaces (the agent must exist in c's organization; what c may not read of it
// is never sent), a team's follows the team's space (c must be a member: ENOTFOUND
// when c cannot see the team, an audited EFORBIDDEN when it can but is no member), an
// audit webhook the organization's refusals (an admin host only, audited EFORBIDDEN
// otherwise). Its URL is kept normalized (webhookURL). EINVALID for a malformed URL,
// unknown or unfit events, or a URL that CheckWebhookURL refuses (SSRF).
func (s *Service) CreateWebhook(ctx context.Context, c Call, in WebhookInput) (*graph.Webhook, error) {
	if s.Hooks == nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "webhooks are not available on this server")
	}
	targets := 0
	for _, set := range []bool{in.AgentID != "", in.Team != "", in.Audit} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return nil, graph.Errorf(graph.EINVALID, "give exactly one of agent_id, team or audit")
	}
	allowed := graph.MemoryEvents
	if in.Audit {
		allowed = []string{graph.EventAccessDenied}
		if in.Content {
			return nil, graph.Errorf(graph.EINVALID, "include_content is for memory events")
		}
	}
	if err := checkEvents(in.Events, allowed); err != nil {
		return nil, err
	}
	target, err := webhookURL(in.URL)
	if err != nil {
		return nil, err
	}
	w := &graph.Webhook{Org: c.P.Org, ID: uuid.NewString(), URL: target, Events: slices.Sorted(slices.Values(in.Events)),
		Requester: c.P.ID, HostKey: c.P.Host.Name, Content: in.Content, CreatedAt: s.Now().UTC()}
	switch {
	case in.AgentID != "":
		if err := graph.CheckID("agent_id", in.AgentID); err != nil {
			return nil, err
		}
		if _, err := s.Dir.GetAgent(ctx, c.P.Org, in.AgentID); err != nil {
			return nil, err
		}
		if d := s.Auth.Follow(c.P, c.P.Org.Private(in.AgentID)); d.Effect != access.Allow {
			return nil, s.deny(ctx, c, in.AgentID, c.P.Org.Private(in.AgentID).GroupID(), d.Reason)
		}
		w.Agent = in.AgentID
		w.GroupIDs = []string{c.P.Org.Private(in.AgentID).GroupID(), c.P.Org.Public(in.AgentID).GroupID()}
	case in.Team != "":
		if _, err := s.GetTeam(ctx, c, in.Team); err != nil {
			return nil, err
		}
		team := c.P.Org.Team(in.Team)
		if d := s.Auth.Follow(c.P, team); d.Effect != access.Allow {
			return nil, s.deny(ctx, c, in.Team, team.GroupID(), d.Reason)
		}
		w.Team = in.Team
		w.GroupIDs = []string{team.GroupID()}
	default:
		system := c.P.Org.System()
		if d := s.Auth.Follow(c.P, system); d.Effect != access.Allow {
			return nil, s.deny(ctx, c, "", system.GroupID(), d.Reason)
		}
		w.Audit = true
		w.GroupIDs = []string{system.GroupID()}
	}
	if s.CheckWebhookURL != nil {
		if err := s.CheckWebhookURL(ctx, target); err != nil {
			return nil, err
		}
	}
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, err
	}
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key[:])
	w.Secret = secret
	if err := s.Hooks.CreateWebhook(ctx, w, graph.WebhookLimits{PerRequester: MaxWebhooksPerRequester, PerTarget: MaxWebhooksPerTarget}); err != nil {
		return nil, err
	}
	w.Secret = secret
	return w, nil
}

func checkEvents(events, allowed []string) error {
	if len(events) == 0 {
		return graph.Errorf(graph.EINVALID, "events must name at least one of %s", strings.Join(allowed, ", "))
	}
	seen := map[string]bool{}
	for _, e := range events {
		if !slices.Contains(allowed, e) {
			return graph.Errorf(graph.EINVALID, "events: %q is not one of %s", e, strings.Join(allowed, ", "))
		}
		if seen[e] {
			return graph.Errorf(graph.EINVALID, "events names %s twice", e)
		}
		seen[e] = true
	}
	return nil
}

// webhookURL checks a URL's form: absolute http or https, a host, no user information
// or fragment; where it points is CheckWebhookURL's to judge. It returns the URL in
// RFC 3986's normal form (6.2.2, 6.2.3), so that the spellings of one receiver are one
// webhook target: scheme and host in lower case, an address in its one form (an
// IPv4-mapped IPv6 one as IPv4), no trailing dot, a port without leading zeros and
// not the scheme's default; in the path and query, an escaped unreserved character
// unescaped and every other escape in upper case; the path without dot segments, "/"
// when empty; no empty query.
func webhookURL(raw string) (string, error) {
	if raw == "" {
		return "", graph.Errorf(graph.EINVALID, "url is required")
	}
	if len(raw) > maxURLBytes {
		return "", graph.Errorf(graph.EINVALID, "url must be at most %d bytes", maxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", graph.Errorf(graph.EINVALID, "url must be an absolute http or https URL")
	}
	if u.User != nil || u.Fragment != "" {
		return "", graph.Errorf(graph.EINVALID, "url must carry no user information and no fragment")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", graph.Errorf(graph.EINVALID, "url must be an absolute http or https URL")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	}
	norm := url.URL{Scheme: u.Scheme, Host: host}
	if strings.Contains(host, ":") {
		norm.Host = "[" + host + "]"
	}
	port := strings.TrimLeft(u.Port(), "0")
	if u.Port() != "" && port == "" {
		port = "0"
	}
	if port != "" && !(u.Scheme == "http" && port == "80") && !(u.Scheme == "https" && port == "443") {
		norm.Host += ":" + port
	}
	out := norm.String() + withoutDotSegments(normalEscapes(u.EscapedPath()))
	if q := normalEscapes(u.RawQuery); q != "" {
		out += "?" + q
	}
	if len(out) > maxURLBytes {
		return "", graph.Errorf(graph.EINVALID, "url must be at most %d bytes", maxURLBytes)
	}
	return out, nil
}

// normalEscapes is s (an escaped path or query) with each escape of an unreserved
// character (RFC 3986: letters, digits, - . _ ~) replaced by the character and every
// other escape in upper case.
func normalEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+2 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		switch c := byte(v); {
		case err != nil:
			b.WriteByte(s[i])
			continue
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			b.WriteString(strings.ToUpper(s[i : i+3]))
		}
		i += 2
	}
	return b.String()
}

// withoutDotSegments is an absolute path (escaped) with its "." and ".." segments
// resolved (RFC 3986, 5.2.4); "/" for an empty one.
func withoutDotSegments(p string) string {
	segments := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var out []string
	for i, seg := range segments {
		last := i == len(segments)-1
		switch seg {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
			continue
		}
		if last { // a path ending in a dot segment ends in "/"
			out = append(out, "")
		}
	}
	return "/" + strings.Join(out, "/")
}

// ListWebhooks lists c's webhooks, and for an admin host its organization's audit
// webhooks, oldest first; never their secrets.
func (s *Service) ListWebhooks(ctx context.Context, c Call) ([]*graph.Webhook, error) {
	if s.Hooks == nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "webhooks are not available on this server")
	}
	hooks, err := s.Hooks.ListWebhooks(ctx, c.P.Org, c.P.ID, s.Auth.Admin(c.P).Effect == access.Allow)
	for _, w := range hooks {
		w.Secret = ""
	}
	return hooks, err
}

// GetWebhook returns one of the webhooks ListWebhooks lists, without its secret;
// ENOTFOUND for any other.
func (s *Service) GetWebhook(ctx context.Context, c Call, id string) (*graph.Webhook, error) {
	if s.Hooks == nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "webhooks are not available on this server")
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, graph.Errorf(graph.ENOTFOUND, "webhook not found")
	}
	w, err := s.Hooks.GetWebhook(ctx, c.P.Org, id)
	if err != nil {
		return nil, err
	}
	if !s.ownsWebhook(c, w) {
		return nil, graph.Errorf(graph.ENOTFOUND, "webhook not found")
	}
	w.Secret = ""
	return w, nil
}

func (s *Service) ownsWebhook(c Call, w *graph.Webhook) bool {
	if w.Audit {
		return s.Auth.Admin(c.P).Effect == access.Allow
	}
	return w.Requester == c.P.ID
}

// DeleteWebhook deletes one of c's webhooks (GetWebhook's) and its deliveries.
func (s *Service) DeleteWebhook(ctx context.Context, c Call, id string) error {
	if _, err := s.GetWebhook(ctx, c, id); err != nil {
		return err
	}
	return s.Hooks.DeleteWebhook(ctx, c.P.Org, id)
}

// WebhookDeliveries lists a webhook's deliveries, newest first, with their attempts:
// those about spaces c sees now.
func (s *Service) WebhookDeliveries(ctx context.Context, c Call, id string, limit int) ([]*graph.Delivery, error) {
	w, err := s.GetWebhook(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if limit, err = s.pageSize(limit); err != nil {
		return nil, err
	}
	vis := s.Auth.Visible(c.P)
	if w.Audit {
		vis = graph.Visible{GroupIDs: []string{c.P.Org.System().GroupID()}, Org: c.P.Org}
	}
	return s.Hooks.Deliveries(ctx, c.P.Org, id, vis, limit)
}

// Audience is what a delivery may carry to its webhook's subscriber, decided when it
// is sent: whether the subscriber may still see the event's space, and the memory's
// content when the webhook asks for it and the subscriber may read the memory.
type Audience struct {
	Sees    bool
	Content *string
}

// Subscribers resolves the principals of webhooks' subscribers, each once however
// many deliveries ask for it: one per batch of claimed deliveries, so every decision
// is made on facts read just before the batch is sent.
type Subscribers struct {
	s     *Service
	facts map[string]graph.PrincipalFacts
}

// Subscribers returns an empty set of resolved subscribers.
func (s *Service) Subscribers() *Subscribers {
	return &Subscribers{s: s, facts: map[string]graph.PrincipalFacts{}}
}

func (r *Subscribers) resolve(ctx context.Context, org graph.Org, requester string) (graph.PrincipalFacts, error) {
	key := string(org) + "\x00" + requester
	if f, ok := r.facts[key]; ok {
		return f, nil
	}
	f, err := r.s.Dir.ResolvePrincipal(ctx, org, requester)
	if err == nil {
		r.facts[key] = f
	}
	return f, err
}

// WebhookAudience decides d for w's subscriber with the Authorizer, as a request of
// the subscriber's would be: an agent's or team's webhook while its requester's
// principal (its stored facts; memberships a host asserted for one request do not
// count) sees the space, an audit webhook while the host key that registered it is
// configured and admin. An error denies (the delivery is tried again later).
func (s *Service) WebhookAudience(ctx context.Context, w *graph.Webhook, d *graph.Delivery) (Audience, error) {
	return s.Subscribers().Audience(ctx, w, d)
}

// keyHolds reports whether the host key that registered an agent's or team's webhook
// may still act for its requester in its organization: one removed from the
// configuration, moved to another organization or bound away from the requester sends
// nothing more, so removing a leaked key also ends what it set up. An end user's JWT
// host is the user itself, good until the user is erased (which deletes the webhook).
func (s *Service) keyHolds(w *graph.Webhook) bool {
	if access.IsJWTHost(w.HostKey) {
		return true
	}
	if s.Hosts == nil {
		return false
	}
	host, ok := s.Hosts.Host(w.HostKey)
	return ok && (host.Org == w.Org || host.Platform) && host.MayName(w.Requester)
}

// Audience is WebhookAudience with the subscribers resolved once.
func (r *Subscribers) Audience(ctx context.Context, w *graph.Webhook, d *graph.Delivery) (Audience, error) {
	s := r.s
	if d.GroupID == "" || !slices.Contains(w.GroupIDs, d.GroupID) {
		return Audience{}, nil
	}
	if w.Audit {
		if s.Hosts == nil {
			return Audience{}, nil
		}
		host, ok := s.Hosts.Host(w.HostKey)
		if !ok {
			return Audience{}, nil
		}
		p := access.Principal{Org: w.Org, ID: w.Requester, Host: host}
		if host.Org != w.Org && !host.Platform {
			return Audience{}, nil
		}
		p.Host.Org = w.Org
		return Audience{Sees: d.GroupID == w.Org.System().GroupID() && s.Auth.Follow(p, w.Org.System()).Effect == access.Allow}, nil
	}
	if !s.keyHolds(w) {
		return Audience{}, nil
	}
	facts, err := r.resolve(ctx, w.Org, w.Requester)
	if err != nil {
		return Audience{}, err
	}
	p := access.NewPrincipal(w.Requester, access.Host{Org: w.Org, Name: w.HostKey}, facts)
	vis := s.Auth.Visible(p)
	if !vis.Contains(d.GroupID) {
		return Audience{}, nil
	}
	out := Audience{Sees: true}
	if w.Content && d.Kind != graph.EventMemoryDeleted && strings.HasPrefix(d.Kind, "memory.") {
		e, err := s.Mem.GetEpisode(ctx, d.Subject, vis)
		switch graph.ErrorCode(err) {
		case "":
			if e.GroupID == d.GroupID {
				out.Content = &e.Content
			}
		case graph.ENOTFOUND: // gone or moved since: no content
		default:
			return Audience{}, err
		}
	}
	return out, nil
}
