package course_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"outlierlab/engine/course"
)

// poissonBinomial is the distribution of the number of successes of
// independent trials with probabilities ps: out[k] = P(X = k).
func poissonBinomial(ps []float64) []float64 {
	dist := []float64{1}
	for _, p := range ps {
		next := make([]float64, len(dist)+1)
		for k, q := range dist {
			next[k] += q * (1 - p)
			next[k+1] += q * p
		}
		dist = next
	}
	return dist
}

// tails are P(X ≥ k) and P(X ≤ k) under dist.
func tails(dist []float64, k int) (upper, lower float64) {
	for i, q := range dist {
		if i >= k {
			upper += q
		}
		if i <= k {
			lower += q
		}
	}
	return upper, lower
}

// longestIndex is the index of the strictly longest choice (in
// characters, as the learner sees them), or -1 if two share the length.
func longestIndex(choices []string) int {
	best, n, tie := -1, -1, false
	for i, c := range choices {
		l := utf8.RuneCountInString(strings.TrimSpace(c))
		switch {
		case l > n:
			best, n, tie = i, l, false
		case l == n:
			tie = true
		}
	}
	if tie {
		return -1
	}
	return best
}

// The right answer is not given away by its length. Under the null
// hypothesis (the right answer is any one of a question's k choices,
// equally likely), it is the strictly longest choice with probability 1/k
// when the question has a strictly longest choice, else 0; the number of
// questions where it is, over the course, follows the Poisson binomial
// distribution of those probabilities (computed exactly). The test fails
// when the count observed is in that distribution's upper tail at
// p < 0.05: more right answers are the longest than chance allows one
// time in twenty (issue 38 found 35 of 39 quiz answers longest). It fails
// in the lower tail at p < 0.05 too: a course whose right answer is never
// the longest teaches "pick a shorter one", another tell.
func TestRightAnswerNotTheLongest(t *testing.T) {
	qs := course.Questions(loadLessons(t))
	var ps []float64
	var longest []string
	for _, q := range qs {
		i := longestIndex(q.Choices)
		if i < 0 {
			ps = append(ps, 0)
			continue
		}
		ps = append(ps, 1/float64(len(q.Choices)))
		if i == q.Answer {
			longest = append(longest, q.Key)
		}
	}
	dist := poissonBinomial(ps)
	upper, lower := tails(dist, len(longest))
	var mean float64
	for _, p := range ps {
		mean += p
	}
	t.Logf("right answer the longest in %d of %d questions (chance: %.1f); P(≥ %d) = %.3g, P(≤ %d) = %.3g", len(longest), len(qs), mean, len(longest), upper, len(longest), lower)
	if upper < 0.05 {
		t.Errorf("the right answer is the longest choice in %d of %d questions, more than chance allows (P = %.3g < 0.05; about %.0f by chance): write the distractors as long and as specific as the answer. Longest: %s",
			len(longest), len(qs), upper, mean, strings.Join(longest, ", "))
	}
	if lower < 0.05 {
		t.Errorf("the right answer is the longest choice in only %d of %d questions, fewer than chance allows (P = %.3g < 0.05; about %.0f by chance): \"never the longest\" gives it away too", len(longest), len(qs), lower, mean)
	}
}

// positionSkew tests the positions the right answers sit at (pos[i] for
// question i of n[i] choices) against the null hypothesis that each is
// any of its question's positions, equally likely. For each position j,
// the count of right answers there follows a Poisson binomial
// distribution (probability 1/k over the questions with more than j
// choices); the test is two-sided, so a position never used (issue 38:
// no answer was D) is skew too. Family-wise α = 0.05 with Bonferroni over
// four positions and two tails: a tail below 0.05/8 fails. It returns
// what failed, "" if nothing.
func positionSkew(pos, n []int) string {
	var bad []string
	for j := range 4 {
		var ps []float64
		count := 0
		for i := range pos {
			if n[i] > j {
				ps = append(ps, 1/float64(n[i]))
			}
			if pos[i] == j {
				count++
			}
		}
		if len(ps) == 0 {
			continue
		}
		upper, lower := tails(poissonBinomial(ps), count)
		if upper < 0.05/8 || lower < 0.05/8 {
			bad = append(bad, fmt.Sprintf("%c: %d of %d (P upper %.3g, lower %.3g)", 'A'+j, count, len(ps), upper, lower))
		}
	}
	return strings.Join(bad, "; ")
}

// The right answer's place in the lesson files is not skewed (positionSkew
// states the test): an author who always writes it second would give it
// away to anyone reading the source, and to a page that did not shuffle.
func TestRightAnswerPositionInFile(t *testing.T) {
	qs := course.Questions(loadLessons(t))
	var pos, n []int
	for _, q := range qs {
		pos, n = append(pos, q.Answer), append(n, len(q.Choices))
	}
	if bad := positionSkew(pos, n); bad != "" {
		t.Errorf("right answers in the lesson files sit at one place more (or less) often than chance allows: %s", bad)
	}
}

// After the page's shuffle, the right answer's place is not skewed either:
// for each of 1000 learners (seeds), the positions they see pass
// positionSkew, which at family α = 0.05 fails about 5% of fair seeds.
// The test fails if more than 75 of the 1000 do: the binomial(1000, 0.05)
// count exceeds 75 with probability under 0.001, so a fair shuffle passes
// and one that keeps the file's order (or favours a place) does not.
func TestRightAnswerPositionShuffled(t *testing.T) {
	qs := course.Questions(loadLessons(t))
	failed := 0
	for s := range 1000 {
		seed := fmt.Sprintf("learner-%d", s)
		var pos, n []int
		for _, q := range qs {
			order := course.ChoiceOrder(seed, q.Key, len(q.Choices))
			pos, n = append(pos, slices.Index(order, q.Answer)), append(n, len(q.Choices))
		}
		if positionSkew(pos, n) != "" {
			failed++
		}
	}
	t.Logf("%d of 1000 learners see skewed positions (≈50 expected at α = 0.05)", failed)
	if failed > 75 {
		t.Errorf("%d of 1000 learners see the right answers skewed to a place, more than a fair shuffle's ≈50 (at most 75)", failed)
	}
}

// ChoiceOrder draws every permutation equally often: over 24,000 keys,
// each of the n! orders of n = 2, 3 and 4 choices, by a χ² goodness-of-fit
// test against the uniform, below the 0.001 critical value for n! − 1
// degrees of freedom (10.83, 20.52, 49.73). It is also a function of seed
// and key alone: the same learner sees the same order again, a room one
// order for all.
func TestChoiceOrderUniform(t *testing.T) {
	crit := map[int]float64{2: 10.83, 3: 20.52, 4: 49.73}
	for n, c := range crit {
		counts := map[string]int{}
		const draws = 24000
		for i := range draws {
			counts[fmt.Sprint(course.ChoiceOrder("room-ABCD", fmt.Sprintf("lesson/quiz/%d", i), n))]++
		}
		perms := map[int]int{2: 2, 3: 6, 4: 24}[n]
		if len(counts) != perms {
			t.Fatalf("n=%d: %d distinct orders, want %d", n, len(counts), perms)
		}
		want := float64(draws) / float64(perms)
		chi := 0.0
		for _, k := range counts {
			chi += (float64(k) - want) * (float64(k) - want) / want
		}
		if chi > c {
			t.Errorf("n=%d: χ² = %.1f over %d orders, above %.2f", n, chi, perms, c)
		}
	}
	a := course.ChoiceOrder("room-1", "consecutive/predict", 4)
	if b := course.ChoiceOrder("room-1", "consecutive/predict", 4); !slices.Equal(a, b) {
		t.Errorf("one seed, two orders: %v, %v", a, b)
	}
	differ := false
	for s := range 20 {
		if !slices.Equal(a, course.ChoiceOrder(fmt.Sprint("room-", s+2), "consecutive/predict", 4)) {
			differ = true
		}
	}
	if !differ {
		t.Error("20 other seeds all gave the same order: the seed does not reach the shuffle")
	}
}
