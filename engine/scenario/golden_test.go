package scenario

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden transcripts: go test ./... -update
var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/golden")

// Every preset's run (seed 1, the preset as it is) as the text `run
// -format text` prints, pinned in testdata/golden. An engine change shows up
// in review as a diff of these numbers; rewrite them with -update when the
// change is intended, and say why in the commit.
func TestGoldenTranscripts(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			res, err := Run(p.Scenario(), p.Outlier, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteText(&got, res); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", "golden", p.Name+".txt")
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
				t.Fatalf("%v (write it with go test ./engine/scenario -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the run:\n%s\nrewrite with go test ./engine/scenario -run Golden -update if the change is intended", file, firstDiff(string(want), got.String()))
			}
		})
	}
}

// firstDiff shows the first line where two transcripts part.
func firstDiff(want, got string) string {
	wl, gl := bytes.Split([]byte(want), []byte("\n")), bytes.Split([]byte(got), []byte("\n"))
	for i := 0; i < max(len(wl), len(gl)); i++ {
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
