package lab

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/gzipstream"
	"outlierlab/web/labview"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
)

// redrawBytes is what a stream with nonce (of a lab whose redraw memo is
// m) sends to bring a page that showed nothing to snap, uncompressed.
func redrawBytes(t *testing.T, m *redrawMemo, snap snapshot, nonce string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/lab/stream", nil)
	st := newStreamState(rec, nonce, m)
	if err := st.send(datastar.NewSSE(rec, req), snap, time.Time{}); err != nil {
		t.Fatal(err)
	}
	return rec.Body.Bytes()
}

// Two followers of one room after a move get the same redraw but for
// their nonces, and its panels are the events each panel's component
// renders (what the stream sent before they were shared), made once.
func TestFollowersGetSamePanelEvents(t *testing.T) {
	t.Parallel()
	run, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache"}.With(map[string]float64{"max_ejection_percent": 37}))
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot{run: run, cursor: len(run.Frames) / 2, speed: tabstate.Speeds[0], gen: 7, inputsGen: 1, room: true}
	m := newRedrawMemo()
	a := redrawBytes(t, m, snap, "nonceAAAA")
	b := redrawBytes(t, m, snap, "nonceBBBB")
	if !bytes.Contains(a, []byte(`nonce="nonceAAAA"`)) || bytes.Contains(a, []byte("nonceBBBB")) || bytes.Contains(a, []byte(nonceMark)) {
		t.Fatal("a follower's script does not carry its own nonce alone")
	}
	if !bytes.Equal(bytes.ReplaceAll(a, []byte("nonceAAAA"), []byte("nonceBBBB")), b) {
		t.Fatal("two followers' redraws differ beyond their nonces")
	}
	p := labview.Panels(run, snap.cursor)
	for _, want := range [][]byte{
		eventsOf(t, templates.InjectList(tabstate.InjectView(run))),
		eventsOf(t, templates.LabStatus(statusView(snap))),
		eventsOf(t, templates.DecisionLog(p)),
		eventsOf(t, templates.EnvoyStats(p)),
		eventsOf(t, templates.EnvoyHosts(p)),
		eventsOf(t, templates.EnvoyYAML(p)),
	} {
		if !bytes.Contains(a, want) {
			t.Fatalf("the redraw lacks the event %.120q…", want)
		}
	}
	s1, err1 := m.sharedPanels(snap, true, panelsAll)
	s2, err2 := m.sharedPanels(snap, true, panelsAll)
	if err1 != nil || err2 != nil || s1 != s2 {
		t.Fatal("the shared panels were made twice for one move")
	}
}

// A tab on a lesson page and one in the free lab at the same run and
// cursor get each their own status line (a lesson page is held by its
// prediction, the free lab by the room's question), so their panels are
// not shared.
func TestLessonAndLabPanelsNotShared(t *testing.T) {
	t.Parallel()
	run, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache"})
	if err != nil {
		t.Fatal(err)
	}
	lab := snapshot{run: run, cursor: 5, speed: tabstate.Speeds[0], gen: 1, held: true}
	lesson := lab
	lesson.lesson = &lessonbook.Doc{}
	m := newRedrawMemo()
	pl, _ := m.sharedPanels(lab, false, panelsAll)
	ps, _ := m.sharedPanels(lesson, false, panelsAll)
	if pl == ps || bytes.Equal(pl.Plain, ps.Plain) {
		t.Fatal("a lesson page and the free lab share one status line")
	}
	for _, c := range []struct {
		snap snapshot
		sh   *gzipstream.Shared
	}{{lab, pl}, {lesson, ps}} {
		if want := eventsOf(t, templates.LabStatus(statusView(c.snap))); !bytes.HasPrefix(c.sh.Plain, want) {
			t.Fatalf("lesson %t: the status line is not the page's own", c.snap.lesson != nil)
		}
	}
}

// eventsOf is the event the generator sends for c.
func eventsOf(t *testing.T, c templComponent) []byte {
	t.Helper()
	b, err := sseEvents(func(sse *datastar.ServerSentEventGenerator) error { return sse.PatchElementTempl(c) })
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type templComponent = datastar.TemplComponent
