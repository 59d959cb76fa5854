package scenario

import (
	"outlierlab/engine"
	"outlierlab/engine/sim"
)

// A long run does not fit in memory as a Result: search-cache at
// rps=100000 with every request failing makes ~6 000 overflow events a
// second, and its JSON is ~1 MB a second of simulated time (a 300 s run
// held 490 MB at its peak; 3 600 s, the longest the CLI allows, would be
// ~6 GB). Stream hands each frame to a FrameWriter as the simulator makes
// it and keeps none, so memory does not grow with the run's length.

// FrameWriter writes a run as it is made: Begin before the first frame
// (the Result has its Scenario, Config and Seed, no frames), Frame for
// each frame, then End with the Summary set. The frame is only valid
// during the call.
type FrameWriter interface {
	Begin(res *Result) error
	Frame(f *Frame) error
	End(res *Result) error
}

// Stream runs the scenario as Run does and writes it to fw frame by
// frame. The Summary it returns (and hands to End) is Run's, byte for
// byte in every format. A run of many clients is a mesh run (mesh.go).
func Stream(sc Scenario, cfg engine.Config, seed uint64, fw FrameWriter) (Summary, error) {
	var r runner
	if sc.Cluster.ClientCount() > 1 {
		m, err := sim.NewMesh(sc.Cluster, cfg, seed)
		if err != nil {
			return Summary{}, err
		}
		c := m.Cluster()
		r = &meshRun{m: m, acc: newMeshAcc(&c)}
	} else {
		s, err := sim.New(sc.Cluster, cfg, seed)
		if err != nil {
			return Summary{}, err
		}
		r = oneRun{s}
	}
	res := Result{Scenario: sc.Clone(), Config: cfg, Seed: seed}
	if err := fw.Begin(&res); err != nil {
		return Summary{}, &WriteError{err}
	}
	acc := newSummary(&res)
	for {
		f, ok := r.next()
		if !ok {
			break
		}
		f.Dialect = sc.Cluster.Dialect
		acc.add(&f)
		if err := fw.Frame(&f); err != nil {
			return Summary{}, &WriteError{err}
		}
	}
	res.Summary = r.finish(acc)
	if err := fw.End(&res); err != nil {
		return Summary{}, &WriteError{err}
	}
	return res.Summary, nil
}

// runner is where Stream's frames come from: one proxy's simulation, or
// a mesh's.
type runner interface {
	next() (Frame, bool)
	finish(acc *summaryAcc) Summary
}

type oneRun struct{ s *sim.Sim }

func (o oneRun) next() (Frame, bool) {
	iv, ok := o.s.Next()
	if !ok {
		return Frame{}, false
	}
	return newFrame(iv), true
}

func (o oneRun) finish(acc *summaryAcc) Summary { return acc.finish(o.s) }

// WriteError is a FrameWriter's error from Stream, told apart from a run
// that could not start (a bad config): by then some output is out.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// writeAll writes a whole Result through fw: the Write* functions are
// their FrameWriters over frames already made.
func writeAll(fw FrameWriter, res *Result) error {
	if err := fw.Begin(res); err != nil {
		return err
	}
	for i := range res.Frames {
		if err := fw.Frame(&res.Frames[i]); err != nil {
			return err
		}
	}
	return fw.End(res)
}
