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
//
// The config is read as its dialect's client reads the proto: Envoy's
// checks (envoyconf.ParseJSON), or grpc-go's (envoyconf.ParseJSONGRPC), so
// a grpc trace is refused only for what grpc-go's xDS client NACKs. Under
// gRPC, what Envoy alone would have refused is said in the output's notes
// (envoyconf.GRPCNotes): what grpc-go does with the value instead.
func Run(t *Trace) (*Output, error) {
	dialect, err := t.dialect()
	if err != nil {
		return nil, err
	}
	var cfg engine.Config
	if dialect == engine.DialectGRPC {
		cfg, err = envoyconf.ParseJSONGRPC(t.Config)
	} else {
		cfg, err = envoyconf.ParseJSON(t.Config)
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	out, err := RunConfig(t, cfg)
	if err != nil {
		return nil, err
	}
	if dialect == engine.DialectGRPC {
		for _, fe := range envoyconf.GRPCNotes(cfg) {
			out.Notes = append(out.Notes, fe.Error())
		}
	}
	return out, nil
}

// RunConfig replays the trace with an already parsed config.
func RunConfig(t *Trace, cfg engine.Config) (*Output, error) {
	dialect, err := t.dialect()
	if err != nil {
		return nil, err
	}
	grpcClock, err := t.grpcClock(dialect)
	if err != nil {
		return nil, err
	}
	clock := &engine.ManualClock{}
	// Every draw returns the trace's "random": enforcement is
	// random%100 < enforcing_T, jitter random%(max_jitter_ms+1).
	r := &replayer{
		d:     engine.NewDialectDetector(dialect, cfg, clock, engine.FixedRandom(t.Random)),
		hosts: map[string]*engine.HostMonitor{},
		out:   &Output{Name: t.Name, Events: []Event{}, Snapshots: []Snapshot{}},
	}
	r.d.SetGRPCClock(grpcClock)
	for _, h := range t.Hosts {
		r.hosts[h] = r.d.AddHost(h)
	}
	for i := range t.Steps {
		clock.Ms = t.Steps[i].AtMs
		if err := r.step(&t.Steps[i], fmt.Sprintf("steps[%d]", i)); err != nil {
			return nil, err
		}
		r.flush()
	}
	return r.out, nil
}

// replayer is one trace being replayed: the detector, its hosts by name,
// and the output so far.
type replayer struct {
	d       *engine.Detector
	hosts   map[string]*engine.HostMonitor
	out     *Output
	pending []engine.Event
}

// flush moves the detector's events to the output.
func (r *replayer) flush() {
	r.pending = r.d.DrainEvents(r.pending[:0])
	for _, e := range r.pending {
		r.out.Events = append(r.out.Events, toEvent(e))
	}
}

func (r *replayer) lookup(where, name string) (*engine.HostMonitor, error) {
	m, ok := r.hosts[name]
	if !ok {
		return nil, fmt.Errorf("%s: unknown host %q (current hosts: %s)", where, name, strings.Join(hostNames(r.d), ", "))
	}
	return m, nil
}

// put records n results on the named host.
func (r *replayer) put(where, host string, n *int, record func(*engine.HostMonitor)) error {
	m, err := r.lookup(where, host)
	if err != nil {
		return err
	}
	for range times(n) {
		record(m)
	}
	return nil
}

// step does one step of the trace (the parser made sure it has one action).
func (r *replayer) step(s *Step, where string) error {
	switch {
	case s.HTTP != nil && s.HTTP.Degraded:
		// The router's report of a response with x-envoy-degraded
		// (Filter::onUpstreamHeaders): a 5xx is a failure whatever its
		// headers, anything else ExtOriginRequestDegraded with its code.
		res := engine.ExtOriginRequestDegraded
		if s.HTTP.Code >= 500 {
			res = engine.ExtOriginRequestFailed
		}
		return r.put(where+".http.host", s.HTTP.Host, s.HTTP.Times, func(m *engine.HostMonitor) { m.PutResultCode(res, s.HTTP.Code) })
	case s.HTTP != nil:
		return r.put(where+".http.host", s.HTTP.Host, s.HTTP.Times, func(m *engine.HostMonitor) { m.PutHTTPResponseCode(s.HTTP.Code) })
	case s.Local != nil:
		res := localResult(s.Local.Result)
		return r.put(where+".local.host", s.Local.Host, s.Local.Times, func(m *engine.HostMonitor) { m.PutResult(res) })
	case s.Ext != nil:
		res := engine.ExtOriginRequestSuccess
		if s.Ext.Result == "request_failed" {
			res = engine.ExtOriginRequestFailed
		}
		return r.put(where+".ext.host", s.Ext.Host, s.Ext.Times, func(m *engine.HostMonitor) { m.PutResult(res) })
	case s.Tick:
		r.d.Tick()
	case s.ActiveHC != nil:
		m, err := r.lookup(where+".active_hc.host", s.ActiveHC.Host)
		if err != nil {
			return err
		}
		r.d.ActiveHealthCheck(m, s.ActiveHC.Healthy)
	case s.AddHost != nil:
		if _, dup := r.hosts[*s.AddHost]; dup {
			return fmt.Errorf("%s.add_host: host %q is already in the cluster", where, *s.AddHost)
		}
		r.hosts[*s.AddHost] = r.d.AddHost(*s.AddHost)
	case s.RemoveHost != nil:
		m, err := r.lookup(where+".remove_host", *s.RemoveHost)
		if err != nil {
			return err
		}
		r.d.RemoveHost(m)
		delete(r.hosts, *s.RemoveHost)
	case s.Snapshot != nil:
		r.flush()
		r.out.Snapshots = append(r.out.Snapshots, snapshot(r.d, *s.Snapshot, s.AtMs))
	}
	return nil
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
		if m.DegradedByOutlier() {
			s.Degraded = append(s.Degraded, m.Name())
		}
	}
	slices.Sort(s.Ejected)
	slices.Sort(s.Degraded)
	st := d.Stats()
	for i := range engine.NumStats {
		s.Stats[i.Name()] = st[i]
	}
	return s
}
