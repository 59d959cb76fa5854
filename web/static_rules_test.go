package web

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The browser code's house rules (issue 37), over web/static but its
// vendored third-party files: no file over 400 lines (a file that does
// one job stays readable: split a module or a stylesheet by what it is
// about); no MutationObserver (the page does not rewrite what the server
// has just sent, and an element's own callbacks, Datastar's attributes or
// the datastar-fetch event say when something arrived); history's
// methods are called, never replaced (the stream's address goes through
// js/page.js's olabAddress).
func TestStaticFilesRules(t *testing.T) {
	t.Parallel()
	const maxLines = 400
	override := regexp.MustCompile(`history\s*\.\s*(replaceState|pushState)\s*=[^=]|defineProperty\(\s*history\b`)
	seen := 0
	err := filepath.WalkDir("static", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		seen++
		src := string(b)
		if n := strings.Count(src, "\n"); n > maxLines {
			t.Errorf("%s has %d lines, more than %d: split it by what its parts are about", p, n, maxLines)
		}
		if strings.Contains(src, "MutationObserver") {
			t.Errorf("%s uses a MutationObserver: react to the element's own callbacks or Datastar's events instead", p)
		}
		if m := override.FindString(src); m != "" {
			t.Errorf("%s replaces history's own method (%q): call it, from the one place that keeps the address", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 3 {
		t.Fatalf("read %d files under web/static: not the tree this test is about", seen)
	}
}
