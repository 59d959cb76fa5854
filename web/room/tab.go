package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/csp"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
)

// How a tab takes part in its room. The role comes from the page the tab
// was opened as (its roomRole signal); publishing also needs the key.
type roomRole uint8

const (
	// roleFollower is an attendee: follows the room until it touches a
	// control, then explores on its own until it rejoins.
	roleFollower roomRole = iota
	// roleProjector follows the room and takes no commands.
	roleProjector
	// rolePresenter is the instructor's tab: its commands, with the key,
	// become the room's state.
	rolePresenter
)

// tabRoom is a tab's place in a room: the session holds it (a Tie), the
// room reads and writes it under its own mu, never the session's. Code and
// role are fixed when it is bound. A room holds mu while it applies a
// state to the session (applyRoom): tabRoom.mu, then the session's.
type tabRoom struct {
	code string
	role roomRole
	mu   sync.Mutex
	// follow: a follower applies the room's states; false once it broke
	// away.
	follow bool
	// applied is the room revision this tab last applied or published.
	applied uint64
	// cfgGen counts the states applied: the stream patches the page's
	// settings signals (cfg) after each.
	cfgGen uint64
	// summoned is the room's Summon this tab has obeyed (board.go).
	summoned int
	// publishing counts the instructor tab's own commands under way: it
	// applies no room state meanwhile, since its command's publish will
	// be the room's latest (a state of the bus older than the command
	// would move the tab back under the instructor's hand).
	publishing int
	// pageRev is the room's revision the page was drawn at: an older one
	// (a replica whose hub lags the one that drew the page) is not
	// applied, and never sends the page back to an older lesson.
	pageRev uint64
	// navigate is a revision that shows another page (another lesson, or
	// the free lab where the tab has a lesson): the tab is on it, and its
	// stream patches the page in place to it (navSent: done; repage).
	navigate, navSent uint64
}

// RoomCode is the room's code (Tie).
func (tr *tabRoom) RoomCode() string { return tr.code }

// tieOf is the tab's place in a room, nil for a tab in none.
func tieOf(sess *lab.Session) *tabRoom {
	tr, _ := sess.TieOf().(*tabRoom)
	return tr
}

// following reports whether the tab follows its room (false in none).
func (tr *tabRoom) following() bool {
	if tr == nil {
		return false
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.follow
}

// roomSignals are the room page's signals, sent with every request of
// the tab (web/lab/signals.go's TabSignals are the lab's).
type roomSignals struct {
	Room     string `json:"room"`
	RoomRole string `json:"roomRole"`
	Follow   *bool  `json:"follow"`
	// RoomRev is the room's revision the page was drawn at.
	RoomRev uint64 `json:"roomRev"`
}

// bindRoom gives a tab its room from its signals the first time a request
// names one (the session may be new, or rebuilt after an eviction); nil
// for a tab in no room.
func (s *Workshops) bindRoom(sess *lab.Session, rs roomSignals) (*tabRoom, error) {
	t, err := sess.Tie(func() (lab.Tie, error) {
		if rs.Room == "" {
			return nil, nil
		}
		if s.rooms == nil {
			return nil, errNoWorkshops
		}
		code, valid := record.NormalCode(rs.Room)
		if !valid {
			return nil, httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Field: "room", Msg: fmt.Sprintf("%q is not a room code (allowed %d of %s)", httperr.Truncate(rs.Room, 20), record.CodeLen, record.CodeAlphabet)})
		}
		tr := &tabRoom{code: code, follow: rs.Follow == nil || *rs.Follow, pageRev: rs.RoomRev}
		switch rs.RoomRole {
		case "", "follow":
		case "projector":
			tr.role, tr.follow = roleProjector, true
		case "present":
			tr.role = rolePresenter
		default:
			return nil, httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Field: "roomRole", Msg: fmt.Sprintf("%q is not a role (allowed follow, present, projector)", httperr.Truncate(rs.RoomRole, 20))})
		}
		return tr, nil
	})
	tr, _ := t.(*tabRoom)
	return tr, err
}

// roomCommand runs a command (apply) for a tab in a room: a projector
// takes none; a follower breaks away with any command but rejoin and
// answer (a prediction is the attendee's own, the room's timeline is the
// instructor's); the presenter's commands, with the room's key, are then
// published as the room's state. A tab in no room just runs it.
func (s *Workshops) roomCommand(r *http.Request, sess *lab.Session, verb string, body []byte, apply func() error) error {
	var rs roomSignals
	_ = json.Unmarshal(body, &rs) // the command already refused a body that is not JSON
	tr, err := s.bindRoom(sess, rs)
	if err != nil {
		return err
	}
	if tr == nil {
		return apply()
	}
	// A command naming a code that is no room counts as a guess, as any
	// request of a room does (limit.go): 404 against 204 or 403 here
	// would tell live codes too.
	if _, err := s.rooms.find(r, tr.code); err != nil {
		return roomError(err)
	}
	switch tr.role {
	case roleProjector:
		return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "room", Msg: "the projector view follows the room and takes no commands"})
	case roleFollower:
		switch {
		case !tr.following() || verb == "rejoin":
		case verb == "answer":
			// The command noted the answer; the room's hold stands.
			return s.snapToRoom(r.Context(), sess, tr.code)
		case s.roomLocked(r.Context(), tr.code):
			return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "room", Msg: "the instructor has locked the room: your page follows theirs until they unlock it"})
		default:
			tr.mu.Lock()
			tr.follow = false
			tr.mu.Unlock()
		}
		return apply()
	}
	hub, err := s.rooms.open(r.Context(), tr.code, "")
	if err != nil {
		return roomError(err)
	}
	defer hub.release("")
	if rec := hub.current().rec; !rec.KeyMatches(roomKey(r, tr.code)) {
		return errNotKeyHolder(tr.code)
	}
	if verb == "answer" && hub.current().rec.State.Plan != "" {
		// The instructor's own answer to the lesson's prediction, in a
		// plan's room: the room plays as its scene says
		// (record.State.Snapshot), and the answer never moves it.
		return nil
	}
	tr.mu.Lock()
	tr.publishing++
	tr.mu.Unlock()
	defer func() {
		tr.mu.Lock()
		tr.publishing--
		tr.mu.Unlock()
	}()
	if err := apply(); err != nil {
		return err
	}
	if err := hub.publish(r.Context(), sess); err != nil {
		// The instructor's move is not the room's: say so (503, the bus),
		// rather than 204 for a move nobody follows.
		s.lab.Log.Error("room bus: publish", "room", tr.code, "err", err)
		return httperr.WithKind(httperr.KindOf(err, httperr.KindUnavailable), err)
	}
	return nil
}

// roomError gives a room error its kind.
func roomError(err error) error {
	switch {
	case errors.Is(err, errRoomNotFound):
		return httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "room", Msg: "there is no such room (it may have ended: rooms expire 12 h after their last change)"})
	case errors.Is(err, errRoomsFull), errors.Is(err, errRoomFull), errors.Is(err, roombus.ErrNotReady):
		return httperr.WithKind(httperr.KindOf(err, httperr.KindUnavailable), err)
	case errors.Is(err, errAddrFull):
		return httperr.WithKind(httperr.KindTooMany, err)
	}
	return err
}

// Rejoin puts a follower that broke away back on the room's current
// state, and it follows again.
func (ws roomHooks) Rejoin(sess *lab.Session) error {
	s := ws.s
	tr := tieOf(sess)
	if tr == nil || tr.role == rolePresenter {
		return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "room", Msg: "this tab follows no room"})
	}
	tr.mu.Lock()
	tr.follow = true
	tr.mu.Unlock()
	sess.Touch() // the banner goes even if the state cannot be applied
	return s.snapToRoom(context.Background(), sess, tr.code)
}

// snapToRoom applies the room's current state to the tab again, whatever
// it applied before.
func (s *Workshops) snapToRoom(ctx context.Context, sess *lab.Session, code string) error {
	hub, err := s.rooms.open(ctx, code, "")
	if err != nil {
		return roomError(err)
	}
	defer hub.release("")
	if tr := tieOf(sess); tr != nil {
		tr.mu.Lock()
		tr.applied = 0
		tr.mu.Unlock()
	}
	s.applyRoom(sess, hub.current())
	return nil
}

// applyRoom brings a tab to the room's state n, if it is newer than what
// the tab has and the tab applies states: a follower that follows, the
// projector, and every instructor tab (a second one, a reloaded one, the
// one whose scene move the API wrote), but not while a command of its own
// is being published. A state on another page than the tab's (another
// lesson, the free lab) puts the tab on that page, and its stream patches
// the page in place (navigate, repage).
func (s *Workshops) applyRoom(sess *lab.Session, n roomNow) {
	tr := tieOf(sess)
	if tr == nil || n.run == nil {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if n.rev <= tr.applied || n.rev < tr.pageRev {
		return
	}
	tr.obeyRoom(&n.rec.State)
	if tr.role == rolePresenter && tr.publishing > 0 || tr.role != rolePresenter && !tr.follow {
		return
	}
	tr.applied = n.rev
	st := n.rec.State.Snapshot(n.in, n.run, n.lesson)
	if _, ok := sess.Follow(st); !ok {
		sess.FollowPage(st)
		tr.navigate = n.rev // the stream patches the page (roomWatch.Send)
	}
	tr.cfgGen++
}

// roomWatch is one stream's link to its tab's room: the hub it holds
// open, and the room signals last sent to the page.
type roomWatch struct {
	s   *Workshops
	hub *roomHub
	// r is the stream's request: a page patched in place (repage) is
	// drawn for it, as the room's page was.
	r *http.Request
	// from is an attendee stream's client address, counted by the hub
	// ("" for the instructor's).
	from   string
	follow int8   // follow flag sent: -1 none yet, 0 false, 1 true
	cfgGen uint64 // the tab's cfgGen when cfg was last sent
	// role and who (the attendee) pick the question panel's view; qSent
	// is the panel last sent.
	role, who string
	qSent     string
	// chSent is the challenge panel last sent (challengeview.go).
	chSent string
	// sceneSent is the plan and scene the scene panel last showed ("":
	// as the page was rendered).
	sceneSent string
	// The board: the presence last written and when (an attendee's), the
	// board generation last sent (the instructor's).
	pSent     string
	pAt       time.Time
	pDone     []string       // the lesson's steps the attendee has done in this stream
	pWriting  atomic.Bool    // a presence write is on the bus
	pWrites   sync.WaitGroup // the presence writes under way
	boardGen  uint64
	boardSent bool
	// boardScenes is the plan progress the board last showed, boardIDs
	// the room's identities per address.
	boardScenes string
	boardIDs    int
	keyOK       bool
	spotSent    *record.SpotSignal    // the spotlight last sent
	exploreSent *record.ExploreSignal // the explore timer last sent (explore.go)
}

// roomStream binds a stream's tab to the room its signals name and holds
// the room's hub for the stream's life; nil (and no error) for a tab in no
// room. A room that does not exist, or is full here, is an error; so is an
// attendee's stream (a follower's or the projector's) without the
// identity the room's page gives (issue 19, defect 5: crafted streams
// filled a room), or one address's stream past AttendeesPerAddress.
func (s *Workshops) roomStream(r *http.Request, sess *lab.Session) (*roomWatch, error) {
	var rs roomSignals
	_ = lab.StreamSignals(r, &rs) // the stream already refused signals that are not JSON
	tr, err := s.bindRoom(sess, rs)
	if err != nil || tr == nil {
		return nil, err
	}
	if !s.rooms.bus.Ready() {
		// Before the lookup: the stream waits for the bus (web/lab/stream.go), and
		// the identity is checked once the room can be read.
		return nil, roombus.ErrNotReady
	}
	rec, err := s.rooms.find(r, tr.code)
	if err != nil {
		return nil, roomError(err)
	}
	var who, from string
	if tr.role != rolePresenter {
		if who = rec.Attendee(r, tr.code); who == "" {
			return nil, errNoAttendee(tr.code)
		}
		from = s.rooms.clientAddr(r)
	}
	hub, err := s.rooms.open(r.Context(), tr.code, from)
	if err != nil {
		return nil, roomError(err)
	}
	role := map[roomRole]string{roleFollower: "follow", roleProjector: "projector", rolePresenter: "present"}[tr.role]
	// The board shows who answered what: only to the holder of the key.
	cur := hub.current()
	keyOK := tr.role == rolePresenter && cur.rec.KeyMatches(roomKey(r, tr.code))
	if tr.role == rolePresenter && !keyOK {
		// An instructor's stream is the key holder's (issue 34: a crafted
		// present stream, with a tab id it knew, took over a tab).
		hub.release(from)
		return nil, errNotKeyHolder(tr.code)
	}
	return &roomWatch{s: s, hub: hub, r: r, from: from, follow: -1, role: role, who: who, keyOK: keyOK}, nil
}

// CatchUp applies the room's latest state to the tab if it follows, and
// returns the channel closed at the room's next state (nil, never ready,
// for a stream in no room); a room changes only when told to.
func (w *roomWatch) CatchUp(sess *lab.Session) (<-chan struct{}, time.Time) {
	if w == nil {
		return nil, time.Time{}
	}
	n := w.hub.current()
	w.s.applyRoom(sess, n)
	return n.next, time.Time{}
}

// roomPatch is what the stream sets for the room: the follow flag (the
// break-away banner and its Rejoin button show when it is false) and,
// after a room state was applied, every setting, so that the page's
// sliders move to the instructor's. The settings panel itself is left as
// it is (re-rendered only when the preset or the step changes), as it is
// after the instructor's own slider move.
type roomPatch struct {
	Follow *bool              `json:"follow,omitempty"`
	Cfg    map[string]any     `json:"cfg,omitempty"`
	Spot   *record.SpotSignal `json:"spot,omitempty"`
	// Explore is the scene's explore timer (explore.go).
	Explore *record.ExploreSignal `json:"explore,omitempty"`
}

// Send patches the room's signals that changed since the last send.
func (w *roomWatch) Send(sse *datastar.ServerSentEventGenerator, sess *lab.Session) error {
	if w == nil {
		return nil
	}
	var p roomPatch
	follow, cfgGen := false, w.cfgGen
	if tr := tieOf(sess); tr != nil {
		tr.mu.Lock()
		follow, cfgGen = tr.follow, tr.cfgGen
		tr.mu.Unlock()
	}
	if tr := tieOf(sess); tr != nil {
		tr.mu.Lock()
		nav := tr.navigate > tr.navSent
		tr.navSent = tr.navigate
		tr.mu.Unlock()
		if nav {
			if err := w.repage(sse, sess); err != nil {
				return err
			}
		}
	}
	if f := int8(tabstate.B2F(follow)); f != w.follow {
		w.follow, p.Follow = f, &follow
	}
	if cfgGen != w.cfgGen {
		w.cfgGen = cfgGen
		p.Cfg = sess.ControlSignals()
	}
	if sp := w.hub.current().rec.State.Spot.Signal(); w.spotSent == nil || *w.spotSent != sp {
		w.spotSent, p.Spot = &sp, &sp
	}
	cur := w.hub.current()
	p.Explore = w.exploreToSend(&cur.rec.State)
	if err := w.sendQuestion(sse); err != nil {
		return err
	}
	if err := w.sendScene(sse); err != nil {
		return err
	}
	if err := w.sendChallenge(sse); err != nil {
		return err
	}
	w.putPresence(sess)
	if err := w.sendBoard(sse); err != nil {
		return err
	}
	if p.Follow == nil && p.Cfg == nil && p.Spot == nil && p.Explore == nil {
		return nil
	}
	return sse.MarshalAndPatchSignals(p)
}

// repage patches the page in place to the room's page (another lesson,
// or the free lab; issue 33: a scene on another lesson was a page load,
// 3–6 s, and the page lost its place): its main part as the room's page
// draws it for this tab, then its title, and the window at the new page's
// top, as a load would (the page's elements set themselves up: the charts
// are <olab-chart> elements, a lesson's data-init). What the room's parts last sent is sent again, and the
// lab's stream redraws the new page (its session is on it: FollowPage).
func (w *roomWatch) repage(sse *datastar.ServerSentEventGenerator, sess *lab.Session) error {
	cur := w.hub.current()
	rec := cur.rec
	rec.Rev = cur.rev // the page's roomRev signal
	pg, err := w.s.roomPage(w.r, w.hub.code, &rec, w.role, sess.Tab(), true)
	if err != nil {
		return err
	}
	if err := sse.PatchElementTempl(templates.RoomMain(pg.layout, pg.body)); err != nil {
		return err
	}
	// The new page's signals, in order: before what the room and the
	// lab's redraw send after them.
	if err := sse.PatchSignals([]byte(pg.signals)); err != nil {
		return err
	}
	title, _ := json.Marshal(pg.layout.Title + " · outlierlab")
	if err := csp.Script(sse, csp.Nonce(sess.Tab()), "document.title = "+string(title)+"; window.scrollTo(0, 0)"); err != nil {
		return err
	}
	w.follow, w.qSent, w.sceneSent, w.boardSent, w.boardScenes, w.chSent = -1, "", "", false, "", ""
	w.spotSent, w.exploreSent = nil, nil
	return nil
}

// sendQuestion patches the question panel when what it shows changed.
func (w *roomWatch) sendQuestion(sse *datastar.ServerSentEventGenerator) error {
	v := w.hub.questionView(w.role, w.who)
	key := fmt.Sprintf("%s|%t|%d|%s|%v", v.ID, v.Revealed, v.Count, v.Mine, v.Hist)
	if key == w.qSent {
		return nil
	}
	w.qSent = key
	return sse.PatchElementTempl(templates.RoomQuestionPanel(v))
}

// sendScene patches the scene panel when the room changed scene. The
// page was rendered at the room's scene then, so the first send, which
// may be of a later one, always patches.
func (w *roomWatch) sendScene(sse *datastar.ServerSentEventGenerator) error {
	n := w.hub.current()
	st := &n.rec.State
	if st.Plan == "" {
		return nil
	}
	key := st.Plan + "|" + strconv.Itoa(st.Scene)
	if key == w.sceneSent {
		return nil
	}
	w.sceneSent = key
	role := w.role
	if role == "present" && !w.keyOK {
		role = "follow" // the notes and the plan's answers are the key holder's alone
	}
	return sse.PatchElementTempl(templates.RoomScenePanel(w.s.plans.View(w.hub.code, role, st)))
}

// Close releases the hub.
func (w *roomWatch) Close() {
	if w != nil {
		w.dropPresence()
		w.hub.release(w.from)
	}
}

// roomHooks is the lab's view of the rooms (lab.Rooms).
type roomHooks struct{ s *Workshops }

func (ws roomHooks) Command(r *http.Request, sess *lab.Session, verb string, body []byte, apply func() error) error {
	return ws.s.roomCommand(r, sess, verb, body, apply)
}

func (ws roomHooks) Stream(r *http.Request, sess *lab.Session) (lab.Follow, error) {
	w, err := ws.s.roomStream(r, sess)
	switch {
	case errors.Is(err, roombus.ErrNotReady):
		return nil, fmt.Errorf("%w: %w", lab.ErrRoomsNotReady, err)
	case err != nil || w == nil:
		return nil, err // no typed nil in the interface
	}
	return w, nil
}

func (ws roomHooks) WaitReady(ctx context.Context) error {
	if ws.s.rooms == nil {
		return nil
	}
	return ws.s.rooms.bus.WaitReady(ctx)
}

func (ws roomHooks) StartStrip(home bool) templ.Component { return ws.s.startStrip(home) }

// Gone tells a room's page that the room is gone: the room's bar says so,
// and the tab follows nobody. The stream then ends, the page's conn
// signal set to ended so that it does not reconnect (templates/stream.go);
// the lab on the page stays the tab's own.
func (ws roomHooks) Gone(sse *datastar.ServerSentEventGenerator, r *http.Request) error {
	var rs roomSignals
	_ = lab.StreamSignals(r, &rs)
	code := html.EscapeString(rs.Room)
	if err := sse.PatchElements(`<section id="room-bar" class="room-strip room-bar ended" role="alert" aria-label="Workshop">` +
		`<span class="room-title">Workshop <span class="room-code">` + code + `</span> has ended</span> ` +
		`<span>There is no such room any more (rooms expire 12 h after their last change): what you see is yours to explore. ` +
		`<a href="/">Join another workshop</a>.</span></section>`); err != nil {
		return err
	}
	return sse.MarshalAndPatchSignals(map[string]any{"follow": false, "conn": lab.ConnEnded})
}

// errNotKeyHolder refuses an instructor's command or stream without the
// room's key.
func errNotKeyHolder(code string) error {
	return httperr.WithKind(httperr.KindForbidden, &httperr.FieldError{Field: "key", Msg: "this browser's instructor key is not room " + code + "'s (stale or missing): open the room's present link again"})
}
