// Package webhook sends the outbox's deliveries: each leased from Neo4j by one
// process, checked against the subscriber's access when it is sent, signed per the
// Standard Webhooks specification, and retried with exponential backoff and jitter
// until a horizon. Guard keeps webhooks from reaching addresses they may not (SSRF).
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"syscall"
	"time"

	"github.com/memgate/memgate/graph"
)

// Guard refuses webhook targets on loopback, private, link-local, shared (100.64/10),
// unspecified, multicast and reserved addresses: when a webhook is registered
// (CheckURL, by the addresses its host resolves to) and again on every connection
// (Dialer's Control, on the address actually dialled), so a name that resolves
// elsewhere later (DNS rebinding) is refused all the same. AllowLoopback opens
// loopback alone (one machine: development and tests); Allow opens named networks
// (internal receivers), except the cloud metadata addresses, which only an entry
// naming that one address opens.
type Guard struct {
	AllowLoopback bool
	Allow         []netip.Prefix
	Resolver      *net.Resolver // nil: net.DefaultResolver
}

var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// reserved are ranges no public receiver lives in: IPv4's protocol assignments,
// benchmarking and reserved-for-future (broadcast included), IPv6's deprecated
// site-local and discard-only ranges, and the IPv6 forms that carry an IPv4 address a
// network may translate to its inner hosts (IPv4-compatible, IPv4-translated, NAT64,
// 6to4, Teredo).
var reserved = []netip.Prefix{
	netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"), netip.MustParsePrefix("::ffff:0:0:0/96"), netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("2002::/16"), netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("fec0::/10"), netip.MustParsePrefix("100::/64"),
}

// metadata are the cloud providers' instance metadata addresses (AWS, GCP and Azure's
// 169.254.169.254, ECS's 169.254.170.2, AWS's IPv6 one, Alibaba's): refused even
// inside an allowed network, unless an entry of Allow is that one address.
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200"),
}

// Refused reports whether a may not be reached: the kind of address, or "".
func (g Guard) Refused(a netip.Addr) string {
	a = a.Unmap()
	why := kind(a)
	switch {
	case why == "":
		return ""
	case why == "loopback" && g.AllowLoopback:
		return ""
	}
	for _, p := range g.Allow {
		if !p.Contains(a) {
			continue
		}
		if slices.Contains(metadata, a) && !(p.IsSingleIP() && p.Addr().Unmap() == a) {
			return "metadata"
		}
		return ""
	}
	if slices.Contains(metadata, a) {
		return "metadata"
	}
	return why
}

// kind is the kind of address a is that no webhook reaches by default, or "".
func kind(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return "unspecified"
	case a.IsPrivate() || sharedSpace.Contains(a):
		return "private"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsMulticast() || a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return "reserved"
		}
	}
	return ""
}

// CheckURL resolves raw's host and returns EINVALID when it does not resolve or any of
// its addresses is refused, with one message for both: a registration does not tell
// which names resolve, nor to what.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return graph.Errorf(graph.EINVALID, "url must be an absolute http or https URL")
	}
	resolver := g.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	unreachable := graph.Errorf(graph.EINVALID, "url: host %s is not one webhooks may reach: it must resolve, and only to public addresses "+
		"(or to those webhooks.allow_loopback and webhooks.allow_networks open)", u.Hostname())
	addrs, err := resolver.LookupNetIP(ctx, "ip", u.Hostname())
	if err != nil || len(addrs) == 0 {
		return unreachable
	}
	for _, a := range addrs {
		if g.Refused(a) != "" {
			return unreachable
		}
	}
	return nil
}

// errRefused is the dial error of a refused address.
var errRefused = errors.New("the address is refused")

// control refuses a connection to a refused address, after name resolution, just
// before the socket connects.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook dial %s: %w", address, err)
	}
	if why := g.Refused(ap.Addr()); why != "" {
		return fmt.Errorf("webhook dial %s (%s): %w", address, why, errRefused)
	}
	return nil
}

// Client is the HTTP client deliveries go through: every connection checked by the
// guard, no proxy (which would dial for it), no redirect followed, and each request
// ended after timeout.
func (g Guard) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: g.control}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
