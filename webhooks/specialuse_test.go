package webhooks

import (
	"net/netip"
	"testing"
)

// TestRefusalOfTheHostsOwnAddress: an address of one of the host's own
// interfaces is refused even when it is public, and the reason says so;
// the same public address on another host is not.
func TestRefusalOfTheHostsOwnAddress(t *testing.T) {
	own := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("8.8.4.4")}
	if got := refusal(netip.MustParseAddr("8.8.4.4"), own); got != "an address of this host" {
		t.Errorf("refusal(own public address) = %q, want it refused as this host's", got)
	}
	if got := refusal(netip.MustParseAddr("::ffff:8.8.4.4"), own); got == "" {
		t.Error("refusal(mapped own address) accepted it")
	}
	if got := refusal(netip.MustParseAddr("8.8.8.8"), own); got != "" {
		t.Errorf("refusal(another public address) = %q, want accepted", got)
	}
}

// TestOwnAddrsListsThisHostsInterfaces: the addresses read from the
// interfaces include loopback, and each is refused.
func TestOwnAddrsListsThisHostsInterfaces(t *testing.T) {
	own := ownAddrs()
	if len(own) == 0 {
		t.Skip("no interface addresses readable here")
	}
	for _, a := range own {
		if refusal(a, own) == "" {
			t.Errorf("own interface address %s is accepted", a)
		}
	}
}
