package templates

import (
	"encoding/json"
	"strconv"
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
