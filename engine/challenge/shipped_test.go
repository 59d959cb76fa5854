package challenge_test

import (
	"testing"

	"outlierlab/challenges"
	"outlierlab/engine/challenge"
	"outlierlab/engine/course"
)

// The shipped challenges, as `outlierlab challenge -check` proves them:
// on seeds 1–50 (1–5 with -short) each reference passes every goal on
// every seed and each start fails at least one. make test runs this, so
// CI checks every challenge file shipped.
func TestShippedChallenges(t *testing.T) {
	cs, err := challenge.Load(challenges.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 5 {
		t.Errorf("%d challenges shipped; want at least five", len(cs))
	}
	n := 50
	if testing.Short() {
		n = 5
	}
	var seeds []uint64
	for seed := range uint64(n) {
		seeds = append(seeds, seed+1)
	}
	for _, v := range challenge.Check(cs, seeds, course.Parallel) {
		if !v.OK() {
			for _, l := range v.Lines() {
				t.Error(l)
			}
		}
	}
}

// A grade says goal by goal how many seeds passed, and where the first
// failure happened: on search-cap's defaults (the 10% cap) h5 is never
// ejected, so the deadline, 50 s, is the moment to open.
func TestGradeFailureMoment(t *testing.T) {
	cs, err := challenge.Load(challenges.FS)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := challenge.ByID(cs, "search-cap")
	if !ok {
		t.Fatal("no search-cap")
	}
	g, err := c.Grade(nil, []uint64{7, 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Pass() || g.Runs != 4 {
		t.Fatalf("the defaults pass, or ran %d", g.Runs)
	}
	r := g.Goals[0]
	if r.Ref() != "one-bad-host/eject-h5" || r.Passed != 0 || r.Runs != 2 || r.First == nil || r.First.SeedIndex != 0 || r.First.AtMs != 50000 {
		t.Errorf("%+v %+v; want eject-h5 failed on both, first on the first seed at 50 s", r, r.First)
	}
	g, err = c.Grade(challenge.Submission{"max_ejection_percent": "17"}, []uint64{7, 8}, nil)
	if err != nil || !g.Pass() {
		t.Errorf("the reference: %v %+v", err, g.Failed())
	}
}
