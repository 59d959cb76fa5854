// Package labview is a run as the lab's page shows it around the charts:
// the panels below them at a cursor (the decision log, the host table, the
// cluster's stats, the cluster as Envoy YAML) and the settings panel (every
// control of the run's preset at the run's value). Pure: a run and a
// cursor in, view models out; the lab's pages, lessons and streams and the
// rooms' pages draw them.
package labview

import (
	"math"
	"slices"

	"outlierlab/engine"
	"outlierlab/engine/sim"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// maxLogEntries bounds the decision log a redraw sends: a long run with a
// short interval has thousands of lines even folded, and the newest
// matter most.
const maxLogEntries = 400

// Panels is everything below the charts at a cursor.
func Panels(r *tabstate.Run, cursor int) view.Panels {
	cursor = min(max(cursor, 0), len(r.Frames))
	p := view.Panels{YAML: r.YAML, Cluster: r.Cluster}
	p.Log, _, p.Omitted = tabstate.FoldedLog(r, 0, cursor, maxLogEntries)
	var stats, prev engine.Stats
	var cl, clPrev sim.ClusterStats
	if cursor > 0 {
		stats, cl = r.Frames[cursor-1].Stats, r.Frames[cursor-1].Cluster
	}
	if cursor > 1 {
		prev, clPrev = r.Frames[cursor-2].Stats, r.Frames[cursor-2].Cluster
	}
	row := func(name string, v, was uint64, gauge bool) view.StatRow {
		row := view.StatRow{Name: name, Value: v, Gauge: gauge}
		if v > was {
			row.Delta = v - was
		}
		return row
	}
	cluster := view.StatSection{Prefix: "cluster." + r.Cluster + ".", Title: "the cluster's router and load balancer"}
	for _, st := range clusterStats {
		cluster.Rows = append(cluster.Rows, row(st.name, st.get(&cl), st.get(&clPrev), false))
	}
	outlier := view.StatSection{Prefix: "cluster." + r.Cluster + ".outlier_detection.", Title: "the cluster's outlier detector"}
	for i := engine.Stat(0); i < engine.NumStats; i++ {
		outlier.Rows = append(outlier.Rows, row(i.Name(), stats[i], prev[i], i.IsGauge()))
	}
	p.Stats = []view.StatSection{outlier, cluster}
	p.Hosts = hostRows(r, cursor)
	return p
}

// clusterStats are the cluster stats (Envoy's cluster.<name>.*, outside
// outlier_detection) the stats table shows: the retries and their refusals
// (the router's RetryStateImpl counts them on the cluster), the timeouts,
// and the load balancer's answers without healthy hosts and in panic. All
// are counters.
// The simulator's own tallies (hosts shedding load) are not Envoy stats
// and are left out.
var clusterStats = []struct {
	name string
	get  func(*sim.ClusterStats) uint64
}{
	{"upstream_rq_total", func(s *sim.ClusterStats) uint64 { return s.UpstreamRq }},
	{"upstream_rq_retry", func(s *sim.ClusterStats) uint64 { return s.RetrySent }},
	{"upstream_rq_retry_overflow", func(s *sim.ClusterStats) uint64 { return s.RetryOverflow }},
	{"upstream_rq_retry_limit_exceeded", func(s *sim.ClusterStats) uint64 { return s.RetryLimitExceeded }},
	{"upstream_rq_retry_success", func(s *sim.ClusterStats) uint64 { return s.RetrySuccess }},
	{"upstream_rq_per_try_timeout", func(s *sim.ClusterStats) uint64 { return s.PerTryTimeout }},
	{"upstream_rq_timeout", func(s *sim.ClusterStats) uint64 { return s.RouteTimeout }},
	{"upstream_cx_none_healthy", func(s *sim.ClusterStats) uint64 { return s.UpstreamCxNoneHealthy }},
	// A cluster stat, not an outlier one: the load balancer counts each
	// host choice it makes in panic (ZoneAwareLoadBalancerBase::
	// hostSourceToUse, load_balancer_impl.cc, on the cluster's lb stats).
	{"lb_healthy_panic", func(s *sim.ClusterStats) uint64 { return s.LbHealthyPanic }},
}

// hostRows is the host table, like Envoy's admin /clusters: each host's
// health flags and the success rate the detector computed for it.
func hostRows(r *tabstate.Run, cursor int) []view.HostRow {
	if cursor == 0 {
		rows := make([]view.HostRow, len(r.Hosts))
		for i, h := range r.Hosts {
			rows[i] = view.HostRow{Name: h, Prefix: r.Cluster + "::" + h + "::", HealthFlags: "healthy", SuccessRate: "-1", Share: "–"}
		}
		return rows
	}
	f := &r.Frames[cursor-1]
	rows := make([]view.HostRow, len(f.Hosts))
	for i, h := range f.Hosts {
		row := view.HostRow{
			Name: h.Name, Prefix: r.Cluster + "::" + h.Name + "::",
			HealthFlags: "healthy", SuccessRate: "-1",
			Requests: h.Requests, Ejections: h.NumEjections, Multiplier: h.Multiplier,
			Share: tabstate.Pct1(100*h.TrafficShare) + "%", Ejected: h.Ejected,
		}
		var flags []string
		if h.FailedActiveHC {
			flags = append(flags, "/failed_active_hc")
		}
		if h.Ejected {
			flags = append(flags, "/failed_outlier_check")
			// The host returns at the first tick once this has elapsed.
			row.ReturnsIn = tabstate.FormatMs(h.ReturnsInMs)
			if h.ReturnsInMs == 0 {
				row.ReturnsIn = "next tick"
			}
		}
		// HostUtility::healthFlagsToString's names, in the order of
		// HEALTH_FLAG_ENUM_VALUES.
		if h.DegradedActiveHC {
			flags = append(flags, "/degraded_active_hc")
		}
		if h.Degraded {
			flags = append(flags, "/degraded_outlier_detection")
		}
		if len(flags) > 0 {
			row.HealthFlags = ""
			for _, fl := range flags {
				row.HealthFlags += fl
			}
		}
		// Envoy prints the success rate the last tick stored for the host:
		// only hosts that took part (not ejected before the tick, at least
		// the smaller of the two request volumes) have one; others print -1.
		vol := min(r.Config.SuccessRateRequestVolume, r.Config.FailurePercentageRequestVolume)
		// A host ejected before this tick was left out of it.
		wasEjected := cursor > 1 && i < len(r.Frames[cursor-2].Hosts) && r.Frames[cursor-2].Hosts[i].Ejected
		if h.SuccessRate >= 0 && h.Requests > 0 && h.Requests >= uint64(vol) && !wasEjected {
			row.SuccessRate = tabstate.Pct1(h.SuccessRate)
		}
		rows[i] = row
	}
	return rows
}

// Controls is the settings panel for a run: its preset and the value
// of every control the preset has.
func Controls(r *tabstate.Run) view.Controls {
	return view.Controls{Preset: r.Preset, Description: r.Description, Presets: page.PresetLinks(r.Preset), Groups: controlGroups(r)}
}

// controlGroups builds the control groups for a run's values.
func controlGroups(r *tabstate.Run) []view.ControlGroup {
	var groups []view.ControlGroup
	for i := range tabstate.Controls {
		c := &tabstate.Controls[i]
		if _, ok := r.Values[c.Name]; !ok || c.AddressOnly {
			continue // the preset has no such setting, or the panel no input
		}
		if len(groups) == 0 || groups[len(groups)-1].Title != c.Group {
			groups = append(groups, view.ControlGroup{Title: c.Group})
		}
		g := &groups[len(groups)-1]
		g.Controls = append(g.Controls, Control(c, r.Values[c.Name]))
	}
	// The groups a first visit needs are open; the rest fold away.
	for i := range groups {
		groups[i].Open = slices.Contains([]string{tabstate.GroupSuccessRate, tabstate.GroupEjection, tabstate.GroupScenario}, groups[i].Title)
	}
	return groups
}

// Control is one control at value v.
func Control(c *tabstate.Control, v float64) view.Control {
	var opts []view.Option
	for i, ch := range c.Choices {
		opts = append(opts, view.Option{Value: ch, Selected: float64(i) == v})
	}
	vc := view.Control{
		Name: c.Name, Label: c.Label, Help: c.Help,
		Toggle: c.Kind == tabstate.KindToggle,
		Min:    httperr.FormatNumber(c.Min), Max: httperr.FormatNumber(c.Max), Step: httperr.FormatNumber(c.Step),
		Value:   httperr.FormatNumber(v),
		Display: c.Display(v), DisplayExpr: displayExpr(c),
		Signal:  "cfg." + c.Name,
		Range:   c.Allowed(),
		Options: opts,
		Field:   c.Name,
	}
	if c.Field != "" {
		vc.Field = c.Field
	}
	switch c.InputOf() {
	case tabstate.InputNumber:
		vc.NumberOnly = true
	case tabstate.InputSliderNumber:
		vc.Number = true
		vc.NumLabel = c.Label + ", typed"
		if c.Unit != "" {
			vc.NumLabel += " (" + c.Unit + ")"
		} else if c.Kind == tabstate.KindShare {
			vc.NumLabel += " (a fraction, 0–1)"
		}
	}
	if vc.Number || vc.NumberOnly {
		step := c.Step
		if c.NumStep > 0 {
			step = c.NumStep
		}
		vc.NumStep = httperr.FormatNumber(step)
		if !onGrid(v, c.Min, step) {
			// A preset's value off the field's grid (search-cache's fault
			// rate is 1/3) would open the field as :invalid, red before
			// the learner typed anything (issue 38); the server checks
			// the range whatever the field's step says.
			vc.NumStep = "any"
		}
		vc.NumSet = numberSet(c)
	}
	return vc
}

// onGrid reports whether v is min plus a whole number of steps, as the
// browser's step check (and its :invalid) reads it, within rounding.
func onGrid(v, min, step float64) bool {
	if step <= 0 {
		return true
	}
	k := (v - min) / step
	return math.Abs(k-math.Round(k)) < 1e-6
}

// numberSet is the number field's change handler. The field is not bound
// to the signal (Datastar's binding would turn an emptied field into 0 at
// every keystroke, and the next post of any control would carry it): on a
// committed change (Enter, leaving the field, the spin buttons) it sets
// the signal, a number, or the text as typed when the browser cannot read
// it as one, and posts it; the server checks it like any other value and
// answers a bad one with the field-named message.
func numberSet(c *tabstate.Control) string {
	sig := "$cfg." + c.Name
	return sig + " = (el.value === '' || isNaN(+el.value)) ? el.value : +el.value; $seq++; @post('/lab/cmd/set')"
}

// displayExpr is display() as a Datastar expression over the control's
// signal, so the shown value follows the slider while it moves.
func displayExpr(c *tabstate.Control) string {
	sig := "$cfg." + c.Name
	switch c.Kind {
	case tabstate.KindFactor:
		return "'k = ' + (" + sig + " / 1000)"
	case tabstate.KindToggle:
		return sig + " ? 'on' : 'off'"
	case tabstate.KindSeconds:
		return sig + " + ' s'"
	case tabstate.KindShare:
		return "(" + sig + " * 100).toFixed(1) + '%'"
	case tabstate.KindChoice:
		return sig
	}
	switch c.Unit {
	case "":
		return sig
	case "%":
		return sig + " + '%'"
	}
	return sig + " + ' " + c.Unit + "'"
}
