package addrlimit

import (
	"fmt"
	"testing"
	"time"
)

// An exhausted address stays exhausted however many other addresses come
// (issue 34: after 10 050 others made one guess each, the table was
// cleared and it had a fresh 60); it is forgiven only as its own bucket
// refills.
func TestExhaustedStaysExhausted(t *testing.T) {
	l := New(60, 60)
	now := time.Unix(1_000_000, 0)
	for range 60 {
		if !l.Allow("203.0.113.7", now) {
			t.Fatal("the burst was refused")
		}
	}
	if l.Allow("203.0.113.7", now) {
		t.Fatal("the 61st guess of the burst was allowed")
	}
	refused := 0
	for i := range 10050 {
		if !l.Allow(fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255), now) {
			refused++
		}
	}
	if l.Allow("203.0.113.7", now) || l.Ready("203.0.113.7", now) {
		t.Fatal("an exhausted address was forgiven after 10 050 others")
	}
	if refused == 0 {
		t.Error("a full table of limited addresses took new ones (it can only have forgotten old ones)")
	}
	// A second later, the others' buckets have refilled (one token a
	// second): they are forgotten, and a new address is taken again; the
	// exhausted one has one token, its own refill.
	now = now.Add(time.Second)
	if !l.Allow("198.51.100.1", now) {
		t.Error("a new address was refused once the others had refilled")
	}
	if !l.Allow("203.0.113.7", now) || l.Allow("203.0.113.7", now) {
		t.Error("the exhausted address did not get exactly its one refilled token")
	}
}

// IPv6 addresses count by their /64: a host picks any address in it.
func TestKeyGroupsIPv6(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:aaaa::1 K7QX2M", "2001:db8:1:2::/64 K7QX2M"},
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "::ffff:203.0.113.7"},
		{"not an address", "not an address"},
		{"", ""},
	} {
		if got := Key(tt.in); got != tt.want {
			t.Errorf("Key(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	l := New(60, 3)
	now := time.Unix(1_000_000, 0)
	for i := range 3 {
		if !l.Allow(fmt.Sprintf("2001:db8:1:2::%x", i+1), now) {
			t.Fatalf("address %d of the /64 refused within the burst", i+1)
		}
	}
	if l.Allow("2001:db8:1:2:dead:beef::9", now) {
		t.Error("a fourth address of the same /64 got a burst of its own")
	}
	if !l.Allow("2001:db8:1:3::1", now) {
		t.Error("another /64 was refused")
	}
}
