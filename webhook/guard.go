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
	"syscall"
	"time"

	"github.com/memgate/memgate/graph"
)

// Guard refuses webhook targets on loopback, private, link-local, shared (100.64/10),
// unspecified and multicast addresses unless AllowPrivate: when a webhook is
// registered (CheckURL, by the addresses its host resolves to) and again on every
// connection (Dialer's Control, on the address actually dialled), so a name that
// resolves elsewhere later (DNS rebinding) is refused all the same.
type Guard struct {
	AllowPrivate bool
	Resolver     *net.Resolver // nil: net.DefaultResolver
}

var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// reserved are ranges no public receiver lives in: IPv4's protocol assignments,
// benchmarking and reserved-for-future (broadcast included), and the IPv6 forms that
// carry an IPv4 address a network may translate to its inner hosts (IPv4-compatible,
// NAT64, 6to4, Teredo).
var reserved = []netip.Prefix{
	netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"), netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"), netip.MustParsePrefix("2001::/32"),
}

// Refused reports whether a may not be reached: the reason, or "".
func (g Guard) Refused(a netip.Addr) string {
	if g.AllowPrivate {
		return ""
	}
	a = a.Unmap()
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

// CheckURL resolves raw's host and returns EINVALID when any of its addresses is
// refused, or when it does not resolve.
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
	addrs, err := resolver.LookupNetIP(ctx, "ip", u.Hostname())
	if err != nil || len(addrs) == 0 {
		return graph.Errorf(graph.EINVALID, "url: host %s does not resolve", u.Hostname())
	}
	for _, a := range addrs {
		if why := g.Refused(a); why != "" {
			return graph.Errorf(graph.EINVALID, "url: host %s resolves to a %s address, which webhooks may not reach (webhooks.allow_private)", u.Hostname(), why)
		}
	}
	return nil
}

// errRefused is the dial error of a refused address.
var errRefused = errors.New("the address is refused (webhooks.allow_private)")

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
