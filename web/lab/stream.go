package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/addrlimit"
	"outlierlab/web/csp"
	"outlierlab/web/gzipstream"
	"outlierlab/web/httperr"
	"outlierlab/web/labview"
	"outlierlab/web/lessonbook"
	"outlierlab/web/roombus"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// The stream is the page's one long-lived read channel (Datastar's CQRS
// split): it never takes input, it shows the session. On connect, and
// whenever a command changed the session, it redraws everything up to the
// cursor; while playing it sends only what each new frame adds.

// streamCheck is how often an idle stream makes sure its session is still
// the tab's one (it may have been evicted and rebuilt by a command).
const streamCheck = 10 * time.Second

// streamWriteTimeout is how long a stream's writes may wait for the
// browser to read them (a phone on bad Wi-Fi catches up in seconds).
const streamWriteTimeout = 30 * time.Second

// errShuttingDown refuses a stream on a server that is shutting down: the
// page tries again (Retry-After), and a proxy sends it to a replica that
// stays.
var errShuttingDown = httperr.WithKind(httperr.KindUnavailable, errors.New("this server is shutting down: the page reconnects to another one"))

// stream handles POST /lab/stream. The tab's signals come in the body
// (Datastar's @post), never in the address: the tab's id would be written
// in every proxy's log of it.
func (s *Lab) stream(w http.ResponseWriter, r *http.Request) {
	s.ServeStream(w, r, s.follow)
}

// ServeStream serves a tab's stream: the tab's session as the lab shows
// it, driven besides by what open gives it to follow (nil: nothing, a tab
// in no room; the lab's own stream follows the tab's room, a recording's
// player stream the player). An error of open is the stream's answer
// (of its kind, else 422), but ErrRoomsNotReady: the stream then waits
// for the rooms, open again; and a tab's room that is gone, which the
// stream says on the page. The request's signals are its body, read
// here once: open reads them again with StreamSignals.
func (s *Lab) ServeStream(w http.ResponseWriter, r *http.Request, open func(*http.Request, *Session) (Follow, error)) {
	release, ok := s.streamSlot(w, r)
	if !ok {
		return
	}
	defer release()
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), signalsKey{}, body))
	var sig TabSignals
	if !readTab(w, r, &sig, body) {
		return
	}
	sess, ok := s.tabSession(w, r, &sig, true)
	if !ok {
		return
	}
	defer func() { sess.countStream(-1) }() // tabSession counted this stream
	f, err := open(r, sess)
	// Datastar does not retry a stream answered with an error status: a
	// room stream that met a bus not open yet waits for it instead, and a
	// room that is gone says so on the page (below).
	waiting := errors.Is(err, ErrRoomsNotReady)
	if err != nil && !waiting && !roomGone(err) {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	cw, sse, done := sseResponse(w, r)
	defer done()
	if waiting {
		f, err = s.awaitRoom(r, sess, cw, open)
		if err != nil && !roomGone(err) {
			// Broken, not finished: Datastar retries, maybe elsewhere.
			panic(http.ErrAbortHandler)
		}
	}
	if err != nil { // the room is gone
		if s.workshops != nil {
			_ = s.workshops.Gone(sse, r)
		}
		return
	}
	if f == nil {
		f = noRoom{}
	}
	defer f.Close()
	defer s.streamOpened(r, sess.tab)()
	defer s.holdTab(sess.tab)()
	s.tabLoop(r, http.NewResponseController(w), cw, sse, sess, f, parseDrawn(sig.Drawn))
}

// signalsKey holds a stream request's body, its signals (ServeStream).
type signalsKey struct{}

// StreamSignals reads the signals of a stream's request into v: the body
// ServeStream read (a stream's open, and Rooms.Gone, read them here).
func StreamSignals(r *http.Request, v any) error {
	b, _ := r.Context().Value(signalsKey{}).([]byte)
	return json.Unmarshal(b, v)
}

// tabLoop is a tab's stream until the tab goes, the connection fails or
// the server shuts down: each pass sends what changed (what the tab
// follows, then the lab's), then sleeps until something does.
func (s *Lab) tabLoop(r *http.Request, rc *http.ResponseController, cw http.ResponseWriter, sse *datastar.ServerSentEventGenerator, sess *Session, f Follow, page drawn) {
	// A tab has one stream: this one ends when another of the tab's
	// starts (a page that reconnected, while this connection is not yet
	// known to be dead; issue 34: 4 000 streams of one tab id).
	replaced := sess.takeStream()
	// Every pass's writes must be read within streamWriteTimeout: a
	// reader that never reads is dropped, not held.
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)) }
	st := newStreamState(cw, csp.Nonce(sess.tab), s.redrawMemo)
	st.page = page
	check := time.NewTicker(streamCheck)
	defer check.Stop()
	keep := time.NewTicker(s.keepalive())
	defer keep.Stop()
	// A tick (keepalive, session check) takes no snapshot: that needs the
	// run, maybe gone from the cache, and idle tabs must not rebuild runs;
	// nor does it catch up with what the tab follows (nothing changed).
	var changed, followNext <-chan struct{}
	var next, followAt time.Time
	send := true
	for {
		if send {
			followNext, followAt = f.CatchUp(sess) // a follower takes the room's latest state
		}
		boardNext := f.Board()
		answersNext := f.Answers()
		deadline()
		sent := gzipstream.Batch(cw) // this pass's events leave as one
		if err := f.Send(sse, sess); err != nil {
			return
		}
		if send {
			var err error
			if changed, next, err = st.sendNow(sse, sess, s.Now()); err != nil {
				return // the browser went away
			}
		}
		if sent() != nil {
			return
		}
		if send {
			s.redraws.redrawn(sess.tab)
		}
		send = true
		wake, stop := wakeAt(earliest(next, followAt), s.Now())
		select {
		case <-r.Context().Done():
			return
		case <-replaced:
			return
		case <-s.closing:
			// The page reconnects after any end of its stream (lab.templ's
			// labStream), to the next server: an end, not an abort, leaves
			// no error in its console.
			return
		case <-changed:
		case <-followNext:
		case <-boardNext:
			send = false // the board is the room's part: sent at the top
		case <-answersNext:
			send = false // so is the question panel
		case <-wake:
		case <-keep.C:
			deadline()
			if keepaliveComment(cw) != nil {
				return
			}
			send = false
		case <-check.C:
			prev := sess
			sess = s.followSession(sess, st)
			send = sess != prev
		}
		stop()
	}
}

// earliest is the earlier of two moments, a zero one meaning never.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// sseResponse readies w for a stream and answers the writer events go
// to, the generator over it, and what ends it: no write deadline
// (http.Server's WriteTimeout would cut the stream after a few seconds,
// stack-notes §1), no buffering by a proxy in front (nginx buffers
// responses unless told not to; a stream must not wait), gzip when the
// browser takes it.
func sseResponse(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *datastar.ServerSentEventGenerator, func()) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	w.Header().Set("X-Accel-Buffering", "no")
	cw, done := gzipstream.Compress(w, r)
	return cw, datastar.NewSSE(cw, r), done
}

// wakeAt is a channel that fires at next (never, for a zero next), and
// what stops its timer.
func wakeAt(next, now time.Time) (<-chan time.Time, func()) {
	if next.IsZero() {
		return nil, func() {}
	}
	timer := time.NewTimer(max(next.Sub(now), time.Millisecond))
	return timer.C, func() { timer.Stop() }
}

// streamSlot takes one of the server's stream slots, or answers 503: a
// tab with an open stream is never dropped (SessionStore.evict), so
// -max-tabs bounds only the tabs without one, and the streams need a bound
// of their own (-max-streams), else each costs memory without end.
func (s *Lab) streamSlot(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	select {
	case <-s.closing:
		w.Header().Set("Retry-After", "1")
		httperr.Write(w, errShuttingDown, httperr.KindUnavailable)
		return nil, false
	default:
	}
	addr := addrlimit.Key(s.PeerAddr(r))
	s.addrMu.Lock()
	if n := s.addrStreams[addr]; n >= s.streamsPerAddr {
		s.addrMu.Unlock()
		w.Header().Set("Retry-After", "30")
		httperr.Write(w, httperr.Errorf(httperr.KindTooMany, "%d streams are open from your address on this server (its -streams-per-address is %d): close some tabs and try again", n, s.streamsPerAddr), httperr.KindTooMany)
		return nil, false
	}
	s.addrStreams[addr]++
	s.addrMu.Unlock()
	untake := func() {
		s.addrMu.Lock()
		defer s.addrMu.Unlock()
		if s.addrStreams[addr]--; s.addrStreams[addr] <= 0 {
			delete(s.addrStreams, addr)
		}
	}
	if s.openStreams.Add(1) > s.maxStreams {
		s.openStreams.Add(-1)
		untake()
		w.Header().Set("Retry-After", "30")
		httperr.Write(w, httperr.Errorf(httperr.KindFull, "the lab is full: %d streams are open on this server (its -max-streams); try again in a minute", s.maxStreams), httperr.KindFull)
		return nil, false
	}
	return func() { s.openStreams.Add(-1); untake() }, true
}

// keepaliveComment sends an SSE comment line: proxies and load balancers
// close a response silent for a minute or so, and a paused tab sends
// nothing.
func keepaliveComment(w http.ResponseWriter) error {
	if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// sendNow sends what changed since the last send and returns what the
// wait needs: the session's change channel and when the cursor moves
// next. The snapshot (and its run) stays in here: a waiting stream holds
// no run, so the run cache's byte bound is the runs' bound.
func (st *streamState) sendNow(sse *datastar.ServerSentEventGenerator, sess *Session, now time.Time) (<-chan struct{}, time.Time, error) {
	snap := sess.snapshot(now)
	err := st.send(sse, snap, now)
	next := snap.next
	if st.owed != nil {
		next = earliest(next, st.owedAt())
	}
	return snap.changed, next, err
}

// followSession keeps an idle stream on its tab's session: an evicted one
// is put back; if a command already rebuilt the tab's session, the stream
// moves to the new one and redraws.
func (s *Lab) followSession(sess *Session, st *streamState) *Session {
	switch cur := s.Sessions.Get(sess.tab); {
	case cur == nil:
		s.Sessions.put(sess, s.Now())
	case cur != sess:
		sess.countStream(-1)
		cur.countStream(1)
		st.gen = ^uint64(0)
		return cur
	}
	return sess
}

// keepalive is how often an idle stream sends a comment (15 s unless a
// test sets SessionStore.keepalive).
func (s *Lab) keepalive() time.Duration {
	if s.Sessions.keepalive > 0 {
		return s.Sessions.keepalive
	}
	return defaultKeepalive
}

const defaultKeepalive = 15 * time.Second

// streamState is what one connection has already sent.
type streamState struct {
	nonce string // the tab's script nonce (web/csp), hashed once per stream
	// w is the writer under the stream's generator: what every tab at the
	// same run and cursor is sent is written to it as made once
	// (panel_memo.go).
	w              io.Writer
	memo           *redrawMemo // what every tab alike is sent, made once
	gen, inputsGen uint64
	cursor         int
	runKey         string      // the key of the run drawn last
	lastRedraw     time.Time   // when the last redraw was sent (dragGap)
	owed           *owedTables // the tables a drag's redraws have not sent yet
	bytes          int         // payload bytes sent (before compression), for the benchmarks
	// url is the address last sent (free lab only).
	url string
	// injectHosts is how many hosts the inject menu last listed.
	injectHosts int
	// A lesson page's live numbers and step statuses as last sent, and
	// the lesson they are of (a room's page changes lesson in place).
	ph     []string
	steps  []view.StepStatus
	lesson *lessonbook.Doc
	// streaksAt is the run and cursor the lesson's streaks figure was
	// last sent (or drawn by the page) at (streaks.go).
	streaksAt string
	// page is what the page was drawn with, until the first redraw.
	page drawn
}

// send brings the browser from what this connection sent last to snap.
func (st *streamState) send(sse *datastar.ServerSentEventGenerator, snap snapshot, now time.Time) error {
	switch {
	case snap.gen != st.gen || snap.run.Key != st.runKey:
		return st.redraw(sse, snap, now, true)
	case snap.cursor != st.cursor && st.owed != nil:
		// The log grows from what the page shows: the tables a drag
		// left behind are drawn whole first.
		return st.redraw(sse, snap, now, false)
	case snap.cursor != st.cursor:
		return st.advance(sse, snap, now)
	case st.owed != nil && !now.Before(st.owedAt()):
		panels, err := st.memo.sharedPanels(snap, st.owed.yaml, panelsTables)
		if err != nil {
			return err
		}
		st.owed = nil
		return st.writeShared(panels, snap.room)
	}
	return nil
}

// A slider dragged sends a command every 120 ms (its input's throttle,
// lab.templ), and each redraws the tab. The charts and the status line
// are what the person watches while dragging; the decision log, Envoy's
// stats and hosts and the YAML are below them (at 1280×800 the log
// starts near 2 000 px down), and morphing them was about a quarter of
// a move's time on the page (5–10 ms of 40–60: issue 37's slider budget,
// measured by sending no tables at all). So a redraw that follows the
// stream's last one within dragGap sends the status line and the charts
// at once and owes the tables: they follow once the redraws rest for
// dragGap, or dragMaxLag after the first one owed, whichever is first,
// and before anything else (a played frame grows the log from them).
// Only a slider's redraw (Session.slid) owes them: a step, an injected
// fault, a single move after a rest, a page's first redraw send
// everything at once.
const (
	dragGap    = 250 * time.Millisecond
	dragMaxLag = 500 * time.Millisecond
)

// owedTables is what a drag's redraws left unsent: since the first, and
// whether a new run's Envoy config is among them.
type owedTables struct {
	since time.Time
	yaml  bool
}

// owedAt is when the owed tables are sent.
func (st *streamState) owedAt() time.Time {
	at := st.lastRedraw.Add(dragGap)
	if late := st.owed.since.Add(dragMaxLag); late.Before(at) {
		return late
	}
	return at
}

// redraw sends everything: signals, every panel, every chart from
// scratch; a command's redraw during a drag (mayOwe) leaves the tables
// for later (dragGap).
func (st *streamState) redraw(sse *datastar.ServerSentEventGenerator, snap snapshot, now time.Time, mayOwe bool) error {
	page := st.page // what the page shows, for this first redraw only
	st.page = drawn{}
	// The settings panel and the inputs' signals, unless the page has them
	// (a signal patch of the inputs would also have its lint panel post).
	newInputs := snap.inputsGen != st.inputsGen && !page.hasControls(snap)
	sig := redrawSignalsOf(snap, newInputs)
	repaged := snap.lesson != st.lesson
	if repaged {
		// Another page than this connection drew (a room's page patched
		// in place, web/room's repage): what it has is the new page's.
		st.ph, st.steps, st.lesson, st.streaksAt = nil, nil, snap.lesson, ""
	}
	if page != (drawn{}) || repaged {
		sig.Drawn = new(string)
	}
	if err := st.patchSignals(sse, sig); err != nil {
		return err
	}
	if newInputs {
		if err := st.patch(sse, templates.Controls(controlsFor(snap.run, snap.lesson))); err != nil {
			return err
		}
	}
	if err := st.inject(sse, snap); err != nil {
		return err
	}
	if err := st.address(sse, snap); err != nil {
		return err
	}
	// The status line, the notice, the log, the tables and (for a new run)
	// the config: the same for every tab at this run and cursor.
	newRun := snap.run.Key != st.runKey
	if page.hasPanels(snap, newRun) {
		// The page drew its panels at this run and cursor: its figure too.
		st.streaksAt = streaksKey(snap)
	} else {
		part, yaml := panelsAll, newRun
		if st.owed != nil {
			yaml = yaml || st.owed.yaml
		}
		if mayOwe && snap.slid && !repaged && !newInputs && !st.lastRedraw.IsZero() && now.Sub(st.lastRedraw) < dragGap {
			part = panelsStatus
			if st.owed == nil {
				st.owed = &owedTables{since: now}
			}
			st.owed.yaml = yaml
		} else {
			st.owed = nil
		}
		panels, err := st.memo.sharedPanels(snap, yaml, part)
		if err != nil {
			return err
		}
		if err := st.writeShared(panels, snap.room); err != nil {
			return err
		}
	}
	st.lastRedraw = now
	if err := st.lessonLive(sse, snap); err != nil {
		return err
	}
	if err := st.charts(sse, snap, true); err != nil {
		return err
	}
	st.gen, st.inputsGen, st.cursor, st.runKey = snap.gen, snap.inputsGen, snap.cursor, snap.run.Key
	return nil
}

// lessonLive brings a lesson page's live parts to the cursor: the numbers
// in the prose (the _ph signals) and each step's status, sending only what
// changed since this connection's last send.
func (st *streamState) lessonLive(sse *datastar.ServerSentEventGenerator, snap snapshot) error {
	d := snap.lesson
	if d == nil {
		return nil
	}
	vals := d.Values(snap.run, snap.cursor)
	if diff := slotSignals(vals, st.ph); len(diff) > 0 {
		if err := st.patchSignals(sse, placeholderSignals{PH: diff}); err != nil {
			return err
		}
	}
	st.ph = vals
	statuses := d.Statuses(snap.run, snap.watchFrom, snap.cursor)
	for i, s := range statuses {
		if i < len(st.steps) && st.steps[i] == s {
			continue
		}
		if err := st.patch(sse, templates.StepStatus(s)); err != nil {
			return err
		}
	}
	st.steps = statuses
	return st.streaks(sse, snap)
}

// advance sends what the frames since the last send add: the new log
// entries (prepended), the tables and status at the new cursor, and the
// charts' new options merged into the old.
func (st *streamState) advance(sse *datastar.ServerSentEventGenerator, snap snapshot, now time.Time) error {
	if snap.cursor < st.cursor {
		return st.redraw(sse, snap, now, false)
	}
	if err := st.patchSignals(sse, frameSignalsOf(snap)); err != nil {
		return err
	}
	if err := st.patch(sse, templates.LabStatus(statusView(snap))); err != nil {
		return err
	}
	if entries, replaced, _ := tabstate.FoldedLog(snap.run, st.cursor, snap.cursor, 0); len(entries) > 0 {
		// A folded run of non-events that grew is prepended anew.
		if len(replaced) > 0 {
			if err := sse.RemoveElement("#" + strings.Join(replaced, ",#")); err != nil {
				return err
			}
		}
		var b bytes.Buffer
		if err := templates.LogEntries(entries).Render(context.Background(), &b); err != nil {
			return err
		}
		st.bytes += b.Len()
		if err := sse.PatchElements(b.String(), datastar.WithSelectorID("log-list"), datastar.WithModePrepend()); err != nil {
			return err
		}
	}
	p := labview.Panels(snap.run, snap.cursor)
	for _, c := range []templ.Component{templates.EnvoyStats(p), templates.EnvoyHosts(p)} {
		if err := st.patch(sse, c); err != nil {
			return err
		}
	}
	if !snap.playing {
		// Playback ended (or reached a hold): the address gets its cursor.
		// While playing it is left alone: browsers throttle replaceState,
		// and a link is shared from a paused tab.
		if err := st.address(sse, snap); err != nil {
			return err
		}
	}
	if err := st.lessonLive(sse, snap); err != nil {
		return err
	}
	if err := st.charts(sse, snap, false); err != nil {
		return err
	}
	st.cursor = snap.cursor
	return nil
}

// inject re-renders the free lab's list of injected faults, and its host
// menu when the host count changed: an unchanged menu is left alone so
// that it keeps the host the visitor picked.
func (st *streamState) inject(sse *datastar.ServerSentEventGenerator, snap snapshot) error {
	if snap.lesson != nil {
		return nil
	}
	list, err := st.memo.sharedInjectList(snap.run)
	if err != nil {
		return err
	}
	if err := st.writeShared(list, snap.room); err != nil {
		return err
	}
	if len(snap.run.Hosts) == st.injectHosts {
		return nil
	}
	if st.injectHosts != 0 {
		// The menu's hosts changed under it: it shows h0 again.
		if err := st.patchSignals(sse, injectHostSignal{InjectHost: "h0"}); err != nil {
			return err
		}
	}
	st.injectHosts = len(snap.run.Hosts)
	return st.patch(sse, templates.InjectHosts(tabstate.InjectView(snap.run)))
}

// redrawSignalsOf is the redraw's signals at snap, with the inputs when
// the server chose them since this connection's last redraw.
func redrawSignalsOf(snap snapshot, newInputs bool) redrawSignals {
	sig := redrawSignals{frameSignals: frameSignalsOf(snap), Frames: len(snap.run.Frames), Speed: snap.speed.Name}
	if snap.lesson == nil {
		sig.Inject = &snap.in.Inject
	}
	if newInputs {
		sig.InputSignals = &tabstate.InputSignals{Preset: snap.in.Preset, Cfg: controlSignals(snap.run, snap.lesson)}
		if snap.lesson != nil {
			sig.Step = &snap.step
		}
	}
	return sig
}

// frameSignalsOf is the frame's signals at snap; held only on a lesson
// page.
func frameSignalsOf(snap snapshot) frameSignals {
	sig := frameSignals{Cursor: snap.cursor, Playing: snap.playing}
	if snap.lesson != nil {
		sig.Held = &snap.held
	}
	return sig
}

func (st *streamState) patch(sse *datastar.ServerSentEventGenerator, c templ.Component) error {
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		return err
	}
	st.bytes += b.Len()
	return sse.PatchElements(b.String())
}

func (st *streamState) patchSignals(sse *datastar.ServerSentEventGenerator, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	st.bytes += len(b)
	return sse.PatchSignals(b)
}

// address keeps a free-lab tab's address bar on the permalink of what it
// shows (tabstate/permalink.go): settings, preset and cursor, never the tab id, so
// the address can be shared, bookmarked or reloaded. It is sent at each
// redraw (a command: settings, preset, a cursor move) when it changed since
// this connection's last one; while playing, frames do not move it. Lesson
// pages keep their address.
func (st *streamState) address(sse *datastar.ServerSentEventGenerator, snap snapshot) error {
	if snap.lesson != nil || snap.room {
		return nil
	}
	u := st.memo.charts.Permalink(snap.run, snap.cursor)
	if u == st.url {
		return nil
	}
	js := replaceURL(u)
	st.bytes += len(js)
	if err := csp.Script(sse, st.nonce, js); err != nil {
		return err
	}
	st.url = u
	return nil
}

// replaceURL is a script that points the free lab's address at u without
// a new history entry (lesson pages keep theirs): js/page.js's
// olabAddress replaces the address once the redraws have stopped for a
// moment and the last is painted, and does nothing when it is already u, as after opening a permalink (the page's
// address is not compared here: an earlier address may still be waiting
// for its frame). A browser that refuses too many replaceState calls in a
// row (a long slider drag) keeps the previous address until the next
// change.
func replaceURL(u string) string {
	q, _ := json.Marshal(u)
	return "window.olabAddress && olabAddress(" + string(q) + ")"
}

// charts brings the page's charts to snap's cursor. replace (a redraw)
// sends every chart's whole option and drops the old one first (a new run
// may have other hosts); otherwise the page holds the options at this
// connection's last cursor on the same run, and gets the patch from there
// (web/chart/chart_patch.go). Both are built once for a room's followers
// (web/chart/chart_memo.go); a room's streams share its event too (panel_memo.go).
func (st *streamState) charts(sse *datastar.ServerSentEventGenerator, snap snapshot, replace bool) error {
	var js string
	var err error
	if replace {
		js, err = st.memo.charts.At(snap.run, snap.cursor, true)
	} else {
		js, err = st.memo.charts.Step(snap.run, st.cursor, snap.cursor)
	}
	if err != nil {
		return err
	}
	if replace && snap.room {
		// The same script for every follower of the room's move.
		return st.writeScript(js)
	}
	st.bytes += len(js)
	return csp.Script(sse, st.nonce, js)
}

// roomGone reports whether err is a room that is gone (roomGoneError).
func roomGone(err error) bool {
	var g roomGoneError
	return errors.As(err, &g)
}

// awaitRoom waits for the room bus with the stream open (keepalives keep
// a proxy from timing it out), then binds the stream to its room. The
// wait ends with the bus open, the browser gone, the server shutting down
// (an error: the stream is then broken and Datastar retries), or a room
// that is gone.
func (s *Lab) awaitRoom(r *http.Request, sess *Session, w http.ResponseWriter, open func(*http.Request, *Session) (Follow, error)) (Follow, error) {
	keep := time.NewTicker(s.keepalive())
	defer keep.Stop()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ready := make(chan error, 1)
	go func() { ready <- s.workshops.WaitReady(ctx) }()
	if keepaliveComment(w) != nil {
		return nil, roombus.ErrNotReady
	}
	for {
		select {
		case err := <-ready:
			if err != nil {
				return nil, err
			}
			return open(r, sess)
		case <-s.closing:
			return nil, ErrRoomsNotReady
		case <-keep.C:
			if keepaliveComment(w) != nil {
				return nil, ErrRoomsNotReady
			}
		}
	}
}
