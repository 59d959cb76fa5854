// Package templates lays out the lab's pages and the fragments its stream
// patches in, as templ components over the plain view models of package
// view: no engine types, no decisions (package web makes them and
// formats every number), only loops, conditions and the small helpers of
// helpers.go.
//
// A component whose root element has an id (Controls, LabStatus, Notice,
// DecisionLog, EnvoyStats, EnvoyHosts, EnvoyYAML, InjectList, InjectHosts,
// StepStatus) is one the stream re-renders: Datastar patches the page's
// element with the same id, so that id must stay on the root; LogEntries
// is prepended to #log-list while a run plays (a folded line that grew is
// removed by its id first). Chart boxes stay empty here; the stream fills
// them with ECharts options, and their <olab-chart> element (js/chart.js) keeps their accessible names.
//
// The lab is laid out by web/static/css in three ways: the full lab (settings a
// sidebar, or a drawer on a narrow screen), a lesson's (a strip), and the
// projector view (view.Projector), which any page turns on by setting
// view.Lab.View before rendering LabPanel or LessonLab.
//
// The *_templ.go files are generated from the .templ files and committed,
// so the module builds without the templ tool; after editing a .templ file
// run `go tool templ generate -include-version=false` from the module
// root (TestGeneratedCodeIsFresh fails on a stale one).
package templates
