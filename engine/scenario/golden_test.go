package scenario

import (
	"bytes"
	"path/filepath"
	"testing"

	"outlierlab/engine/internal/golden"
)

// Every preset's run (seed 1, the preset as it is) as the text `run
// -format text` prints, pinned in testdata/golden. An engine change shows up
// in review as a diff of these numbers; rewrite them with make golden when
// the change is intended, and say why in the commit.
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
			golden.Compare(t, filepath.Join("testdata", "golden", p.Name+".txt"), got.Bytes())
		})
	}
}
