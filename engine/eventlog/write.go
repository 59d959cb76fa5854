package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	datav3 "github.com/envoyproxy/go-control-plane/envoy/data/cluster/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"outlierlab/engine"
)

// Line is one event as Envoy writes it: getJsonStringFromMessageOrError
// with proto field names and always_print_primitive_fields, which is
// protojson's UseProtoNames and EmitDefaultValues (primitives printed at
// their zero value, unset messages left out).
//
// protojson varies its spacing from build to build on purpose; the line
// is compacted so that it is the same bytes every time.
func Line(pe *datav3.OutlierDetectionEvent) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}.Marshal(pe)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// WriteLines writes events one JSON line each.
func WriteLines(w io.Writer, events []*datav3.OutlierDetectionEvent) error {
	for _, pe := range events {
		b, err := Line(pe)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}

// Recorder turns a detector's events into the lines Envoy's
// EventLoggerImpl would write for them: an EJECT for an ejection and for
// a detection not enforced, nothing for an overflow, an UNEJECT for a
// return; DEGRADED for a degradation and UNEJECT for its end. It keeps
// per host what setCommonEventParams reads: the ejection count and the
// times of the last ejection and return.
type Recorder struct {
	Cluster string
	// Start is the wall-clock time of the detector's clock at 0.
	Start time.Time
	hosts map[string]*recorded
}

type recorded struct {
	numEjections          uint32
	lastEject, lastReturn *int64
}

// Record converts one event (nil for an overflow, which Envoy does not log).
func (r *Recorder) Record(e engine.Event) *datav3.OutlierDetectionEvent {
	if r.hosts == nil {
		r.hosts = map[string]*recorded{}
	}
	h := r.hosts[e.Host]
	if h == nil {
		h = &recorded{}
		r.hosts[e.Host] = h
	}
	at := e.AtMs
	pe := &datav3.OutlierDetectionEvent{
		Timestamp:   timestamppb.New(r.Start.Add(time.Duration(at) * time.Millisecond)),
		ClusterName: r.Cluster,
		UpstreamUrl: e.Host,
	}
	since := func(t *int64) {
		if t != nil {
			pe.SecsSinceLastAction = wrapperspb.UInt64((uint64(at - *t)) / 1000)
		}
	}
	switch e.Kind {
	case engine.EventOverflow:
		return nil
	case engine.EventUneject, engine.EventUndegrade:
		// logUneject: type left unset, seconds since the last ejection.
		pe.Action = datav3.Action_UNEJECT
		since(h.lastEject)
		h.lastReturn = &at
		pe.NumEjections = h.numEjections
		return pe
	}
	t, _ := ProtoType(e.Detector.String())
	pe.Type, pe.Action = t, datav3.Action_EJECT
	// logEject: seconds since the last return; ejectHost counts the
	// ejection (DetectorHostMonitorImpl::eject) before it logs.
	since(h.lastReturn)
	if e.Kind == engine.EventEject || e.Kind == engine.EventDegrade {
		pe.Enforced = true
		if e.Kind == engine.EventEject {
			h.numEjections++
		}
		h.lastEject = &at
	}
	pe.NumEjections = h.numEjections
	u := func(f float64) uint32 { return uint32(max(0, f)) }
	switch e.Detector {
	case engine.SuccessRate, engine.SuccessRateLocalOrigin:
		pe.Event = &datav3.OutlierDetectionEvent_EjectSuccessRateEvent{EjectSuccessRateEvent: &datav3.OutlierEjectSuccessRate{
			HostSuccessRate: u(e.HostSuccessRate), ClusterAverageSuccessRate: u(e.Mean), ClusterSuccessRateEjectionThreshold: u(e.Threshold)}}
	case engine.FailurePercentage, engine.FailurePercentageLocalOrigin:
		pe.Event = &datav3.OutlierDetectionEvent_EjectFailurePercentageEvent{EjectFailurePercentageEvent: &datav3.OutlierEjectFailurePercentage{HostSuccessRate: u(e.HostSuccessRate)}}
	default:
		pe.Event = &datav3.OutlierDetectionEvent_EjectConsecutiveEvent{EjectConsecutiveEvent: &datav3.OutlierEjectConsecutive{}}
	}
	return pe
}
