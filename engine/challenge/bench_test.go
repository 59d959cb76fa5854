package challenge_test

import (
	"testing"

	"outlierlab/challenges"
	"outlierlab/engine/challenge"
)

// BenchmarkGrade is one submission graded, as web/challenges grades it:
// the reference on the challenge's number of seeds, one run after
// another (the web admits a grading on one core).
//
//	go test ./engine/challenge -run '^$' -bench Grade -benchtime 5x
func BenchmarkGrade(b *testing.B) {
	cs, err := challenge.Load(challenges.FS)
	if err != nil {
		b.Fatal(err)
	}
	for i := range cs {
		c := &cs[i]
		seeds := make([]uint64, c.Seeds)
		for k := range seeds {
			seeds[k] = uint64(1000 + k)
		}
		b.Run(c.ID, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.Grade(c.Reference, seeds, challenge.Sequential); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.Runs()), "runs/op")
		})
	}
}
