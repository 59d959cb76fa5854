package challenges

import "outlierlab/web/view"

// List is /challenges.
type List struct {
	view.Layout
	Items []Item
}

// Item is one challenge in the list.
type Item struct {
	ID, Title, Summary, URL string
	Scenarios, Goals, Seeds int
}

// Page is /challenges/{id}: the story, the battery, the settings form.
type Page struct {
	view.Layout
	ID, Title, Summary string
	// StoryHTML is the story's markdown rendered.
	StoryHTML string
	Scenarios []ScenarioView
	// Unlocked are the form's inputs; Locked the settings shown, fixed.
	Unlocked  []Field
	Locked    []Field
	Seeds     int
	GradeURL  string
	ScriptURL string
	// LabURL opens the first scenario in the lab with the form's values.
	LabURL string
	// Result is a grade shown with the page (a form posted without
	// script), nil otherwise.
	Result *Result
}

// ScenarioView is one scenario of the battery and its goals in words.
type ScenarioView struct {
	ID, Title, Preset string
	Goals             []string
	LabURL            string
}

// Field is one setting on the page.
type Field struct {
	Name, Value, Unit, Allowed, Help string
	// Kind is settings.Kind: bool and enum are menus.
	Kind    string
	Choices []string
	// Invalid marks the field the last answer refused.
	Invalid bool
}

// Result is a grade, goal by goal.
type Result struct {
	ID            string
	Pass          bool
	Passed, Total int
	Runs          int
	Seeds         int
	Goals         []GoalView
	// Problem is why nothing was graded (a refused value), if so.
	Problem string
}

// GoalView is one goal's verdict.
type GoalView struct {
	Scenario, Words string
	Passed, Runs    int
	OK              bool
	Detail          string
	// FailURL opens the first failing run at the moment it failed.
	FailURL string
	FailAt  string
}

// Failure is /challenges/{id}/failure: one failing run at its moment.
type Failure struct {
	view.Layout
	ID, Title      string
	ChallengeURL   string
	Scenario, Goal string
	Run, Runs      int
	At             string
	Detail         string
	Hosts          []HostView
	Log            []view.LogEntry
	Settings       []string
	LabURL         string
}

// HostView is a host at the failing moment.
type HostView struct {
	Name        string
	Ejected     bool
	SuccessRate string
	Requests    uint64
}
