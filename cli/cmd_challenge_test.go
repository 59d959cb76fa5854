package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// challenge -check's exit codes, as plan -check's: 0 when every reference
// passes and every default fails, 1 when a reference fails a goal (a
// reference that is the defaults: it passes nothing the defaults do not),
// 2 for a malformed file, naming the field and its line.
func TestChallengeCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const file = `---
title: "Cap"
summary: "Eject h5."
seeds: 2
unlocked: [max_ejection_percent]
reference: {max_ejection_percent: REF}
scenarios:
  - id: bad
    title: "h5 fails"
    preset: search-cache
    settings: {duration: 60s}
    goals:
      - kind: ejected_within
        host: h5
        after: 30s
        within: 20s
---
Story.
`
	good := write("good.md", strings.Replace(file, "REF", "17", 1))
	weak := write("weak.md", strings.Replace(file, "REF", "10", 1))
	bad := write("bad.md", strings.Replace(file, "seeds: 2", "seeds: 0", 1))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-check", "-seeds", "1-3", good}, 0, "every reference passes"},
		{[]string{"-check", "-seeds", "1-3", weak}, 1, "FAIL weak/bad/ejected-within reference"},
		{[]string{"-check", bad}, 2, "bad.md:4: seeds: \"0\" is not a whole number from 1 to 20"},
		{[]string{"-check", "-seeds", "x"}, 2, "-seeds"},
		{[]string{}, 0, "search-cap"},
	} {
		var out, errb bytes.Buffer
		code := runChallenge(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("challenge %v: exit %d, %s%s; want %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want)
		}
	}
}
