// Package golden pins a test's output in a file under testdata, so an
// engine change shows up in review as a diff of numbers and sentences. A
// test package that imports it gets the -update flag, which rewrites the
// files instead of comparing (make golden).
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata instead of comparing with them")

// Compare fails t when got differs from the file, naming the first line
// where they part; with -update it writes got to the file instead.
func Compare(t testing.TB, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (write it with make golden)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the run:\n%s\nrewrite with make golden if the change is intended, and say why in the commit", file, firstDiff(want, got))
	}
}

// firstDiff shows the first line where two outputs part.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range max(len(wl), len(gl)) {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, w, g)
		}
	}
	return "(same lines, different bytes)"
}
