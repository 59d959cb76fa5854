package challenges

import (
	"net/url"
	"strings"

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

// CompareURL opens /compare with sub's settings (A) beside the
// reference's (B), on the challenge's first scenario ("" for no such
// challenge).
func (h *Challenges) CompareURL(id string, sub challenge.Submission) string {
	c, ok := challenge.ByID(h.list, id)
	if !ok {
		return ""
	}
	query := func(sub challenge.Submission) string {
		return url.QueryEscape(strings.TrimPrefix(labURL(c, &c.Scenarios[0], sub, 0), "/lab?"))
	}
	return "/compare?a=" + query(sub) + "&b=" + query(c.Reference)
}
