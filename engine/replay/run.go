package replay

import (
	"fmt"
	"slices"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
)

// Run parses the trace's config with Envoy's protos and replays every step.
// Config errors and steps naming hosts that are not in the cluster are
// errors; detector behaviour is the output.
func Run(t *Trace) (*Output, error) {
	cfg, err := envoyconf.ParseJSON(t.Config)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return RunConfig(t, cfg)
}

// RunConfig replays the trace with an already parsed config.
func RunConfig(t *Trace, cfg engine.Config) (*Output, error) {
	clock := &engine.ManualClock{}
	// Every draw returns the trace's "random": enforcement is
	// random%100 < enforcing_T, jitter random%(max_jitter_ms+1).
	d := engine.NewDetector(cfg, clock, engine.FixedRandom(t.Random))
	hosts := map[string]*engine.HostMonitor{}
	for _, h := range t.Hosts {
		hosts[h] = d.AddHost(h)
	}
	out := &Output{Name: t.Name, Events: []Event{}, Snapshots: []Snapshot{}}
	var pending []engine.Event
	flush := func() {
		pending = d.DrainEvents(pending[:0])
		for _, e := range pending {
			out.Events = append(out.Events, toEvent(e))
		}
	}
	lookup := func(where, name string) (*engine.HostMonitor, error) {
		m, ok := hosts[name]
		if !ok {
			return nil, fmt.Errorf("%s: unknown host %q (current hosts: %s)", where, name, strings.Join(hostNames(d), ", "))
		}
		return m, nil
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		where := fmt.Sprintf("steps[%d]", i)
		clock.Ms = s.AtMs
		switch {
		case s.HTTP != nil:
			m, err := lookup(where+".http.host", s.HTTP.Host)
			if err != nil {
				return nil, err
			}
			for range times(s.HTTP.Times) {
				m.PutHTTPResponseCode(s.HTTP.Code)
			}
		case s.Local != nil:
			m, err := lookup(where+".local.host", s.Local.Host)
			if err != nil {
				return nil, err
			}
			r := localResult(s.Local.Result)
			for range times(s.Local.Times) {
				m.PutResult(r)
			}
		case s.Ext != nil:
			m, err := lookup(where+".ext.host", s.Ext.Host)
			if err != nil {
				return nil, err
			}
			r := engine.ExtOriginRequestSuccess
			if s.Ext.Result == "request_failed" {
				r = engine.ExtOriginRequestFailed
			}
			for range times(s.Ext.Times) {
				m.PutResult(r)
			}
		case s.Tick:
			d.Tick()
		case s.ActiveHC != nil:
			m, err := lookup(where+".active_hc.host", s.ActiveHC.Host)
			if err != nil {
				return nil, err
			}
			d.ActiveHealthCheck(m, s.ActiveHC.Healthy)
		case s.AddHost != nil:
			if _, dup := hosts[*s.AddHost]; dup {
				return nil, fmt.Errorf("%s.add_host: host %q is already in the cluster", where, *s.AddHost)
			}
			hosts[*s.AddHost] = d.AddHost(*s.AddHost)
		case s.RemoveHost != nil:
			m, err := lookup(where+".remove_host", *s.RemoveHost)
			if err != nil {
				return nil, err
			}
			d.RemoveHost(m)
			delete(hosts, *s.RemoveHost)
		case s.Snapshot != nil:
			flush()
			out.Snapshots = append(out.Snapshots, snapshot(d, *s.Snapshot, s.AtMs))
		}
		flush()
	}
	return out, nil
}

func localResult(s string) engine.Result {
	switch s {
	case "connect_failed":
		return engine.LocalOriginConnectFailed
	case "timeout":
		return engine.LocalOriginTimeout
	case "connect_success":
		return engine.LocalOriginConnectSuccess
	}
	return engine.LocalOriginConnectSuccessFinal
}

func toEvent(e engine.Event) Event {
	ev := Event{AtMs: e.AtMs, Host: e.Host, Event: e.Kind.String()}
	if e.Kind != engine.EventUneject && e.Kind != engine.EventUndegrade {
		ev.Detector = e.Detector.String()
	}
	return ev
}

func hostNames(d *engine.Detector) []string {
	var names []string
	for _, m := range d.Hosts() {
		names = append(names, m.Name())
	}
	return names
}

func snapshot(d *engine.Detector, label string, at int64) Snapshot {
	s := Snapshot{Label: label, AtMs: at, Ejected: []string{}, Stats: map[string]uint64{}}
	for _, m := range d.Hosts() {
		if m.Ejected() {
			s.Ejected = append(s.Ejected, m.Name())
		}
	}
	slices.Sort(s.Ejected)
	st := d.Stats()
	for i := range engine.NumStats {
		s.Stats[i.Name()] = st[i]
	}
	return s
}
