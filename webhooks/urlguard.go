package webhooks

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// CheckURL reports why raw cannot receive webhooks, or nil: it must be an
// absolute http or https URL with a host and no user info, and — unless
// allowPrivate — its host must not be "localhost" (or under .localhost),
// a literal address in a special-use range (private, loopback, link-local,
// documentation, benchmarking, reserved, broadcast, multicast, NAT64,
// IPv4-compatible IPv6: the IANA special-purpose registries) or one of
// this host's own interface addresses. Host names that resolve to such
// addresses are refused when a delivery connects (Dialer), so a name
// cannot be pointed inside later.
func CheckURL(raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("the webhook URL must use http or https, not %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("the webhook URL %q has no host", raw)
	case u.User != nil:
		return fmt.Errorf("the webhook URL must not carry user info")
	}
	if allowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("the webhook URL's host %q is a loopback name; private and loopback addresses are refused (webhooks.allowPrivate allows them)", u.Hostname())
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil
	}
	if why := refusal(ip, ownAddrs()); why != "" {
		return fmt.Errorf("the webhook URL's address %s is private or loopback or special-use: %s; such addresses are refused (webhooks.allowPrivate allows them)", ip, why)
	}
	return nil
}

// Dialer returns a dialer that, unless allowPrivate, refuses to connect to
// an address CheckURL would refuse, whatever name resolved to it.
func Dialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{}
	if !allowPrivate {
		d.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("webhook address %q: %w", address, err)
			}
			if why := refusal(ap.Addr(), ownAddrs()); why != "" {
				return fmt.Errorf("webhook address %s is private or loopback or special-use: %s", ap.Addr(), why)
			}
			return nil
		}
	}
	return d
}
