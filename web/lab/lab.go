// Package lab serves the free lab and the lessons: their pages, a tab's
// session, its commands and its one stream. It knows workshops only
// through the Rooms and Follow interfaces the rooms implement (web), and
// imports no room code.
package lab

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/lessons"
	"outlierlab/web/asset"
	"outlierlab/web/budget"
	"outlierlab/web/chart"
	"outlierlab/web/clientaddr"
	"outlierlab/web/httperr"
	"outlierlab/web/lessonbook"
	"outlierlab/web/page"
	"outlierlab/web/tabrelay"
	"outlierlab/web/tabstate"
)

// Lab serves the free lab and the lessons: their pages, a tab's stream and
// its commands (the import and lint tools on its page are web/tools). It holds
// what the tabs need (sessions, the run cache, the lessons) and is given
// the rest; it knows workshops only through Rooms.
type Lab struct {
	// What the lab shares with the features served beside it (the rooms
	// take the same pages, runs, tabs, lessons and clock).
	Pages    *page.Pages
	Runs     *tabstate.RunCache
	Sessions *SessionStore
	Lessons  *lessonbook.Book
	Now      func() time.Time
	Log      *slog.Logger
	// MaxBody bounds a command's body; Proxies are those whose
	// X-Forwarded-For is believed.
	MaxBody int64
	Proxies clientaddr.Proxies
	// Budget admits a heavy lab page's run (the lab's own runs skip it).
	Budget *budget.Budget

	redraws *redraws
	// redrawMemo is what a move sends every tab alike, made once.
	redrawMemo *redrawMemo
	// openStreams counts the streams open, at most maxStreams;
	// addrStreams by client address (addrlimit.Key), at most
	// streamsPerAddr each.
	openStreams    atomic.Int64
	maxStreams     int64
	addrMu         sync.Mutex
	addrStreams    map[string]int
	streamsPerAddr int
	// workshops is the rooms a tab may be in (nil: none).
	workshops Rooms
	// relay carries commands to the replica that holds a tab's stream
	// (nil: one replica, no bus).
	relay *tabrelay.Relay
	// forwardTo serves what other replicas forward (SetForwardHandler).
	forwardTo http.Handler

	// closing is closed by Shutdown: open streams end so that an
	// http.Server's graceful shutdown is not held up by them for ever.
	closing   chan struct{}
	closeOnce sync.Once
}

// LabOptions is what a Lab is given. Zero values pick the defaults.
type LabOptions struct {
	Assets *asset.Assets
	// MaxSessions bounds the tabs held at once (default 2000); SessionIdle
	// is how long an unused tab's session is kept (default 30 min).
	MaxSessions int
	SessionIdle time.Duration
	// MaxStreams bounds the streams open at once (default 4000; past it a
	// new stream is a 503): a tab with an open stream is never dropped, so
	// MaxSessions alone bounds only the tabs without one.
	MaxStreams int
	// StreamsPerAddress bounds one client address's streams (default 400:
	// a class behind one NAT, not the whole server).
	StreamsPerAddress int
	// TabsPerMinute and CommandsPerMinute are the per-address limits on
	// new tabs and on commands (defaults 600 and 6000).
	TabsPerMinute, CommandsPerMinute int
	// MaxBodyBytes bounds a command's body (default 64 KiB).
	MaxBodyBytes int64
	// Now is the clock of playback; tests replace it.
	Now func() time.Time
	Log *slog.Logger
	// Lessons holds the lesson files (default: the course, lessons.FS).
	Lessons fs.FS
	// Proxies are the proxies in front whose X-Forwarded-For is believed.
	Proxies clientaddr.Proxies
	// Budget admits a heavy lab page's run.
	Budget *budget.Budget
}

// NewLab is a lab over o.
func NewLab(o LabOptions) (*Lab, error) {
	if o.MaxSessions <= 0 {
		o.MaxSessions = 2000
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 4000
	}
	if o.StreamsPerAddress <= 0 {
		o.StreamsPerAddress = 400
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 30 * time.Minute
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 64 << 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Lessons == nil {
		o.Lessons = lessons.FS
	}
	if o.Budget == nil {
		o.Budget = budget.New(budget.BudgetOptions{})
	}
	book, err := lessonbook.Load(o.Lessons)
	if err != nil {
		return nil, err
	}
	runs := tabstate.NewRunCacheBytes(64, int(o.Budget.RunCacheBytes))
	runs.Beside = chart.TwinLanes // every redraw draws the compare strip
	s := &Lab{
		Lessons:     book,
		Runs:        runs,
		Sessions:    newSessionStore(o.MaxSessions, o.SessionIdle),
		Now:         o.Now,
		Log:         o.Log,
		MaxBody:     o.MaxBodyBytes,
		Proxies:     o.Proxies,
		maxStreams:  int64(o.MaxStreams),
		addrStreams: map[string]int{}, streamsPerAddr: o.StreamsPerAddress,
		Budget:     o.Budget,
		closing:    make(chan struct{}),
		redraws:    newRedraws(),
		redrawMemo: newRedrawMemo(),
	}
	if o.TabsPerMinute > 0 || o.CommandsPerMinute > 0 {
		s.SetClientLimits(cmp.Or(o.TabsPerMinute, newPerMinute), cmp.Or(o.CommandsPerMinute, DefaultCommandsPerMinute))
	}
	s.Runs.Budget = o.Budget
	s.Pages = page.New(o.Assets, s.Log, s.LessonLinks())
	return s, nil
}

// SetRooms gives the lab its workshops (once, before it serves).
func (s *Lab) SetRooms(r Rooms) { s.workshops = r }

// Shutdown ends every open stream. Call it when the http.Server starts
// shutting down (RegisterOnShutdown): streams never go idle by themselves.
// Browsers reconnect to the next server and resume at their cursor.
func (s *Lab) Shutdown() { s.closeOnce.Do(func() { close(s.closing) }) }

// Routes registers the lab's and the lessons' routes.
func (s *Lab) Routes(r chi.Router) {
	r.Get("/", s.home)
	r.Get("/lab", s.labPage)
	r.Post("/lab/stream", s.stream)
	r.Post("/lab/cmd/{verb}", s.command)
	r.Get("/lessons", s.lessonIndex)
	r.Get("/lessons/{id}", s.lessonPage)
	r.Get("/glossary", s.glossaryPage)
}

// Rooms is what the lab asks of the workshops a tab may be in; the room
// package implements it. The lab calls no room code but this.
type Rooms interface {
	// Command runs apply, a tab's command, as the tab's room says (a
	// projector takes none, a follower breaks away, the instructor's
	// becomes the room's state); a tab in no room just runs it.
	Command(r *http.Request, sess *Session, verb string, body []byte, apply func() error) error
	// Rejoin puts a follower that broke away back on its room.
	Rejoin(sess *Session) error
	// Stream binds a tab's stream to its room for the stream's life: nil
	// for a tab in none; an error that is ErrRoomsNotReady while the rooms
	// cannot serve yet (the stream then waits, WaitReady), one of kind
	// NotFound for a room that is gone.
	Stream(r *http.Request, sess *Session) (Follow, error)
	WaitReady(ctx context.Context) error
	// Gone tells a room's page that its room is gone.
	Gone(sse *datastar.ServerSentEventGenerator, r *http.Request) error
	// StartStrip is the "Start a workshop" strip of a lab or lesson page,
	// or of the home page (nil: none).
	StartStrip(home bool) templ.Component
}

// ErrRoomsNotReady is what Rooms.Stream answers (wrapped) while the rooms
// cannot serve yet.
var ErrRoomsNotReady = errors.New("the rooms are not ready")

// Follow is what a tab's stream follows besides its session: its room
// (Rooms.Stream), or a recording's player (ServeStream).
type Follow interface {
	// CatchUp puts the tab on the latest state of what it follows: the
	// channel is closed when that changes next, and (non-zero) at is when
	// it changes by itself (a recording playing on).
	CatchUp(sess *Session) (changed <-chan struct{}, at time.Time)
	// Board and Answers are closed when the room's own parts change
	// (nil: it has none).
	Board() <-chan struct{}
	Answers() <-chan struct{}
	// Send patches its parts of the page that changed.
	Send(sse *datastar.ServerSentEventGenerator, sess *Session) error
	Close()
}

// startStrip is the "Start a workshop" strip, when there are workshops.
func (s *Lab) startStrip(home bool) templ.Component {
	if s.workshops == nil {
		return nil
	}
	return s.workshops.StartStrip(home)
}

// inNoRoom reports whether a tab is in no room: its session is tied to
// none and its signals name none (room). Its commands and its stream are
// the lab's alone: they walk no room code.
func inNoRoom(sess *Session, room string) bool { return room == "" && sess.TieOf() == nil }

// follow binds a tab's stream to its room (nil: a tab in none).
func (s *Lab) follow(r *http.Request, sess *Session) (Follow, error) {
	var sig struct {
		Room string `json:"room"`
	}
	_ = StreamSignals(r, &sig) // the stream already refused signals that are not JSON
	if s.workshops == nil || inNoRoom(sess, sig.Room) {
		return nil, nil
	}
	f, err := s.workshops.Stream(r, sess)
	if err != nil && httperr.KindOf(err, httperr.KindInternal) == httperr.KindNotFound {
		return nil, roomGoneError{err}
	}
	return f, err
}

// roomGoneError is the lab's follow's error for a tab's room that is
// gone: the stream says so on the page (Rooms.Gone), not with a status.
type roomGoneError struct{ error }

func (e roomGoneError) Unwrap() error { return e.error }

// inRoom runs a tab's command as its room says (Rooms.Command); a tab in
// no room (room: its room signal) just runs it.
func (s *Lab) inRoom(r *http.Request, sess *Session, room, verb string, body []byte, apply func() error) error {
	if s.workshops == nil || inNoRoom(sess, room) {
		return apply()
	}
	return s.workshops.Command(r, sess, verb, body, apply)
}

// cmdRejoin puts a follower that broke away back on the room's current
// state, and it follows again.
func cmdRejoin(s *Lab, sess *Session, _ *TabSignals) error {
	if s.workshops == nil {
		return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "room", Msg: "this tab follows no room"})
	}
	return s.workshops.Rejoin(sess)
}

// noRoom is the Follow of a tab in no room: nothing changes, nothing to send.
type noRoom struct{}

func (noRoom) CatchUp(*Session) (<-chan struct{}, time.Time)           { return nil, time.Time{} }
func (noRoom) Board() <-chan struct{}                                  { return nil }
func (noRoom) Answers() <-chan struct{}                                { return nil }
func (noRoom) Send(*datastar.ServerSentEventGenerator, *Session) error { return nil }
func (noRoom) Close()                                                  {}
