package view

// RoomBar is the strip at the top of a room's pages: the code and how to
// join, and for an attendee the break-away banner.
type RoomBar struct {
	Code string
	// Role is the page's: "present" (the instructor's), "follow" (an
	// attendee's) or "projector".
	Role string
	// JoinURL is the attendee page's full address (for the QR code and to
	// read aloud); JoinPath, PresentPath and ProjectorPath are paths.
	JoinURL, JoinPath, PresentPath, ProjectorPath string
	// QR is the join address as an SVG QR code, made by the server.
	QR HTML
	// HandoverURL (the instructor's page only) is the instructor link:
	// the present page with the room's key, which gives another browser
	// the key (and then drops it from its address).
	HandoverURL string
	// Scene is the room's plan scene (nil: no plan).
	Scene *RoomScene
}

// RoomStart is the "Start a workshop" strip of a page. On the home page
// (Home) it is a form that picks what the room starts from and a box to
// join one by code; on a lab or lesson page a button that starts the room
// from what the page shows.
type RoomStart struct {
	Home    bool
	Lessons []LessonLink
	Presets []PresetLink
	Plans   []PlanLink
}

// PlanLink is a workshop plan "Start a workshop" offers.
type PlanLink struct {
	ID, Title string
	Minutes   int
}

// RoomScene is the scene panel (#room-scene) of a room started from a
// plan: the scene's title for every page; for the instructor's
// (Role "present") the scene list, the notes and the explore timer too.
type RoomScene struct {
	Code, Role   string
	Plan         string
	Index, Count int
	Title        string
	// Scenes are every scene's title, in order (the instructor's only).
	Scenes []string
	// Notes are the scene's notes, their numbers the room's run's.
	Notes          HTML
	ExploreMinutes int
	// Question is the scene's question in words ("" for none), which the
	// instructor asks with one click; Expect the answer the plan expects.
	Question, Expect string
}

// RoomJoin is the page for a code that leads nowhere (or none yet): what
// went wrong, and a box to type the code again.
type RoomJoin struct {
	Layout
	Code    string
	Problem string
}

// RoomDenied is the page for an instructor link whose key is wrong or
// stale, or a room that is full here.
type RoomDenied struct {
	Layout
	Heading, Message string
	// JoinPath is the attendee page, offered instead ("" for none).
	JoinPath string
}

// RoomProjector is the projector view: the room's charts, status and
// decisions, large, with the code and a QR code to join. Exactly one of
// Lab and Lesson is set.
type RoomProjector struct {
	Layout
	Bar    RoomBar
	Lab    *Lab
	Lesson *Lesson
}

// RoomQuestion is the room's question panel (#room-question), as one
// page sees it: before the reveal the question, the count of answers and
// (for an attendee) the buttons and their own answer; after it, the
// room's histogram with the engine's answer marked. Empty ID: no question.
type RoomQuestion struct {
	Code, Role string
	ID, Text   string
	Choices    []string // none: a number is asked for
	Count      int
	Mine       string
	Revealed   bool
	Answer     string
	Hist       []RoomAnswerBar
	Total      int
	// Sources says where the answers came from, for the instructor ("65
	// answers from 6 addresses, up to 60 from one"; "" for the others);
	// FewSources warns when most come from one address ("" otherwise).
	Sources, FewSources string
}

// RoomAnswerBar is one bar of a question's histogram of answers: Pct of
// the widest.
type RoomAnswerBar struct {
	Answer string
	N, Pct int
	Right  bool
}

// RoomBoard is the instructor's progress board: counts at the top, one
// row per attendee (anonymous nickname).
type RoomBoard struct {
	Total, Following, Away int
	Steps                  []RoomBoardStep
	Rows                   []RoomBoardRow
	IDs                    RoomIDs
}

// RoomIDs is the board's line on attendee identities: how many the room
// gives one client address (PerAddress; Default: the server's, none set),
// how many addresses took some, the most one took, how many took them
// all; Near: an address took four fifths of them or more, and the
// board's button offers to raise the budget to Raise.
type RoomIDs struct {
	Code                              string
	PerAddress, Addresses, Most, Full int
	Default, Near                     bool
	Raise                             int
}

// RoomBoardScene is one scene of the room's plan on the instructor's
// board (#room-board-scenes): shown
// yet, its question (words and the plan's answer) asked, and once
// revealed how the room answered against the plan; Engine is the
// engine's answer on the room's run when it was not the plan's.
type RoomBoardScene struct {
	N                               int
	Title                           string
	Current, Shown, Asked, Revealed bool
	Question, Expect, Engine        string
	Answered, Right, Wrong          int
}

// RoomBoardStep is how many attendees have done a lesson step.
type RoomBoardStep struct {
	ID   string
	Done int
}

// RoomBoardRow is one attendee: following or away, steps done, last answer.
type RoomBoardRow struct {
	Nick   string
	Follow bool
	Done   int
	Answer string
}

// RoomChallenge is the challenge panel (#room-challenge) of a room on a
// plan's challenge scene (ID "": none, the panel is empty): the
// challenge, its leaderboard and the scatter of every submission on its
// two main goals, the Pareto front marked; for an attendee the form of
// its unlocked settings too.
type RoomChallenge struct {
	Code, Role string
	ID, Title  string
	// XGoal and YGoal name the main goals ("scenario/goal"), both better
	// lower.
	XGoal, YGoal string
	Entries      []RoomChallengeEntry
	// Plot is the scatter as SVG, made by the server.
	Plot HTML
	// Spot is the spotlit submission's author ("" for none), SpotSettings
	// its values, CompareURL /compare with it beside the reference.
	Spot, SpotSettings, CompareURL string
	// Reference is the reference's settings once revealed ("" before).
	Reference string
}

// RoomChallengeEntry is one attendee's latest submission on the board.
type RoomChallengeEntry struct {
	Rank int
	Who  string
	// Mine marks the page's attendee's own.
	Mine          bool
	Passed, Total int
	// X and Y are the worst values on the main goals, as shown ("never"
	// for a host not ejected in time on some seed).
	X, Y  string
	Front bool
	// Spot marks the submission in the spotlight; SpotPath spotlights it
	// (the instructor's button).
	Spot     bool
	SpotPath string
	// Settings are the submitted values, "name=value" in the form's order.
	Settings string
}
