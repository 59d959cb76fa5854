package view

// WhatifCompare is Envoy's outlier event log beside the replay (issue 24):
// each of Envoy's events and the lab's, matched.
type WhatifCompare struct {
	// Read says what was read of the event log; Counts the matches; Ticks
	// where Envoy's timer fired, if its events said.
	Read, Counts, Ticks string
	// Problems are the lines set aside or read with a warning, "line 4: …".
	Problems     []string
	MoreProblems int
	Rows         []WhatifMatch
	Findings     []string
}

// WhatifMatch is one row: Envoy's event, the lab's, or both.
type WhatifMatch struct {
	// Match is agree, disagree, only_envoy or only_lab; Label its words.
	Match, Label string
	Clock, Host  string
	Envoy, Lab   string
	Field        string
	Why          []string
}
