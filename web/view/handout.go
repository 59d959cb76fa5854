package view

// Handout is the printable page of a workshop plan (issue 23):
// /plans/ID/handout, or /r/CODE/handout for a room that ran it, with the
// room's answers. Built by web/handout.
type Handout struct {
	Layout
	Title, Summary string
	Minutes        int
	// Room is the room's code, "" for the plan's own handout; PlanPath
	// is the plan's handout, offered from a room's.
	Room, PlanPath string
	Scenes         []HandoutScene
	// Charts are every scene's charts, drawn once when the page loads.
	Charts StaticCharts
}

// HandoutScene is one scene: what it showed, its charts at its moment,
// its question and its settings as Envoy YAML.
type HandoutScene struct {
	// N counts from 1; ID is the plan's (the section's anchor).
	N         int
	ID, Title string
	Minutes   int
	// Where is what the room loaded ("lesson cap, step cap-34", "preset
	// search-cache"); Changes the scene's settings and faults over it.
	Where   string
	Changes []string
	// Moment is the time the charts stop at, Seed the run's seed.
	Moment string
	Seed   uint64
	// Charts are the scene's boxes in Handout.Charts, each with the
	// sentence that says what it shows.
	Charts []Chart
	// LabURL opens the scene's run in the lab, or its lesson ("" for
	// none); LabText says which.
	LabURL, LabText string
	Question        *HandoutQuestion
	YAML            string
	// Challenge is a challenge scene's board on a room's handout: each
	// attendee's latest submission as the recording kept it, ranked, the
	// front marked (nil off a challenge scene or on the plan's handout).
	Challenge *RoomChallenge
}

// HandoutQuestion is a scene's question: the engine's answer on the
// scene's seed, and, on a room's handout, what the room answered.
type HandoutQuestion struct {
	Text    string
	Choices []string
	// Engine is the engine's answer, Detail what it read; Problem says
	// why there is none (Engine is then "").
	Engine, Detail, Problem string
	// Expected is the plan's answer; Differs when the engine's on this
	// seed is another (plan -check fails such a plan).
	Expected string
	Differs  bool
	// Room is the room's histogram, nil when the room did not reveal
	// this question (or the handout is the plan's).
	Room *HandoutRoomAnswers
}

// HandoutRoomAnswers is a revealed question's histogram in the room.
type HandoutRoomAnswers struct {
	Hist  []RoomAnswerBar
	Total int
	// Answer is the engine's answer on the room's run at the reveal when
	// it is not the handout's (the room's settings had moved); "" else.
	Answer string
}
