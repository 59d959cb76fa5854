// Package scenario is a run of the lab: a cluster and its traffic
// (engine/sim) with Envoy's detector (engine) over it, cut into one Frame
// per detector interval. A run is a pure function of its inputs
//
//	(Scenario, engine.Config, seed) → Result{Frames, Summary}
//
// so a slider change re-runs from t = 0, play and scrub are a cursor over
// frames, and a permalink or a room's state is just the inputs plus a
// cursor (design.md, "The one idea").
//
// It also holds the named presets from the source articles (presets.go),
// the scenario knobs that tune them (knobs.go; the settings catalog in
// engine/settings lists them with the Envoy fields), live fault
// injections (inject.go), sums over windows of frames (window.go), and the
// run's encodings for `outlierlab run`: JSON lines, CSV and text
// (encode.go). Golden transcripts of every preset live in testdata/golden.
package scenario
