package lab

import (
	"encoding/json"
	"fmt"
	"math"

	"outlierlab/engine/scenario"
	"outlierlab/web/httperr"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
)

// TabSignals is what a lab page's Datastar signals hold, and so what every
// stream and command request carries (Datastar sends all signals whose
// name does not start with "_"): the tab id, the inputs, the cursor.
// Together they are enough to rebuild the tab's session from nothing,
// for the browser the tab's id was issued to (web/tabid): the id names
// the tab, the browser's cookie proves it is the tab's.
type TabSignals struct {
	Tab    string                     `json:"tab"`
	Preset string                     `json:"preset"`
	Cfg    map[string]json.RawMessage `json:"cfg"`
	Cursor *float64                   `json:"cursor"`
	Speed  string                     `json:"speed"`
	// Seq numbers the page's slider posts; see Session.seq.
	Seq int64 `json:"seq"`
	// A lesson page's tab also carries its lesson, the step whose scenario
	// it loaded ("" for the lesson's own), and whether the learner has
	// answered the prediction.
	Lesson    string `json:"lesson"`
	Step      string `json:"step"`
	Predicted bool   `json:"predicted"`
	// Inject is the tab's inject list ("h3@60s,h1@120s"), an input like
	// cfg; InjectHost is the host the inject command fails, InjectDrop the
	// entry the uninject command removes.
	Inject     string `json:"inject"`
	InjectHost string `json:"injectHost"`
	InjectDrop string `json:"injectDrop"`
	// Room is the code of the room the tab's page was drawn in ("" for
	// none): read here only to know that a tab in no room needs none of
	// the rooms' code (inNoRoom); the rooms read the rest of theirs.
	Room string `json:"room"`
	// Drawn is what the page was drawn with (drawnOf), for its stream's
	// first redraw.
	Drawn string `json:"drawn"`
	// Conn is how the page's stream is as the page sees it (ConnLive …):
	// a command from a page whose stream is live, which no replica holds,
	// tells the page to reconnect (relay.go).
	Conn string `json:"conn"`
}

// The signals the server sets, typed as the incoming TabSignals are. A
// patch merges into the page's signals (Datastar's PatchSignals), so a field
// left out, nil or omitted, keeps the page's value; a field sent, even as
// false or "", replaces it.

// labPageSignals is the initial data-signals object of a free-lab page.
type labPageSignals struct {
	Tab     string         `json:"tab"`
	Preset  string         `json:"preset"`
	Cursor  int            `json:"cursor"`
	Frames  int            `json:"frames"`
	Playing bool           `json:"playing"`
	Speed   string         `json:"speed"`
	Seq     int64          `json:"seq"`
	Cfg     map[string]any `json:"cfg"`
	// The inject control's: the list in force (an input), the host menu's
	// choice and the entry a remove button names.
	Inject     string `json:"inject"`
	InjectHost string `json:"injectHost"`
	InjectDrop string `json:"injectDrop"`
	Drawn      string `json:"drawn"`
}

// frameSignals is what the stream sets at each new frame: where the cursor
// is, whether it plays, and on a lesson page whether it waits at the hold.
type frameSignals struct {
	Cursor  int   `json:"cursor"`
	Playing bool  `json:"playing"`
	Held    *bool `json:"held,omitempty"`
}

// redrawSignals is what the stream sets at a redraw: the frame's signals,
// the run's length and the speed; on a free-lab page the inject list (only
// the server changes it: inject, remove, reset, preset); and the inputs
// when the server chose them (first connect, preset, reset, a lesson
// step's scenario). After a slider's own change the inputs are left out,
// or a late echo would pull a slider back while it is dragged.
type redrawSignals struct {
	frameSignals
	Frames int     `json:"frames"`
	Speed  string  `json:"speed"`
	Inject *string `json:"inject,omitempty"`
	// Drawn clears the page's drawn signal after the first redraw.
	Drawn *string `json:"drawn,omitempty"`
	*tabstate.InputSignals
}

// placeholderSignals are a lesson page's live numbers that changed, by
// slot ("p3"); the leading _ keeps them out of the requests.
type placeholderSignals struct {
	PH map[string]string `json:"_ph"`
}

// injectHostSignal puts the inject menu back on h0.
type injectHostSignal struct {
	InjectHost string `json:"injectHost"`
}

// pageSignals is the initial data-signals object of a lab page drawn at
// snap, paused.
func pageSignals(tab string, snap snapshot) string {
	r := snap.run
	b, _ := json.Marshal(labPageSignals{
		Tab: tab, Preset: r.Preset,
		Cursor: snap.cursor, Frames: len(r.Frames), Speed: tabstate.Speeds[0].Name,
		Cfg:    controlSignals(r, nil),
		Inject: r.Inputs.Inject, InjectHost: "h0",
		Drawn: drawnOf(snap).String(),
	})
	return string(b)
}

// controlSignals is the run's controls as signals (tabstate.ControlSignals):
// a lesson page has only its own controls.
func controlSignals(r *tabstate.Run, d *lessonbook.Doc) map[string]any {
	if d == nil {
		return tabstate.ControlSignals(r, nil)
	}
	return tabstate.ControlSignals(r, d.Shows)
}

// parseCursor reads the "cursor" signal against a run of n frames: a whole
// number of frames from 0 to n. A new tab's cursor is read the same way as
// scrub's: a page never sends one outside its run, so -5 or 1e300 is a bad
// request (422 naming the field), not something to clamp silently.
func parseCursor(c *float64, n int) (int, error) {
	if c == nil {
		return 0, &httperr.FieldError{Field: "cursor", Msg: fmt.Sprintf("is missing (allowed 0–%d)", n)}
	}
	v := *c
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > float64(n) {
		return 0, &httperr.FieldError{Field: "cursor", Msg: fmt.Sprintf("%s is out of range (allowed 0–%d)", httperr.MessageNumber(v), n)}
	}
	if v != math.Trunc(v) {
		return 0, &httperr.FieldError{Field: "cursor", Msg: fmt.Sprintf("%s is not a whole number (allowed 0–%d)", httperr.MessageNumber(v), n)}
	}
	return int(v), nil
}

// checkNewTabPreset names the field and the allowed list when a new tab's
// signals carry a preset the lab does not have ("" is the default).
func checkNewTabPreset(name string) error {
	if name == "" {
		return nil
	}
	if _, ok := scenario.Lookup(name); !ok {
		return httperr.WithKind(httperr.KindNotFound, tabstate.UnknownPreset("preset", name))
	}
	return nil
}
