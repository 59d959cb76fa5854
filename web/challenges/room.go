package challenges

import (
	"github.com/a-h/templ"

	"outlierlab/engine/challenge"
)

// Fields are challenge id's unlocked settings as the form's inputs, at
// sub's values (the start's for nil), for a room's challenge scene:
// web/room puts them in a form of its own, posted to the room. nil for
// no such challenge.
func (h *Challenges) Fields(id string, sub challenge.Submission) templ.Component {
	c, ok := challenge.ByID(h.list, id)
	if !ok {
		return nil
	}
	values := effective(c, &c.Scenarios[0], sub)
	fs := make([]Field, 0, len(c.Unlocked))
	for _, name := range c.Unlocked {
		fs = append(fs, field(name, values[name]))
	}
	return fieldInputs(fs)
}
