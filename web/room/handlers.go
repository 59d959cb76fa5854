package room

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/csp"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/page"
	"outlierlab/web/qr"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/tabid"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// Routes mounts the rooms' routes:
//
//	POST /rooms             a new room (its key in a cookie, or in JSON)
//	GET  /r?code=K7QX2M     the join box's target
//	GET  /r/{code}          an attendee's page
//	GET  /r/{code}/present  the instructor's page (key by cookie or ?key=)
//	GET  /r/{code}/projector the projector view
//	GET  /r/{code}/handout  the handout of the plan it ran (scenes.go)
func (s *Workshops) Routes(r chi.Router) {
	r.Get("/plans/{id}/handout", s.plans.Handout) // no bus needed: not a room's
	r.Group(func(r chi.Router) {
		r.Use(s.busReady)
		s.roomRoutes(r)
	})
}

// roomRoutes are the routes of the rooms themselves, served once the bus
// is open.
func (s *Workshops) roomRoutes(r chi.Router) {
	r.Post("/rooms", s.createRoom)
	r.Get("/r", s.joinRoom)
	r.Get("/r/{code}", s.attendeePage("follow"))
	r.Get("/r/{code}/present", s.presentPage)
	r.Get("/r/{code}/projector", s.attendeePage("projector"))
	s.questionRoutes(r)
	s.submissionRoutes(r)
	s.boardRoutes(r)
	r.Post("/r/{code}/spotlight", s.spotlightRoom)
	r.Post("/r/{code}/scene", s.sceneRoom)
	r.Post("/r/{code}/explore", s.exploreRoom)
	s.recordings.Routes(r)
	r.Get("/r/{code}/handout", s.roomHandout)
}

// roomKey is the instructor key a request carries: a script's
// "Authorization: Bearer KEY" (no cookie jar needed), else the key cookie
// this browser holds for the room.
func roomKey(r *http.Request, code string) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	c, err := r.Cookie("olab_key_" + code)
	if err != nil {
		return ""
	}
	return c.Value
}

// setRoomKeyCookie gives the browser the room's key: HttpOnly (no script
// reads it), SameSite=Strict (no other site's page sends it), for the
// room's life.
func (s *Workshops) setRoomKeyCookie(w http.ResponseWriter, r *http.Request, code, key string) {
	http.SetCookie(w, &http.Cookie{
		Name: "olab_key_" + code, Value: key, Path: "/",
		MaxAge: int((12 * time.Hour).Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.rooms.secure(r),
	})
}

// createRoom handles POST /rooms. The room starts from what the request
// says: the home page's form (start=lesson:ID or preset:NAME), a lab or
// lesson page's signals (the tab's session as it is now, playback
// included), a JSON body of such signals, or nothing (the opening
// preset). A JSON client gets the code and key; a browser goes to the
// instructor page with the key in a cookie.
func (s *Workshops) createRoom(w http.ResponseWriter, r *http.Request) {
	if s.rooms == nil {
		httperr.Write(w, errNoWorkshops, httperr.KindNotFound)
		return
	}
	if !s.rooms.creates.Allow(s.rooms.clientAddr(r), s.lab.Now()) {
		tooManyRooms(w, s.rooms.lim.RoomsPerHour)
		return
	}
	st, err := s.startState(r)
	if err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	code, key, err := s.rooms.create(r.Context(), st)
	switch {
	case errors.Is(err, errNewRooms):
		w.Header().Set("Retry-After", "60")
		httperr.Write(w, err, httperr.KindFull)
		return
	case err != nil:
		s.lab.Log.Error("room: create", "err", err)
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	s.lab.Log.Info("room created", "room", code, "lesson", st.Lesson, "preset", st.Preset, "plan", st.Plan)
	s.setRoomKeyCookie(w, r, code, key)
	present := "/r/" + code + "/present"
	switch {
	case r.Header.Get("Datastar-Request") == "true": // its Accept lists JSON too
		// Not sse.Redirect: that is an inline script without a nonce, which
		// the page's policy refuses (web/csp).
		_ = csp.Run(datastar.NewSSE(w, r), "window.location.assign('"+present+"')")
	case strings.Contains(r.Header.Get("Accept"), "application/json"):
		w.Header().Set("Location", present)
		writeJSON(w, r, http.StatusCreated, map[string]string{"code": code, "key": key, "join": "/r/" + code, "present": present, "projector": "/r/" + code + "/projector"})
	default:
		http.Redirect(w, r, present, http.StatusSeeOther)
	}
}

// startState is the state a new room starts from (see createRoom).
func (s *Workshops) startState(r *http.Request) (record.State, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.lab.MaxBody))
	if err != nil {
		return record.State{}, httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("request body: %w", err))
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return record.State{}, httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Msg: "the form is not valid: " + err.Error()})
		}
		return s.startFrom(q.Get("start"))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return s.startFrom("")
	}
	var sig lab.TabSignals
	if err := json.Unmarshal(body, &sig); err != nil {
		return record.State{}, httperr.WithKind(httperr.KindMalformed, fmt.Errorf("body: not a JSON object of signals: %w", err))
	}
	// The tab's session's state when the page names its tab (the page's
	// browser only: a tab id is no credential, web/tabid), else the state
	// the signals say; no session is made for it.
	ts, err := s.lab.SnapshotFor(&sig, tabid.Browser(r))
	if err != nil {
		return record.State{}, err
	}
	return record.StateOf(ts), nil
}

// startFrom is a room on a lesson ("lesson:ID"), a plan's first scene
// ("plan:ID") or a preset ("preset:NAME"; "" for the opening one), at its
// start.
func (s *Workshops) startFrom(start string) (record.State, error) {
	st := record.State{Preset: tabstate.DefaultPreset, Speed: tabstate.Speeds[0].Name}
	kind, name, _ := strings.Cut(start, ":")
	switch kind {
	case "":
		return st, nil
	case "lesson":
		d := s.lab.Lessons.ByID[name]
		if d == nil {
			return st, httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "start", Msg: fmt.Sprintf("%q is not a lesson", httperr.Truncate(name, 40))})
		}
		st.Lesson, st.Preset = d.ID, d.PresetFor("")
		return st, nil
	case "plan":
		return s.plans.Start(name)
	case "preset":
		st.Preset = name
		_, _, err := st.Inputs(s.lab.Lessons)
		return st, httperr.WithKind(httperr.KindNotFound, err)
	}
	return st, &httperr.FieldError{Field: "start", Msg: fmt.Sprintf("%q is not a start (allowed lesson:ID, plan:ID or preset:NAME)", httperr.Truncate(start, 40))}
}

var errTooManyJoins = httperr.WithKind(httperr.KindTooMany, errors.New("too many workshop requests from your address: try again in a minute"))

func tooManyJoins(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "60")
	httperr.Write(w, errTooManyJoins, httperr.KindTooMany)
}

// notACode is a room page's words for raw, which is not a code.
func notACode(raw string) string {
	return fmt.Sprintf("%q is not a workshop code: a code is six letters and digits, such as K7QX2M.", httperr.Truncate(raw, 20))
}

// joinRoom handles GET /r?code=…: the join box sends its code here.
func (s *Workshops) joinRoom(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("code")
	if raw == "" {
		s.lab.Pages.Render(w, r, http.StatusOK, templates.RoomJoinPage(view.RoomJoin{Layout: s.lab.Pages.Layout("Join a workshop", "", false)}))
		return
	}
	code, ok := record.NormalCode(raw)
	if !ok {
		s.roomNotFound(w, r, raw, notACode(raw))
		return
	}
	http.Redirect(w, r, "/r/"+code, http.StatusSeeOther)
}

func (s *Workshops) roomNotFound(w http.ResponseWriter, r *http.Request, code, problem string) {
	s.lab.Pages.Render(w, r, httperr.Status[httperr.KindNotFound], templates.RoomJoinPage(view.RoomJoin{
		Layout: s.lab.Pages.Layout("No such workshop", "", false), Code: httperr.Truncate(code, 20), Problem: problem,
	}))
}

func (s *Workshops) roomDenied(w http.ResponseWriter, r *http.Request, k httperr.Kind, heading, msg, join string) {
	s.lab.Pages.Render(w, r, httperr.Status[k], templates.RoomDeniedPage(view.RoomDenied{
		Layout: s.lab.Pages.Layout(heading, "", false), Heading: heading, Message: msg, JoinPath: join,
	}))
}

// roomFor reads a room page's code and finds the room, answering the
// request itself when it cannot (no workshops here, too many joins from
// the address, a code that is not one or names no room, a code typed in
// lower case) and then returning ok false.
func (s *Workshops) roomFor(w http.ResponseWriter, r *http.Request) (code string, rec record.Record, ok bool) {
	if s.rooms == nil {
		s.lab.Pages.NotFound(w, r, "This server runs no workshops (it was started without the room bus).") // errNoWorkshops as a page
		return "", rec, false
	}
	if s.rooms.admitCode(r) != nil {
		tooManyGuesses(w)
		return "", rec, false
	}
	if !s.rooms.pages.Allow(s.rooms.clientAddr(r), s.lab.Now()) {
		tooManyJoins(w)
		return "", rec, false
	}
	raw := chi.URLParam(r, "code")
	code, valid := record.NormalCode(raw)
	switch {
	case !valid:
		s.rooms.missedCode(r)
		s.roomNotFound(w, r, raw, notACode(raw))
		return "", rec, false
	case code != raw:
		u := *r.URL
		u.Path = strings.Replace(u.Path, "/r/"+raw, "/r/"+code, 1)
		http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
		return "", rec, false
	}
	rec, err := s.rooms.find(r, code)
	switch {
	case errors.Is(err, errTooManyGuesses):
		tooManyGuesses(w)
		return "", rec, false
	case errors.Is(err, errRoomNotFound):
		s.roomNotFound(w, r, code, "There is no workshop "+code+". Check the code with your instructor: a workshop ends 12 hours after its last change (one nobody used, after "+s.rooms.lim.UnusedTTL.String()+").")
		return "", rec, false
	case err != nil:
		s.lab.Log.Error("room: lookup", "room", code, "err", err)
		httperr.Write(w, httperr.Errorf(httperr.KindUnavailable, "cannot reach the room bus: %w", err), httperr.KindUnavailable)
		return "", rec, false
	}
	return code, rec, true
}

// attendeePage handles GET /r/{code} (role "follow": the room's lab or
// lesson at its current state, following it) and GET /r/{code}/projector
// (role "projector"). The projector's stream counts as an attendee's, and
// needs an identity as one does; only a follower is refused a full room.
func (s *Workshops) attendeePage(role string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		code, rec, ok := s.roomFor(w, r)
		if !ok {
			return
		}
		if role == "follow" && s.rooms.full(code) {
			s.roomDenied(w, r, httperr.KindFull, "This workshop is full here",
				fmt.Sprintf("Workshop %s has %d attendees on this server, as many as it takes. Ask your instructor, or try again later.", code, s.rooms.lim.MaxAttendees), "")
			return
		}
		if err := s.issueAttendee(w, r, code, &rec); err != nil {
			s.refuseAttendee(w, r, code, err)
			return
		}
		s.renderRoom(w, r, code, &rec, role)
	}
}

// presentPage handles GET /r/{code}/present: the instructor's page, for
// the holder of the room's key. A key in the address is checked, put in
// the cookie and taken out of the address (it would stay in the history
// and be shown on a projector).
func (s *Workshops) presentPage(w http.ResponseWriter, r *http.Request) {
	code, rec, ok := s.roomFor(w, r)
	if !ok {
		return
	}
	key := r.URL.Query().Get("key")
	if key == "" {
		key = roomKey(r, code)
	}
	if !rec.KeyMatches(key) {
		s.roomDenied(w, r, httperr.KindForbidden, "Not the instructor's key",
			"This browser has no key for workshop "+code+", or an old one. Open the link with the key you got when you started it.", "/r/"+code)
		return
	}
	s.setRoomKeyCookie(w, r, code, key) // as long as the room, from now
	if r.URL.Query().Has("key") {
		http.Redirect(w, r, "/r/"+code+"/present", http.StatusSeeOther)
		return
	}
	s.renderRoom(w, r, code, &rec, "present")
}

// full reports whether the room has as many attendees here as it may.
func (set *roomSet) full(code string) bool {
	set.mu.Lock()
	defer set.mu.Unlock()
	h := set.hubs[code]
	return h != nil && h.attendees >= set.lim.MaxAttendees
}

// renderRoom writes a room page: the lab or lesson the room shows, as
// role sees it.
func (s *Workshops) renderRoom(w http.ResponseWriter, r *http.Request, code string, rec *record.Record, role string) {
	pg, err := s.roomPage(r, code, rec, role, tabid.New(s.lab.Browser(w, r)), false)
	if err != nil {
		httperr.Write(w, fmt.Errorf("cannot show room %s: %w", code, err), httperr.KindInternal)
		return
	}
	csp.AllowTabScripts(w, pg.tab)
	s.lab.Pages.Render(w, r, http.StatusOK, templates.RoomPage(pg.layout, pg.body))
}

// roomPageView is a room's page: its frame's layout (the title, the
// strip) and what is in it, for the tab with id tab.
type roomPageView struct {
	layout view.Layout
	body   templ.Component
	tab    string
	// signals are the lab's signals (JSON), which a page patched in place
	// is sent on their own (view.Lab's InPlace).
	signals string
}

// roomPage is a room's page: the lab at the room's settings and cursor (a
// lesson page at its start: the stream brings it to the room's step), with
// the room's signals, and the room's strip (or the projector's frame),
// for the tab with id tab: a new page's is issued for the request's
// browser (lab.Browser); a page patched in place (repage, inPlace) keeps
// its tab, and its page's command sequence number (seq).
func (s *Workshops) roomPage(r *http.Request, code string, rec *record.Record, role, tab string, inPlace bool) (roomPageView, error) {
	st := &rec.State
	bar := s.roomBar(r, code, role)
	bar.Scene = s.plans.View(code, role, st)
	in, d, err := st.Inputs(s.lab.Lessons)
	if err != nil {
		return roomPageView{}, err
	}
	signals := func(sig string) string { return withRoomSignals(sig, code, role, rec.Rev, inPlace) }
	if d != nil {
		v, err := s.lab.LessonViewFor(d, tab, code)
		if err != nil {
			return roomPageView{}, err
		}
		v.Lab.Signals, v.Lab.InPlace = signals(v.Lab.Signals), inPlace
		if role == "projector" {
			v.Lab.View = view.Projector // the lab's own projector view: charts, status, last decisions, large type
			return roomPageView{v.Layout, templates.RoomProjectorBody(view.RoomProjector{Layout: v.Layout, Bar: bar, Lesson: &v}), tab, v.Lab.Signals}, nil
		}
		v.Layout.Strip = templates.RoomBarStrip(bar)
		return roomPageView{v.Layout, templates.LessonBody(v), tab, v.Lab.Signals}, nil
	}
	run, err := s.lab.Runs.Get(in)
	if err != nil {
		return roomPageView{}, err
	}
	lv, err := s.lab.LabViewFor(tabstate.LabLink{Preset: st.Preset, Values: st.Cfg, Inject: in.Inject, TMs: tabstate.CursorMs(run, st.CursorAt(in, run, s.lab.Now()))}, tab)
	if err != nil {
		return roomPageView{}, err
	}
	lv.Signals, lv.InPlace = signals(lv.Signals), inPlace
	lv.Link = false // the address is the room's, not a permalink
	l := s.lab.Pages.Layout("Workshop "+code, "lab", true)
	if role == "projector" {
		lv.View = view.Projector
		return roomPageView{l, templates.RoomProjectorBody(view.RoomProjector{Layout: l, Bar: bar, Lab: &lv}), tab, lv.Signals}, nil
	}
	l.Strip = templates.RoomBarStrip(bar)
	return roomPageView{l, templates.LabBody(lv), tab, lv.Signals}, nil
}

// roomBar is the strip's view of a room.
func (s *Workshops) roomBar(r *http.Request, code, role string) view.RoomBar {
	join := "/r/" + code
	b := view.RoomBar{Code: code, Role: role, JoinPath: join, JoinURL: s.rooms.origin(r) + join,
		PresentPath: join + "/present", ProjectorPath: join + "/projector"}
	if qr, err := qr.SVG(b.JoinURL, "QR code of "+b.JoinURL); err == nil {
		b.QR = view.HTML(qr)
	}
	// A room started in the browser keeps its key in an HttpOnly cookie:
	// without this link nobody could take over from another laptop. Only
	// the key's holder gets the present page, so only they see it.
	if key := roomKey(r, code); role == "present" && key != "" {
		b.HandoverURL = s.rooms.origin(r) + b.PresentPath + "?key=" + url.QueryEscape(key)
	}
	return b
}

// withRoomSignals adds the room's signals to a lab's initial ones: the
// code, the page's role, and follow (true until the tab breaks away).
func withRoomSignals(signals, code, role string, rev uint64, inPlace bool) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(signals), &m); err != nil {
		m = map[string]json.RawMessage{}
	}
	if inPlace {
		// The page's commands keep counting from where they are: a seq
		// back at 0 would make its next slider move look older than the
		// last (Session.seq) and be dropped.
		delete(m, "seq")
	}
	m["room"], _ = json.Marshal(code)
	m["roomRole"], _ = json.Marshal(role)
	m["follow"] = json.RawMessage("true")
	m["roomRev"], _ = json.Marshal(rev) // the room's revision the page shows (applyRoom)
	b, _ := json.Marshal(m)
	return string(b)
}

// startStrip is "Start a workshop" on a page of the lab (home, lab,
// lesson), when the server has workshops (nil otherwise); home's offers
// the lessons and presets to start from.
func (s *Workshops) startStrip(home bool) templ.Component {
	if s.rooms == nil {
		return nil
	}
	st := view.RoomStart{Home: home}
	if home {
		st.Lessons, st.Presets, st.Plans = s.lab.LessonLinks(), page.PresetLinks(""), s.plans.Links()
	}
	return templates.RoomStartStrip(st)
}

// busReady answers the rooms' routes with 503 until the room bus is open.
func (s *Workshops) busReady(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.rooms != nil && !s.rooms.bus.Ready() {
			httperr.Write(w, roombus.ErrNotReady, httperr.KindUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}
