package challenge

import (
	"errors"
	"strings"
	"testing"

	"outlierlab/engine/plan"
)

// good is a valid challenge; the bad files below are it with one line
// changed.
const good = `---
title: "One bad host"
summary: "Eject h5 in time."
seeds: 3
unlocked: [max_ejection_percent, consecutive_5xx]
reference:
  max_ejection_percent: 17
main: [bad/eject-h5, calm/not-ejected]
scenarios:
  - id: bad
    title: "h5 fails"
    preset: search-cache
    goals:
      - id: eject-h5
        kind: ejected_within
        host: h5
        after: 30s
        within: 20s
  - id: calm
    title: "a shared outage"
    preset: shared-dependency
    goals:
      - kind: not_ejected
        from: 30s
        to: 150s
---
The story.
`

func TestParseGood(t *testing.T) {
	c, err := Parse("challenges/one-bad.md", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "one-bad" || c.Seeds != 3 || len(c.Scenarios) != 2 || c.Scenarios[0].Hosts != 6 || c.Scenarios[0].EndMs != 300000 {
		t.Fatalf("parsed %+v", c)
	}
	if g := c.Scenarios[1].Goals[0]; g.ID != "not-ejected" || g.From != s(30) || g.To != s(150) {
		t.Errorf("the second goal: %+v; want id not-ejected (its kind), 30 s to 150 s", g)
	}
	if c.Story != "The story." || c.Reference["max_ejection_percent"] != "17" {
		t.Errorf("story %q reference %v", c.Story, c.Reference)
	}
}

// Each malformed file is refused naming the field and its line.
func TestParseBad(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		line     int
		field    string
		problem  string
	}{
		{"unknown key", "seeds: 3", "seeds: 3\ncolor: red", 5, "color", "unknown field"},
		{"seeds out of range", "seeds: 3", "seeds: 99", 4, "seeds", "from 1 to 20"},
		{"seeds missing", "seeds: 3\n", "", 2, "seeds", "missing"},
		{"an unknown setting unlocked", "unlocked: [max_ejection_percent, consecutive_5xx]", "unlocked: [max_ejection_percent, colour]", 5, "unlocked[1]", "not a setting"},
		{"reference sets a locked setting", "  max_ejection_percent: 17", "  max_ejection_percent: 17\n  interval: 5s", 8, "reference.interval", "not unlocked"},
		{"reference out of range", "max_ejection_percent: 17", "max_ejection_percent: 170", 7, "reference.max_ejection_percent", "0–100"},
		{"an unknown preset", "preset: search-cache", "preset: search-kache", 12, "scenarios[0].preset", "not a preset"},
		{"a scenario locks an unlocked setting", "    preset: shared-dependency\n", "    preset: shared-dependency\n    settings: {consecutive_5xx: 3}\n", 22, "scenarios[1].settings.consecutive_5xx", "is unlocked"},
		{"an unknown goal kind", "kind: not_ejected", "kind: never_ejected", 23, "scenarios[1].goals[0].kind", "not a goal kind"},
		{"a key the kind does not take", "        within: 20s", "        within: 20s\n        max: 3", 19, "scenarios[0].goals[0].max", "does not take max"},
		{"a host not in the run", "host: h5", "host: h6", 16, "scenarios[0].goals[0].host", "h0–h5"},
		{"a deadline after the end", "within: 20s", "within: 300s", 18, "scenarios[0].goals[0].within", "after the run's last frame"},
		{"to before from", "to: 150s", "to: 20s", 25, "scenarios[1].goals[0].to", "not after from"},
		{"a bad time", "after: 30s", "after: soon", 17, "scenarios[0].goals[0].after", ""},
		{"main names no goal", "calm/not-ejected]", "calm/eject-h5]", 8, "main[1]", "not a goal"},
		{"a goal id twice", "      - kind: not_ejected", "      - kind: not_ejected\n      - kind: not_ejected", 24, "scenarios[1].goals[1].id", "already goals[0]'s"},
		{"no goals", "    goals:\n      - kind: not_ejected\n        from: 30s\n        to: 150s\n", "", 19, "scenarios[1].goals", "missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%q is not in the good file", tc.old)
			}
			file := strings.Replace(good, tc.old, tc.new, 1)
			_, err := Parse("challenges/x.md", []byte(file))
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *plan.FieldError
			all := []error{err} // Parse joins its errors one level deep
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				all = j.Unwrap()
			}
			for _, e := range all {
				if errors.As(e, &fe) && fe.Field == tc.field && strings.Contains(fe.Problem, tc.problem) {
					if fe.Line != tc.line {
						t.Errorf("line %d; want %d (%v)", fe.Line, tc.line, fe)
					}
					return
				}
			}
			t.Errorf("no error names %s with %q: %v", tc.field, tc.problem, err)
		})
	}
}

// A submission is refused naming the setting: a locked one, a value out
// of range, two values that clash.
func TestValidate(t *testing.T) {
	c, err := Parse("challenges/one-bad.md", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sub   Submission
		field string
		want  string
	}{
		{Submission{"interval": "5s"}, "interval", "locked"},
		{Submission{"max_ejection_percent": "101"}, "max_ejection_percent", "0–100"},
		{Submission{"consecutive_5xx": "x"}, "consecutive_5xx", "not allowed"},
	} {
		err := c.Validate(tc.sub)
		var fe *plan.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Error(), tc.want) {
			t.Errorf("%v: %v; want %s named with %q", tc.sub, err, tc.field, tc.want)
		}
	}
	if err := c.Validate(Submission{"max_ejection_percent": "34"}); err != nil {
		t.Errorf("a good submission: %v", err)
	}
}
