package room

import (
	"net/http"

	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
	"outlierlab/web/room/spotlight"
)

// Spotlight: the instructor points at a host or a time range and every
// follower's charts highlight it (the host's series emphasised, the range
// shaded with a markArea). It travels as data on the room's state, like
// everything the room shares, so late joiners and both replicas see it.
//
//	POST /r/{code}/spotlight   {"host":"h5"} | {"from":40,"to":60} | {"log":"lg-3-0"} | {} to clear (key)
//
// The instructor's page picks them by clicking (js/spot.js): a
// host's lane, point or row, a drag across a chart's time axis, a line of
// the decision log; the form on the strip is the keyboard's way.

func (s *Workshops) spotlightRoom(w http.ResponseWriter, r *http.Request) {
	code, rec, ok := s.roomAPI(w, r, true)
	if !ok {
		return
	}
	sp, err := s.spotOf(r)
	if err == nil && sp.Log != "" {
		sp, err = spotlight.OfLog(s.lab, &rec.State, sp.Log)
	}
	if err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	if err := spotlight.Check(s.lab, &rec.State, &sp); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	next := &sp
	if sp == (record.Spot{}) {
		next = nil
	}
	_, _, err = s.rooms.updateState(r.Context(), code, "spotlight", func(st *record.State) error { st.Spot = next; return nil })
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	writeJSON(w, r, http.StatusOK, sp.Signal())
}

// spotOf reads a spotlight from the query (the instructor's page:
// ?host=h5, ?from=40&to=60, ?log=lg-3-0, ?clear=1) or else a JSON body.
func (s *Workshops) spotOf(r *http.Request) (record.Spot, error) {
	var sp record.Spot
	q := r.URL.Query()
	if len(q) == 0 {
		return sp, s.readJSON(r, &sp)
	}
	if q.Has("clear") {
		return sp, nil
	}
	sp.Host, sp.Log = q.Get("host"), q.Get("log")
	for name, p := range map[string]*float64{"from": &sp.From, "to": &sp.To} {
		if v := q.Get(name); v != "" {
			f, err := httperr.Number(name, v, httperr.Span{Lo: 0, Hi: record.MaxMomentS, Unit: "s"})
			if err != nil {
				return sp, err
			}
			*p = f
		}
	}
	return sp, nil
}
