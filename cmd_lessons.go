package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"outlierlab/engine/course"
	"outlierlab/lessons"
)

func init() {
	commands["lessons"] = command{
		summary: "list the lessons; -check runs every lesson's checks against the engine",
		run:     runLessons,
	}
}

// runLessons exits 0 when the lessons load (and, with -check, every check
// does what its lesson claims), 1 when a check does not, 2 when a lesson
// file is malformed or the flags are wrong.
func runLessons(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("lessons", flag.ContinueOnError)
	fl.SetOutput(stderr)
	check := fl.Bool("check", false, "run every step's check with its intended settings (must pass) and, where the step says fails_at_start, with the lesson's start settings (must fail)")
	dir := fl.String("dir", "", "read lesson files from this directory instead of the built-in ones (for authors)")
	only := fl.String("lesson", "", "only this lesson id")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: outlierlab lessons [-check] [-lesson ID] [-dir DIR]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fl.Usage()
		return 2
	}
	var fsys fs.FS = lessons.FS
	if *dir != "" {
		fsys = os.DirFS(*dir)
	}
	ls, err := course.Load(fsys)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab lessons: %v\n", err)
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
	lines := course.Report(ls)
	failed := 0
	for _, line := range lines {
		fmt.Fprintln(stdout, line)
		if !line.OK() {
			failed++
		}
	}
	fmt.Fprintf(stdout, "%d checks, %d ok, %d not as the lessons claim\n", len(lines), len(lines)-failed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}
