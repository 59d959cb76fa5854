package cli

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"outlierlab/engine/course"
	"outlierlab/lessons"
)

// runLessons exits 0 when the lessons load (and, with -check, every check
// does what its lesson claims), 1 when a check does not, 2 when a lesson
// file is malformed or the flags are wrong.
func runLessons(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("lessons", flag.ContinueOnError)
	fl.SetOutput(stderr)
	check := fl.Bool("check", false, "run every step's check with its intended settings (must pass) and in every state the learner can be in before the step: the lesson's start, a step button's scenario, what each earlier step leads to (must fail, unless the step says passes_before)")
	seedList := fl.String("seeds", "", "with -check: the seeds to check, as N, A-B or A,B,C (default: each lesson's own seed, normally 1)")
	sweep := fl.Bool("sweep", false, "with -check: sweep many seeds (-seeds 1-2000; make sweep): one line per claim (the seeds it fails on) and per ranged check (its values' quantiles, each bound's tail) instead of a line per seed")
	dir := fl.String("dir", "", "read lesson files from this directory instead of the built-in ones (for authors)")
	only := fl.String("lesson", "", "only this lesson id")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab lessons [-check [-seeds 1-5] [-sweep]] [-lesson ID] [-dir DIR]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fl.Usage()
		return 2
	}
	if *sweep && (!*check || *seedList == "") {
		fmt.Fprintln(stderr, "outlierlab lessons: -sweep goes with -check and -seeds (lessons -check -sweep -seeds 1-2000)")
		return 2
	}
	var seeds []uint64
	if *seedList != "" {
		var err error
		if seeds, err = parseSeedsUpTo(*seedList, seedLimit(*sweep)); err != nil {
			fmt.Fprintf(stderr, "outlierlab lessons: -seeds: %v\n", err)
			return 2
		}
	}
	var fsys fs.FS = lessons.FS
	if *dir != "" {
		if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "outlierlab lessons: -dir %s: not a directory that can be read\n", *dir)
			return 2
		}
		fsys = os.DirFS(*dir)
	}
	ls, err := course.Load(fsys)
	if err != nil {
		if *dir != "" {
			fmt.Fprintf(stderr, "outlierlab lessons: -dir %s: %v\n", *dir, err)
		} else {
			fmt.Fprintf(stderr, "outlierlab lessons: %v\n", err)
		}
		return 2
	}
	if *only != "" {
		var keep []course.Lesson
		for _, l := range ls {
			if l.ID == *only {
				keep = append(keep, l)
			}
		}
		if len(keep) == 0 {
			fmt.Fprintf(stderr, "outlierlab lessons: no lesson %q\n", *only)
			return 2
		}
		ls = keep
	}
	if !*check {
		total := 0
		for _, l := range ls {
			fmt.Fprintf(stdout, "%2d. %-20s %3d min  %s\n", l.Order, l.ID, l.Minutes, l.Title)
			total += l.Minutes
		}
		fmt.Fprintf(stdout, "%d lessons, %d min\n", len(ls), total)
		return 0
	}
	if *sweep {
		return printSweep(stdout, stderr, course.SweepLessons(ls, seeds, sweepProgress(stderr, len(seeds))), "lessons")
	}
	lines := course.Report(ls, seeds)
	failed := 0
	for _, line := range lines {
		fmt.Fprintln(stdout, line)
		if !line.OK() {
			failed++
		}
	}
	fmt.Fprintf(stdout, "%d checks, %d ok, %d not as the lessons claim\n", len(lines), len(lines)-failed, failed)
	// Every lesson ends with what it taught (issue 38): Load checked the
	// endings that are there, -check asks that none is missing.
	unended := 0
	for _, l := range ls {
		if err := l.CheckEnding(); err != nil {
			fmt.Fprintln(stdout, "FAIL", err)
			unended++
		}
	}
	if failed > 0 || unended > 0 {
		return 1
	}
	return 0
}

// maxSeeds bounds -seeds: each seed is a run of every lesson state, and
// a check's lines are kept for every seed. A sweep keeps counts, not
// lines, and takes up to maxSweepSeeds.
const (
	maxSeeds      = 1000
	maxSweepSeeds = 100000
)

func seedLimit(sweep bool) int {
	if sweep {
		return maxSweepSeeds
	}
	return maxSeeds
}

// parseSeeds reads "3", "1-5" or "1,4,9" (parts may mix: "1-3,7"), in
// order, each seed once, up to maxSeeds of them.
func parseSeeds(s string) ([]uint64, error) { return parseSeedsUpTo(s, maxSeeds) }

// parseSeedsUpTo is parseSeeds with another bound.
func parseSeedsUpTo(s string, maxSeeds int) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	add := func(n uint64) error {
		if !seen[n] {
			if len(out) == maxSeeds {
				return fmt.Errorf("more than %d seeds", maxSeeds)
			}
			seen[n] = true
			out = append(out, n)
		}
		return nil
	}
	one := func(p string) (uint64, error) {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("%q is not a seed (a whole number from 1; write N, A-B or A,B,C)", strings.TrimSpace(p))
		}
		return n, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := one(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = one(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("%q: the range ends before it starts", strings.TrimSpace(part))
			}
		}
		for n := a; ; n++ {
			if err := add(n); err != nil {
				return nil, err
			}
			if n == b {
				break
			}
		}
	}
	return out, nil
}

// sweepProgress tells stderr how far a sweep of n seeds has got, about
// every tenth of the way.
func sweepProgress(stderr io.Writer, n int) func(done int) {
	step, next := max(n/10, 1), 0
	return func(done int) {
		if done >= next || done == n {
			fmt.Fprintf(stderr, "swept %d of %d seeds\n", done, n)
			next = done + step
		}
	}
}

// printSweep writes a sweep's lines (every claim, then every ranged
// check) and a summary, and is the command's exit code: 1 when a claim
// failed on some seed or a bound is crossed more often than
// course.SweepRare.
func printSweep(stdout, stderr io.Writer, t *course.Tally, what string) int {
	claims, spreads := t.Claims(), t.Spreads()
	badClaims, badSpreads := 0, 0
	for _, c := range claims {
		fmt.Fprintln(stdout, c)
		if !c.OK() {
			badClaims++
		}
	}
	for _, s := range spreads {
		fmt.Fprintln(stdout, s)
		if !s.OK() {
			badSpreads++
		}
	}
	fmt.Fprintf(stdout, "swept %d seeds: %d claims, %d fail on some seed; %d ranged checks, %d crossed or with a bound crossed more often than 1 run in %d\n",
		t.Seeds(), len(claims), badClaims, len(spreads), badSpreads, int(1/course.SweepRare))
	if badClaims+badSpreads > 0 {
		fmt.Fprintf(stderr, "outlierlab %s: %d of %d claims hold on every seed, %d of %d ranged checks keep their tails\n",
			what, len(claims)-badClaims, len(claims), len(spreads)-badSpreads, len(spreads))
		return 1
	}
	return 0
}
