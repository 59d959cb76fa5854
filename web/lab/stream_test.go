package lab

import (
	"testing"

	"outlierlab/web/internal/webtest"
)

// A stream for an unknown tab rebuilds the session from its signals and
// resumes at their cursor; bad signals are a 4xx before any streaming.
func TestStreamSignals(t *testing.T) {
	t.Parallel()
	lab := newTestServer(t)
	h := lab.Handler()
	for _, tt := range []struct {
		signals string
		status  int
	}{
		{`{"tab":"short"}`, 400},
		{`not json`, 400},
		{`{"tab":"` + webtest.Tab + `","preset":"nope"}`, 404},
		{`{"tab":"` + webtest.Tab + `","cfg":{"interval":0}}`, 422},
	} {
		res := webtest.Do(t, h, "POST", "/lab/stream", tt.signals)
		if res.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.signals, res.StatusCode, tt.status)
		}
	}
}
