package room

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"outlierlab/engine/plan"
	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
)

// A plan scene's explore timer (issue 23): "explore on your own for N
// min". The instructor starts it from the present page; the room's state
// carries its end time on the server's clock, so every replica and every
// page (present, attendee, projector; an attendee who broke away too)
// counts down to the same moment without a message per second: the
// stream sends the end once, with how long is left as the server reckons
// it, and the page counts down from there (js/explore.js), so a
// laptop whose clock is off still shows the room's time. Moving to another
// scene clears it (scenes.Book.State); the instructor may stop it early.
//
//	POST /r/{code}/explore   {"scene": N} or ?scene=N starts scene N's timer;
//	                         {"stop": true} or ?stop=1 stops it (key)

// exploreToSend is the timer signal when it changed since the stream last
// sent it (nil otherwise, and always in a room without a plan).
func (w *roomWatch) exploreToSend(st *record.State) *record.ExploreSignal {
	if st.Plan == "" {
		return nil
	}
	sig := st.Explore.Signal(w.s.lab.Now())
	if w.exploreSent != nil && w.exploreSent.EndMs == sig.EndMs && w.exploreSent.Minutes == sig.Minutes {
		return nil
	}
	w.exploreSent = &sig
	return &sig
}

// exploreRequest is /explore's body; the page's other signals come with
// it and are ignored.
type exploreRequest struct {
	Scene *int `json:"scene"`
	Stop  bool `json:"stop"`
}

// errNoExplore: a stop found no timer to stop.
var errNoExplore = errors.New("no explore timer is running")

// exploreRoom handles POST /r/{code}/explore.
func (s *Workshops) exploreRoom(w http.ResponseWriter, r *http.Request) {
	code, rec, req, ok := roomRequest[exploreRequest](s, w, r, true)
	if !ok {
		return
	}
	if err := exploreQuery(r, &req); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	p, ok := s.roomPlan(w, code, &rec, "explore timer")
	if !ok {
		return
	}
	var minutes int
	if !req.Stop {
		var err error
		if minutes, err = exploreMinutes(p, req.Scene); err != nil {
			httperr.Write(w, err, httperr.KindBadValue)
			return
		}
	}
	now := s.lab.Now()
	next, _, err := s.rooms.updateState(r.Context(), code, "explore", func(st *record.State) error {
		if req.Stop {
			if st.Explore == nil {
				return errNoExplore
			}
			st.Explore = nil
			return nil
		}
		// The timer is the scene on screen's: one for another would be
		// cleared by the move to it.
		if err := scenes.OnScene(p, st, *req.Scene); err != nil {
			return err
		}
		st.Explore = &record.Explore{Scene: *req.Scene, Minutes: minutes, EndMs: now.UnixMilli() + int64(minutes)*time.Minute.Milliseconds()}
		return nil
	})
	switch {
	case errors.Is(err, errNoExplore):
		writeJSON(w, r, http.StatusOK, map[string]any{"running": false})
		return
	case err != nil:
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	e := next.State.Explore
	if e == nil {
		s.lab.Log.Info("room explore stopped", "room", code)
		writeJSON(w, r, http.StatusOK, map[string]any{"running": false})
		return
	}
	s.lab.Log.Info("room explore started", "room", code, "scene", e.Scene, "minutes", e.Minutes)
	writeJSON(w, r, http.StatusOK, map[string]any{"running": true, "scene": e.Scene, "minutes": e.Minutes, "endMs": e.EndMs})
}

// exploreQuery reads the query of /explore's request (the page's
// buttons), which wins over its body (a script's).
func exploreQuery(r *http.Request, req *exploreRequest) error {
	if err := scenes.Param(r, &req.Scene); err != nil {
		return err
	}
	if q := r.URL.Query(); q.Has("stop") {
		v, err := strconv.ParseBool(q.Get("stop"))
		if err != nil {
			return &httperr.FieldError{Field: "stop", Msg: fmt.Sprintf("%q is not a yes or no (allowed 1, true, 0, false)", httperr.Truncate(q.Get("stop"), 20))}
		}
		req.Stop = v
	}
	if req.Stop && req.Scene != nil {
		return &httperr.FieldError{Field: "stop", Msg: "stop takes no scene: it stops the room's timer, whichever scene started it"}
	}
	return nil
}

// exploreMinutes is scene n's timer in p, refusing a scene p does not
// have or one without a timer.
func exploreMinutes(p *plan.Plan, n *int) (int, error) {
	if err := scenes.InRange(p, n); err != nil {
		return 0, err
	}
	if m := p.Scenes[*n].ExploreMinutes; m > 0 {
		return m, nil
	}
	return 0, scenes.Lacks(p, *n, "explore timer", func(sc *plan.Scene) bool { return sc.ExploreMinutes > 0 })
}
