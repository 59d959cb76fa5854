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
	"outlierlab/engine/plan"
	"outlierlab/lessons"
	"outlierlab/plans"
)

// runPlan lists workshop plans (the built-in ones, or FILE…) and, with
// -check, holds every scene's question and notes against the engine. It
// exits 0 when the plans load (and every check holds), 1 when a question's
// expected answer is not the engine's or a note states a number the run
// does not show, for some seed, 2 when a plan is malformed (every bad
// field is named, with its line) or the flags are wrong.
func runPlan(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("plan", flag.ContinueOnError)
	fl.SetOutput(stderr)
	check := fl.Bool("check", false, "hold every scene against the engine: its question's expected answer must be the engine's, and its notes' numbers what the run shows, on every seed")
	seedList := fl.String("seeds", "1-50", "with -check: the seeds, as N, A-B or A,B,C")
	verbose := fl.Bool("v", false, "with -check: print every verdict, not only the failures and one line per scene")
	sweep := fl.Bool("sweep", false, "with -check: sweep many seeds (-seeds 1-2000; make sweep): one line per claim (the seeds it fails on) and per stated band or ranged check (its values' quantiles, each bound's tail) instead of a line per seed")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab plan [-check [-seeds 1-50] [-v | -sweep]] [FILE.md …]")
		fmt.Fprintln(stderr, "Without files: the plans the lab ships (plans/*.md). A plan's format is engine/plan's documentation and the README's \"Workshop plans\".")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *sweep && !*check {
		fmt.Fprintln(stderr, "outlierlab plan: -sweep goes with -check (plan -check -sweep -seeds 1-2000)")
		return 2
	}
	seeds, err := parseSeedsUpTo(*seedList, seedLimit(*sweep))
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab plan: -seeds: %v\n", err)
		return 2
	}
	ls, err := course.Load(lessons.FS)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab plan: the lessons: %v\n", err)
		return 2
	}
	ps, err := loadPlans(fl.Args(), ls)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab plan: %v\n", err)
		return 2
	}
	if !*check {
		for _, p := range ps {
			fmt.Fprintf(stdout, "%s  %d min  %s (%s)\n", p.ID, p.Minutes, p.Title, p.File)
			for i, s := range p.Scenes {
				q := ""
				if s.Question != nil {
					q = "  asks: " + s.Question.Words()
				}
				if s.Challenge != "" {
					q += "  challenge: " + s.Challenge
				}
				fmt.Fprintf(stdout, "  %2d. %-18s %3d min  %s%s\n", i+1, s.ID, s.Minutes, s.Title, q)
			}
		}
		return 0
	}
	if *sweep {
		return printSweep(stdout, stderr, plan.Sweep(ps, seeds, sweepProgress(stderr, len(seeds))), "plan")
	}
	lines := plan.Report(ps, seeds)
	failed := 0
	type tally struct{ ok, all int }
	per := map[string]*tally{}
	for _, l := range lines {
		k := l.Plan + "/" + l.Scene
		if per[k] == nil {
			per[k] = &tally{}
		}
		per[k].all++
		if l.OK {
			per[k].ok++
		} else {
			failed++
		}
		if *verbose || !l.OK || l.Margin != nil {
			fmt.Fprintln(stdout, l)
		}
	}
	for _, p := range ps {
		for _, s := range p.Scenes {
			t := per[p.ID+"/"+s.ID]
			if t == nil {
				continue // nothing to check: no question, no numbers
			}
			verdict := "ok  "
			if t.ok < t.all {
				verdict = "FAIL"
			}
			fmt.Fprintf(stdout, "%s %s/%s: %d of %d checks hold on %d seeds\n", verdict, p.ID, s.ID, t.ok, t.all, len(seeds))
		}
	}
	fmt.Fprintf(stdout, "%d checks, %d ok, %d not as the plans claim\n", len(lines), len(lines)-failed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// loadPlans reads the files named (the built-in plans if none), every
// malformed field of every file reported, and every challenge scene's
// challenge known.
func loadPlans(files []string, ls []course.Lesson) ([]plan.Plan, error) {
	ps, err := readPlans(files, ls)
	if err != nil {
		return ps, err
	}
	// A challenge scene names a shipped challenge (the ones serve grades).
	cs, err := challenge.Load(challenges.FS)
	if err != nil {
		return nil, fmt.Errorf("the challenges: %w", err)
	}
	ids := make([]string, len(cs))
	for i := range cs {
		ids[i] = cs[i].ID
	}
	return ps, plan.CheckChallenges(ps, ids)
}

// readPlans is loadPlans before the challenge scenes are held against
// the challenges.
func readPlans(files []string, ls []course.Lesson) ([]plan.Plan, error) {
	if len(files) == 0 {
		return plan.Load(plans.FS, ls)
	}
	var out []plan.Plan
	var errs []error
	byID := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: cannot be read (%w)", f, errors.Unwrap(err)))
			continue
		}
		p, err := plan.Parse(filepath.ToSlash(f), data, ls)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := byID[p.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: plan id %q is %s's too (ids are file names)", f, p.ID, other))
			continue
		}
		byID[p.ID] = f
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}
