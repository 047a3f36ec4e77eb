package webhooks

import (
	"net"
	"net/netip"
)

// specialRange is one range of the IANA special-purpose address
// registries (or of the v4 multicast and v6 reserved spaces) that never
// receives webhooks without allowPrivate.
type specialRange struct {
	prefix netip.Prefix
	name   string
}

// special lists the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (iana-ipv4-special-registry, iana-ipv6-special-registry; RFC 6890 and
// later), IPv4 multicast, and the IPv6 space outside 2000::/3, which holds
// no global unicast: all of them, globally reachable entries included,
// since no webhook receiver lives there. IPv4-mapped IPv6 addresses are
// unmapped before the lookup, so they are judged as IPv4.
var special = func() []specialRange {
	table := []struct{ cidr, name string }{
		{"0.0.0.0/8", "this network"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared address space (carrier-grade NAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignments"},
		{"192.0.2.0/24", "documentation (TEST-NET-1)"},
		{"192.31.196.0/24", "AS112-v4"},
		{"192.52.193.0/24", "AMT"},
		{"192.88.99.0/24", "deprecated 6to4 relay anycast"},
		{"192.168.0.0/16", "private"},
		{"192.175.48.0/24", "direct delegation AS112 service"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation (TEST-NET-2)"},
		{"203.0.113.0/24", "documentation (TEST-NET-3)"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"},
		{"255.255.255.255/32", "limited broadcast"},
		{"::/8", "reserved (loopback, unspecified, IPv4-compatible)"},
		{"64:ff9b::/96", "IPv4-IPv6 translation (NAT64)"},
		{"64:ff9b:1::/48", "local-use IPv4-IPv6 translation"},
		{"100::/64", "discard-only"},
		{"100:0:0:1::/64", "dummy prefix"},
		{"2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHID, ...)"},
		{"2001:db8::/32", "documentation"},
		{"2002::/16", "6to4"},
		{"2620:4f:8000::/48", "direct delegation AS112 service"},
		{"3fff::/20", "documentation"},
		{"5f00::/16", "segment routing (SRv6) SIDs"},
		{"4000::/2", "outside global unicast"},
		{"8000::/1", "outside global unicast (unique local, link-local, multicast, ...)"},
		{"0000::/3", "outside global unicast"},
	}
	out := make([]specialRange, len(table))
	for i, r := range table {
		out[i] = specialRange{netip.MustParsePrefix(r.cidr), r.name}
	}
	return out
}()

// refusal names why ip may not receive deliveries without allowPrivate —
// the special-use range it is in, or that it is one of own, the host's
// own interface addresses — or returns "" when it may.
func refusal(ip netip.Addr, own []netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	for _, r := range special {
		if r.prefix.Contains(ip) {
			return r.prefix.String() + " (" + r.name + ")"
		}
	}
	for _, a := range own {
		if a.Unmap() == ip {
			return "an address of this host"
		}
	}
	return ""
}

// ownAddrs lists the host's interface addresses now (interfaces come and
// go, so they are read at each check), or none when they cannot be read.
func ownAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}
