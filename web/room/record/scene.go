package record

import (
	"fmt"
	"strconv"
)

// SceneMark is what the room did at one scene of its plan: shown (every
// mark), its question asked, and at the reveal how many answered and
// how many gave the plan's answer. Engine is the engine's answer on the
// room's run when it was not the plan's (the instructor changed the run).
type SceneMark struct {
	Scene    int    `json:"scene"`
	Asked    bool   `json:"asked,omitempty"`
	Revealed bool   `json:"revealed,omitempty"`
	Answered int    `json:"answered,omitempty"`
	Right    int    `json:"right,omitempty"`
	Engine   string `json:"engine,omitempty"`
}

// EntryScene names, in a recording's entry, the plan scene the room was
// on: the recording stands alone (`room replay` has no plans).
type EntryScene struct {
	Plan  string `json:"plan"`
	N     int    `json:"n"` // from 1
	Of    int    `json:"of"`
	ID    string `json:"id"`
	Title string `json:"title"`
}

// SceneWords is a recording entry in words when it is a plan's: the
// room moved to a scene, or the workshop started on one.
func SceneWords(e *TimelineEntry, at func(*TimelineEntry) string) (string, bool) {
	sc := e.Scene
	if sc == nil {
		return "", false
	}
	name := fmt.Sprintf("scene %d of %d, %q", sc.N, sc.Of, sc.Title)
	switch e.Kind {
	case "scene":
		return "Instructor moved the room to " + name + " (" + WhereOf(&e.State) + ", " + PlayOf(&e.State) + " at " + at(e) + ")", true
	case "start":
		return "The workshop started from the plan " + strconv.Quote(sc.Plan) + " on " + name + " (" + WhereOf(&e.State) + ", " + PlayOf(&e.State) + " at " + at(e) + ")", true
	}
	return "", false
}
