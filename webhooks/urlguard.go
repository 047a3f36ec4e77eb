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
// allowPrivate — its host must not be "localhost" (or under .localhost) or
// a literal private, loopback, link-local, unspecified or multicast
// address. Host names that resolve to such addresses are refused when a
// delivery connects (Dialer), so a name cannot be pointed inside later.
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
	if ip, err := netip.ParseAddr(host); err == nil && !public(ip) {
		return fmt.Errorf("the webhook URL's address %s is private or loopback; such addresses are refused (webhooks.allowPrivate allows them)", ip)
	}
	return nil
}

// public reports whether ip may receive deliveries without allowPrivate.
func public(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip)) // carrier-grade NAT
}

// Dialer returns a dialer that, unless allowPrivate, refuses to connect to
// a private or loopback address, whatever name resolved to it.
func Dialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{}
	if !allowPrivate {
		d.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("webhook address %q: %w", address, err)
			}
			if !public(ap.Addr()) {
				return fmt.Errorf("webhook address %s is private or loopback", ap.Addr())
			}
			return nil
		}
	}
	return d
}
