package view

// The what-if pages (issue 14): your cluster pasted into the lab, two
// settings compared, a setting swept, an access log replayed. Charts on
// these pages are drawn once, from options the server embeds in the page
// (ChartData), not by a stream.

// StaticCharts are chart boxes and their ECharts options, applied when the
// page loads.
type StaticCharts struct {
	Boxes []Chart
	// Options is a JSON object {chartId: option}; Heights {chartId: px}
	// for the boxes whose height follows the data.
	Options, Heights string
}

// SweepParam is one setting the sweep form offers, with its span.
type SweepParam struct {
	Name, Label, Min, Max, Step string
	Selected                    bool
}

// ImportResult is what a pasted cluster did: the problems (each naming its
// field), or what was loaded and what the import could not show.
type ImportResult struct {
	Problems []string
	// Source is "an Envoy cluster" or "an Istio DestinationRule"; Name the
	// cluster's name.
	Source, Name string
	// Changed are the settings that differ from the preset, "name = value".
	Changed []string
	Notes   []string
	Link    string
	// Envoy is what Envoy's /clusters said of the cluster now, when it was
	// given: a sentence, then each host ejected now with its success rate.
	Envoy   string
	Ejected []string
}

// LintPanel is what engine/lint says about the settings on the preset's
// cluster.
type LintPanel struct {
	// Problem is set when the settings could not be read.
	Problem  string
	Cluster  string // "6 hosts, 600 requests/s, panic below 50%"
	Findings []LintFinding
}

// LintFinding is one statement of lint, naming its field.
type LintFinding struct {
	Severity, Field, Message string
}

// ImportPage is the page of a pasted cluster that a form without
// JavaScript posted: the problems, and the form again.
type ImportPage struct {
	Layout
	Preset   string
	Presets  []PresetLink
	Document string
	// Name and Clusters are the form's other fields: the cluster chosen
	// by name, and Envoy's /clusters?format=json.
	Name, Clusters string
	Result         ImportResult
}

// Compare is /compare: two runs of one preset and seed.
type Compare struct {
	Layout
	Preset string
	Seed   string
	A, B   CompareSide
	// Changed are the settings that differ, A's value then B's.
	Changed   []CompareChange
	Sentences []string
	Metrics   []CompareMetric
	Hosts     []CompareHost
	Charts    StaticCharts
	// SeedNote is set when the lab cannot open these runs (it runs seed 1).
	SeedNote string
	// SwapURL is the compare with A and B swapped.
	SwapURL string
	// Projector is ?view=projector: the charts and the numbers in large
	// type, without the site's header and the form.
	Projector bool
}

// CompareSide is one run: its lab query and where the lab opens it.
type CompareSide struct {
	Name, Query, LabURL string
}

// CompareChange is one setting that differs between A and B.
type CompareChange struct {
	Name, A, B string
}

// CompareMetric is one number of both runs.
type CompareMetric struct {
	Name, A, B string
	Differs    bool
}

// CompareHost is how often each run ejected a host.
type CompareHost struct {
	Host string
	A, B int
}

// Sweep is /sweep: one setting over a range, seeds as a band.
type Sweep struct {
	Layout
	Preset, Param, Label       string
	From, To, Step, Seeds      string
	Presets                    []PresetLink
	Params                     []SweepParam
	Runs, Points, SeedCount    int
	Took                       string
	Rows                       []SweepRow
	Charts                     StaticCharts
	Base                       []string // the other settings every run shares, "name = value"
	MedianNote, SeedOneCaption string
}

// SweepRow is one value: the medians over the seeds, and the lab
// permalink of its run (seed 1, the lab's).
type SweepRow struct {
	Value, Display, URL                   string
	Failure, Ejections, Overflows, PanicS string
}

// Whatif is /whatif: the upload form and, after a post, the replay.
type Whatif struct {
	Layout
	Config, Cluster, Seed string
	MaxBytes              string
	// LogText fills the pasted-lines box (the sample log, ?sample=envoy).
	LogText  string
	Problems []string
	Result   *WhatifResult
}

// WhatifResult is an access log replayed through the detector.
type WhatifResult struct {
	// Read says what was read, in one sentence; Config what ran.
	Read, Config string
	ConfigNotes  []string
	Unparsed     []string // "line 7: …"
	MoreUnparsed int
	Caveats      []string
	Events       []WhatifEvent
	// EventsJSON is {"events": [...]} in the replay format.
	EventsJSON string
	Why        []string
	Charts     StaticCharts
	// Compare is set when Envoy's event log was given too.
	Compare *WhatifCompare
}

// WhatifEvent is one detector event with its wall-clock time.
type WhatifEvent struct {
	Clock, AtS, Event, Host, Detector string
}
