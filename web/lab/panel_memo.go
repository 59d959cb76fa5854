package lab

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/chart"
	"outlierlab/web/csp"
	"outlierlab/web/gzipstream"
	"outlierlab/web/labview"
	"outlierlab/web/memo"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
)

// What a redraw sends that is the same for every tab showing the same run
// at the same cursor (a room's followers after the instructor's move) is
// made once: the panels' events, rendered and framed as SSE, and, in a
// room, the charts' script event but for the tab's nonce. A room's
// streams then copy the bytes, and a gzipped one copies them deflated
// once (gzipstream.Shared). Per follower, rendering the panels and
// compressing them was most of a move's cost (issue 26, item 3). A tab in
// no room compresses the same bytes with its own dictionary, as before:
// nobody shares its deflating, and its previous redraw, which the
// dictionary holds, makes the next one smaller on the wire (4.2 KB
// against 5.7 KB for search-cache's).

// panelsKey is everything the shared panels depend on: the run (its key
// is its inputs), the cursor, and what statusView reads of the tab's
// snapshot. No tab id or nonce is in those panels.
type panelsKey struct {
	run     string
	cursor  int
	yaml    bool // the run is new to the stream: its Envoy config too
	playing bool
	speed   string
	notice  string
	held    bool
	lesson  bool // heldFor: a lesson page or the free lab
	room    bool
	part    panelPart
}

// panelPart is which of the redraw's panels an event batch holds: all of
// them, the status line and the notice only (the part a drag's redraw
// sends at once), or the tables after them (what it sends once the drag
// rests: stream.go's dragGap).
type panelPart uint8

const (
	panelsAll panelPart = iota
	panelsStatus
	panelsTables
)

// panelsKeyOf is snap's panelsKey. Whether the tab is in a room matters
// to a lesson's status line only (heldFor): the free lab's panels are the
// same in a room and out of one.
func panelsKeyOf(snap snapshot, yaml bool) panelsKey {
	return panelsKey{run: snap.run.Key, cursor: snap.cursor, yaml: yaml, playing: snap.playing, speed: snap.speed.Name,
		notice: snap.notice, held: snap.held, lesson: snap.lesson != nil, room: snap.room && snap.lesson != nil}
}

// A page is drawn whole before its stream connects: the settings panel
// and the panels below the charts at the tab's cursor, as the stream's
// first redraw would send them again (about 6 KB on the wire of a lab
// page's 10 KB first redraw, every visit). The page says what it drew in
// its "drawn" signal, the keys of both; the stream's first redraw skips
// what the page already shows, then clears the signal (a stream that
// reconnects later finds the page changed since). The keys are of what
// the parts are made from, so a page drawn on another replica or before
// a restart matches as well; a forged one only leaves its own page
// unredrawn.
type drawn struct{ controls, panels string }

// drawnOf is what a page drawn at snap shows.
func drawnOf(snap snapshot) drawn {
	return drawn{controls: controlsHash(snap), panels: panelsHash(snap, true)}
}

// hasControls reports whether the page shows snap's settings panel.
func (d drawn) hasControls(snap snapshot) bool {
	return d.controls != "" && d.controls == controlsHash(snap)
}

// hasPanels reports whether the page shows snap's panels (with the
// config when yaml).
func (d drawn) hasPanels(snap snapshot, yaml bool) bool {
	return d.panels != "" && d.panels == panelsHash(snap, yaml)
}

func controlsHash(snap snapshot) string { return keyHash(controlsKeyOf(snap)) }

func panelsHash(snap snapshot, yaml bool) string {
	return keyHash(fmt.Sprint(panelsKeyOf(snap, yaml)))
}

// controlsKeyOf is what the settings panel is made from: the run and the
// lesson (controlsFor).
func controlsKeyOf(snap snapshot) string {
	if snap.lesson == nil {
		return snap.run.Key
	}
	return snap.run.Key + "|" + snap.lesson.ID
}

func keyHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// String is the drawn signal's value.
func (d drawn) String() string { return d.controls + "." + d.panels }

// parseDrawn reads a drawn signal (anything else: nothing drawn).
func parseDrawn(s string) drawn {
	c, p, ok := strings.Cut(s, ".")
	if !ok || len(s) > 64 {
		return drawn{}
	}
	return drawn{controls: c, panels: p}
}

// panels holds the shared panels of the last moves: a room's tabs
// ask for one at the same moment (single flight), and a few rooms at a
// time.
// redrawMemo holds what a move's redraw sends every tab alike, made once:
// the panels, the charts' script (all but the nonce), the inject list. A
// Lab holds one; its streams and the recording player's are given it.
type redrawMemo struct {
	panels  *memo.Cache[panelsKey, *gzipstream.Shared]
	scripts *memo.Cache[string, scriptEvent]
	injects *memo.Cache[string, *gzipstream.Shared]
	// charts are the charts' scripts and the permalinks at a cursor.
	charts *chart.Scripts
}

func newRedrawMemo() *redrawMemo {
	return &redrawMemo{
		panels:  memo.New[panelsKey, *gzipstream.Shared](64).WithCost(16<<20, sharedCost),
		scripts: memo.New[string, scriptEvent](64).WithCost(16<<20, func(e scriptEvent) int { return len(e.head) + sharedCost(e.tail) }),
		injects: memo.New[string, *gzipstream.Shared](64).WithCost(1<<20, sharedCost),
		charts:  chart.NewScripts(),
	}
}

// newStreamState is a stream's state before it sent anything (every
// generation unseen), writing to w with the tab's nonce.
func newStreamState(w io.Writer, nonce string, m *redrawMemo) *streamState {
	return &streamState{gen: ^uint64(0), inputsGen: ^uint64(0), nonce: nonce, w: w, memo: m}
}

// sharedCost is a value's plain bytes; their deflated copy, made when a
// gzipped stream first sends them, is smaller.
func sharedCost(s *gzipstream.Shared) int { return len(s.Plain) }

// scripts holds the charts' script events (all but the nonce) for
// the scripts Scripts.At and Scripts.Step remember, keyed by the
// script itself: the same string those memos return to every follower.

// sharedPanels is the redraw's panels from the status line to the Envoy
// config, as SSE events.
func (m *redrawMemo) sharedPanels(snap snapshot, yaml bool, part panelPart) (*gzipstream.Shared, error) {
	k := panelsKeyOf(snap, yaml && part != panelsStatus)
	k.part = part
	return sharedEvents(m.panels, k, func() []templ.Component {
		p := labview.Panels(snap.run, snap.cursor)
		var cs []templ.Component
		if part != panelsTables {
			cs = append(cs, templates.LabStatus(statusView(snap)), templates.Notice(snap.notice))
		}
		switch part {
		case panelsAll:
			cs = append(cs, templates.DecisionLog(p), templates.EnvoyStats(p), templates.EnvoyHosts(p))
			if yaml {
				cs = append(cs, templates.EnvoyYAML(p))
			}
		case panelsTables:
			// The YAML first and the hosts' table last, with or without the
			// YAML: a pass of owed tables always ends on it (the transcripts'
			// rest waits for it).
			if yaml {
				cs = append(cs, templates.EnvoyYAML(p))
			}
			cs = append(cs, templates.DecisionLog(p), templates.EnvoyStats(p), templates.EnvoyHosts(p))
		}
		return cs
	})
}

// injects holds the free lab's list of injected faults for a run
// (its key: the faults are among its inputs).

func (m *redrawMemo) sharedInjectList(run *tabstate.Run) (*gzipstream.Shared, error) {
	return sharedEvents(m.injects, run.Key, func() []templ.Component {
		return []templ.Component{templates.InjectList(tabstate.InjectView(run))}
	})
}

// sharedEvents is the patch events of the components made for k, once.
func sharedEvents[K comparable](c *memo.Cache[K, *gzipstream.Shared], k K, components func() []templ.Component) (*gzipstream.Shared, error) {
	sh, _, err := c.Get(k, func() (*gzipstream.Shared, error) {
		b, err := sseEvents(func(sse *datastar.ServerSentEventGenerator) error {
			for _, c := range components() {
				if err := sse.PatchElementTempl(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return gzipstream.NewShared(b), nil
	})
	return sh, err
}

// scriptEvent is csp.Script's event for a script, cut at its nonce.
type scriptEvent struct {
	head []byte
	tail *gzipstream.Shared
}

// nonceMark stands for the nonce in a script event made for every tab;
// a nonce is base64 (csp.Nonce), so it never looks like this.
const nonceMark = "@@nonce@@"

func (m *redrawMemo) scriptEventOf(js string) (scriptEvent, error) {
	e, _, err := m.scripts.Get(js, func() (scriptEvent, error) {
		b, err := sseEvents(func(sse *datastar.ServerSentEventGenerator) error { return csp.Script(sse, nonceMark, js) })
		if err != nil {
			return scriptEvent{}, err
		}
		i := bytes.Index(b, []byte(nonceMark)) // the attribute precedes the script
		return scriptEvent{head: b[:i], tail: gzipstream.NewShared(b[i+len(nonceMark):])}, nil
	})
	return e, err
}

// writeScript sends js as csp.Script would, with the tab's nonce.
func (st *streamState) writeScript(js string) error {
	e, err := st.memo.scriptEventOf(js)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(st.w, string(e.head)+st.nonce); err != nil {
		return err
	}
	return st.writeShared(e.tail, true)
}

// writeShared sends events made once on the stream's writer, under the
// generator (the same bytes the generator would have written): deflated
// once when share (a room's stream), else as the stream's own bytes.
func (st *streamState) writeShared(sh *gzipstream.Shared, share bool) error {
	st.bytes += len(sh.Plain)
	var err error
	if share {
		err = gzipstream.WriteShared(st.w, sh)
	} else {
		_, err = st.w.Write(sh.Plain)
	}
	if err != nil {
		return err
	}
	if rw, ok := st.w.(http.ResponseWriter); ok {
		// As the generator flushes after each event (a GzipStream holding
		// an update flushes at its end).
		return http.NewResponseController(rw).Flush()
	}
	return nil
}

// sseEvents is the bytes a Datastar generator writes for send.
func sseEvents(send func(*datastar.ServerSentEventGenerator) error) ([]byte, error) {
	w := &eventBuffer{h: http.Header{}}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "/", strings.NewReader(""))
	if err := send(datastar.NewSSE(w, req)); err != nil {
		return nil, err
	}
	return w.b.Bytes(), nil
}

// eventBuffer is a ResponseWriter that keeps what it is written.
type eventBuffer struct {
	h http.Header
	b bytes.Buffer
}

func (w *eventBuffer) Header() http.Header         { return w.h }
func (w *eventBuffer) WriteHeader(int)             {}
func (w *eventBuffer) Write(p []byte) (int, error) { return w.b.Write(p) }
func (w *eventBuffer) Flush()                      {}
