package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"outlierlab/challenges"
	"outlierlab/engine/challenge"
	"outlierlab/engine/course"
)

// runChallenge lists the tuning challenges (the built-in ones, or FILE…)
// and, with -check, grades each one's reference and its shipped defaults
// on the seeds. It exits 0 when the challenges load (and, with -check,
// every reference passes every goal on every seed and every default fails
// one), 1 when one does not, 2 when a file is malformed (every bad field
// named, with its line) or the flags are wrong — as `plan -check`.
func runChallenge(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("challenge", flag.ContinueOnError)
	fl.SetOutput(stderr)
	check := fl.Bool("check", false, "grade every challenge's reference (it must pass every goal on every seed) and its defaults (they must fail one)")
	seedList := fl.String("seeds", "1-50", "with -check: the seeds, as N, A-B or A,B,C")
	verbose := fl.Bool("v", false, "with -check: print every goal's line, not only the failures and one line per challenge")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab challenge [-check [-seeds 1-50] [-v]] [FILE.md …]")
		fmt.Fprintln(stderr, "Without files: the challenges the lab ships (challenges/*.md). The format is engine/challenge's documentation.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	seeds, err := parseSeeds(*seedList)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab challenge: -seeds: %v\n", err)
		return 2
	}
	cs, err := loadChallenges(fl.Args())
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab challenge: %v\n", err)
		return 2
	}
	if !*check {
		for _, c := range cs {
			fmt.Fprintf(stdout, "%s  %s (%s): %d scenarios, %d goals, %d hidden seeds; unlocked: %v\n",
				c.ID, c.Title, c.File, len(c.Scenarios), c.Goals(), c.Seeds, c.Unlocked)
		}
		return 0
	}
	vs := challenge.Check(cs, seeds, course.Parallel)
	status := 0
	for _, v := range vs {
		lines := v.Lines()
		for i, l := range lines {
			last := i == len(lines)-1
			if *verbose || last || l[:4] == "FAIL" {
				fmt.Fprintln(stdout, l)
			}
		}
		if !v.OK() {
			status = 1
		}
	}
	fmt.Fprintf(stdout, "%s (seeds %s)\n", challenge.Summary(vs), *seedList)
	return status
}

// loadChallenges reads the files named (the built-in challenges if none).
func loadChallenges(files []string) ([]challenge.Challenge, error) {
	if len(files) == 0 {
		return challenge.Load(challenges.FS)
	}
	var out []challenge.Challenge
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: cannot be read (%w)", f, errors.Unwrap(err)))
			continue
		}
		c, err := challenge.Parse(filepath.ToSlash(f), data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := challenge.ByID(out, c.ID); dup {
			errs = append(errs, fmt.Errorf("%s: challenge id %q is given twice (ids are file names)", f, c.ID))
			continue
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}
