package web

import (
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
)

// serve -plans DIR holds a plan's challenge scenes to the challenges the
// server grades, as plan -check does: an unknown id is refused at start-up,
// naming the file, the line and the ids there are; a known one starts.
func TestPlansChallengeChecked(t *testing.T) {
	t.Parallel()
	plan := func(id string) string {
		return `---
title: One
summary: One scene.
minutes: 5
scenes:
  - id: tune
    title: Tune it
    minutes: 3
    preset: bad-deploy
    challenge: ` + id + `
---
`
	}
	for _, tt := range []struct {
		id, want string
	}{
		{"bad-deploy", ""},
		{"bad-deplo", `plans: one.md:10: scenes[0] (tune).challenge: "bad-deplo" is not a challenge (allowed bad-deploy, `},
	} {
		_, err := New(Options{Log: slog.New(slog.DiscardHandler), Plans: fstest.MapFS{"one.md": {Data: []byte(plan(tt.id))}}})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("challenge %q: New: %v, want it served", tt.id, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("challenge %q: New: %v, want an error holding %q", tt.id, err, tt.want)
		}
	}
}
