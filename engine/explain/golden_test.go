package explain_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"outlierlab/engine/internal/golden"
	"outlierlab/engine/scenario"
)

// Every preset's decision log (seed 1, the preset as it is), the sentences
// the web lab's log shows, as plain text, pinned in testdata/golden. A
// change of wording or of the engine shows up in review as a diff of these
// lines; rewrite them with make golden when the change is intended, and
// say why in the commit.
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
			golden.Compare(t, filepath.Join("testdata", "golden", p.Name+".log"), got.Bytes())
		})
	}
}
