package templates

import (
	"encoding/json"
	"strconv"
	"strings"

	"outlierlab/web/view"
)

func itoa(i int) string    { return strconv.Itoa(i) }
func utoa(u uint64) string { return strconv.FormatUint(u, 10) }

func boolStr(b bool) string { return strconv.FormatBool(b) }

// letter labels a choice: A, B, C…
func letter(i int) string { return string(rune('A' + i)) }

// loadStep is the Datastar expression of a button that loads a lesson
// step's scenario ("" for the lesson's own start).
func loadStep(id string) string {
	q, _ := json.Marshal(id)
	return "$step = " + string(q) + "; @post('/lab/cmd/lesson')"
}

func i64toa(i int64) string { return strconv.FormatInt(i, 10) }

// speedKey is the key that picks a speed: 1, 4, 6 (16×), i (instant).
func speedKey(v string) string {
	switch v {
	case "16":
		return "6"
	case "instant":
		return "i"
	}
	return v
}

// chartLabel is a chart box's accessible name: its title and, once the
// server has written it, what it shows at the cursor.
func chartLabel(c view.Chart) string {
	if c.Alt == "" {
		return c.Title + ": " + c.Caption
	}
	return c.Title + ". " + c.Alt
}

// badge is a log entry's badge: its outcome, and for a folded run of
// non-events how many intervals it stands for ("NO OUTLIER ×12").
func badge(e view.LogEntry) string {
	if e.Count > 1 {
		return e.Badge + " ×" + itoa(e.Count)
	}
	return e.Badge
}

// scenePost is the action that puts a room on scene n of its plan.
func scenePost(code string, n int) string {
	return "@post('/r/" + code + "/scene?scene=" + strconv.Itoa(n) + "')"
}

// explorePost is the action that starts scene n's explore timer.
func explorePost(code string, n int) string {
	return "@post('/r/" + code + "/explore?scene=" + strconv.Itoa(n) + "')"
}

// sceneAskPost is the action that asks the room scene n's question.
func sceneAskPost(code string, n int) string {
	return "@post('/r/" + code + "/questions?scene=" + strconv.Itoa(n) + "')"
}

// boardScenesSummary is the board's scenes in one line: "Scenes: 3 of 6
// shown, 2 questions revealed".
func boardScenesSummary(scenes []view.RoomBoardScene) string {
	shown, revealed := 0, 0
	for _, sc := range scenes {
		if sc.Shown {
			shown++
		}
		if sc.Revealed {
			revealed++
		}
	}
	q := " questions revealed"
	if revealed == 1 {
		q = " question revealed"
	}
	return "Scenes: " + strconv.Itoa(shown) + " of " + strconv.Itoa(len(scenes)) + " shown, " + strconv.Itoa(revealed) + q
}

// hasKind reports whether a recording has an entry of kind.
func hasKind(entries []view.RecNow, kind string) bool {
	for _, e := range entries {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

// tableSignal is the local signal (not sent to the server: a leading
// underscore) that says whether chart id's box shows its table.
func tableSignal(id string) string { return "_tbl_" + strings.ReplaceAll(id, "-", "_") }

// The go-to box's expressions (gotoBox). gotoSubmit moves the scrubber
// to the interval of the time typed (at the status line's interval), as
// a drag would; gotoClose closes the box and gives the focus back to
// what had it (else Play).
const (
	gotoSubmit = `((every, s, sc) => every > 0 && Number.isFinite(s) && sc && (sc.value = String(Math.max(0, Math.min(Number(sc.max), Math.floor((s * 1000 + 0.5) / every)))), sc.dispatchEvent(new Event('input', {bubbles: true}))))(+document.getElementById('status').dataset.intervalMs, +el.elements['goto-time'].value, document.getElementById('scrub'))`
	gotoClose  = `$_goto && ($_goto = false, ((b) => (b && document.contains(b) && b !== document.body ? b : document.getElementById('btn-play')).focus())(el._back))`
)

// courseMinutes is the course's time: the sum of its lessons' minutes.
func courseMinutes(ls []view.LessonLink) int {
	n := 0
	for _, l := range ls {
		n += l.Minutes
	}
	return n
}
