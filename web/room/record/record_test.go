package record

import "testing"

func TestRoomCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		c := NewCode()
		if n, ok := NormalCode(c); !ok || n != c {
			t.Fatalf("newRoomCode() = %q is not a code", c)
		}
		seen[c] = true
	}
	if len(seen) < 1999 {
		t.Errorf("2000 codes, only %d distinct", len(seen))
	}
	for in, want := range map[string]string{"k7qx2m": "K7QX2M", " K7Q-X2M ": "K7QX2M", "k7q x2m": "K7QX2M"} {
		if got, ok := NormalCode(in); !ok || got != want {
			t.Errorf("normalRoomCode(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "K7QX2", "K7QX2MM", "K0QX2M", "KIQX2M", "K7QX2/", "K7QX2É"} {
		if _, ok := NormalCode(bad); ok {
			t.Errorf("normalRoomCode(%q) accepted", bad)
		}
	}
	k1, k2 := NewKey(), NewKey()
	if len(k1) != 43 || k1 == k2 {
		t.Errorf("keys %q, %q", k1, k2)
	}
	rec := Record{KeyHash: HashKey(k1)}
	if !rec.KeyMatches(k1) || rec.KeyMatches(k2) || rec.KeyMatches("") {
		t.Error("keyMatches")
	}
}
