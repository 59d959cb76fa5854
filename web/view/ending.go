package view

// Ending is what a lesson ends with: the settings it taught with Envoy's
// defaults, the stats to watch, one rule, and the "your cluster" form.
type Ending struct {
	Settings []EndingSetting
	// Stats are where Envoy shows them, under cluster.<name>.:
	// "outlier_detection.ejections_overflow", "lb_healthy_panic".
	Stats    []string
	Rule     HTML
	Exercise ClusterForm
}

// EndingSetting is one setting a lesson taught: its Envoy name, Envoy's
// default ("" for a setting of the simulation or the route, Where then
// says where it lives).
type EndingSetting struct {
	Name, Default, Where string
}

// ClusterForm is a plain GET form to /lab that opens the free lab with
// the learner's own numbers: the lesson's "your cluster" exercise and the
// lab's "Model your cluster" box. Its fields are named as the lab's
// address names them, so the browser builds the permalink and a bad
// value is the lab's 400 naming the field and its range.
type ClusterForm struct {
	// ID prefixes the fields' ids (two forms on one page stay apart).
	ID   string
	Text HTML
	// Hidden are parameters carried as they are: the preset, and the
	// lesson's start settings the lab has controls for.
	Hidden []Param
	Fields []FormField
}

// Param is a query parameter.
type Param struct{ Name, Value string }

// FormField is one input of a ClusterForm: a number field with the
// control's range, or a menu when Options are set.
type FormField struct {
	Name, Label, Value string
	// Min, Max and Step bound a number field ("any" step for a fraction);
	// Allowed says the range in words, as the lab's errors do.
	Min, Max, Step, Allowed string
	Options                 []string
	// Placeholder is a text field's (Text) example.
	Text        bool
	Placeholder string
}
