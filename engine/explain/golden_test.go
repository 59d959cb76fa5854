package explain_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"outlierlab/engine/scenario"
)

// update rewrites the golden decision logs: go test ./engine/explain -update
var update = flag.Bool("update", false, "rewrite the golden decision logs in testdata/golden")

// Every preset's decision log (seed 1, the preset as it is), the sentences
// the web lab's log shows, as plain text, pinned in testdata/golden. A
// change of wording or of the engine shows up in review as a diff of these
// lines; rewrite them with -update when the change is intended, and say why
// in the commit.
func TestGoldenDecisionLogs(t *testing.T) {
	for _, p := range scenario.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			res, err := scenario.Run(p.Scenario(), p.Outlier, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := scenario.WriteLog(&got, res); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", "golden", p.Name+".log")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (write it with go test ./engine/explain -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the run:\n%s\nrewrite with go test ./engine/explain -update if the change is intended", file, firstDiff(string(want), got.String()))
			}
		})
	}
}

// firstDiff shows the first line where two logs part.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + w + "\n  got: " + g
		}
	}
	return "(same lines, different bytes)"
}
