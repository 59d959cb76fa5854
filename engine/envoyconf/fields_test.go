package envoyconf

import (
	"math"
	"strconv"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	"outlierlab/engine"
)

func TestFieldsCoverTheProto(t *testing.T) {
	md := (&clusterv3.OutlierDetection{}).ProtoReflect().Descriptor().Fields()
	got := map[string]bool{}
	for _, f := range Fields() {
		got[f.Name] = true
		if f.Help == "" {
			t.Errorf("%s has no Help", f.Name)
		}
		if f.Default == "" || f.Allowed == "" || f.Kind == 0 {
			t.Errorf("%s is incomplete: %+v", f.Name, f)
		}
	}
	for i := range md.Len() {
		name := string(md.Get(i).Name())
		if name != "monitors" && !got[name] {
			t.Errorf("proto field %s is missing from Fields()", name)
		}
	}
	if len(got) != md.Len()-1 {
		t.Errorf("Fields() has %d fields, the proto %d (minus monitors)", len(got), md.Len())
	}
	for name := range help {
		if !got[name] {
			t.Errorf("help has an entry for %s, which is not a field", name)
		}
	}
	for _, name := range []string{"detect_degraded_hosts", "always_eject_one_host", "successful_active_health_check_uneject_host", "max_ejection_time_jitter"} {
		if !got[name] {
			t.Errorf("Fields() lacks %s", name)
		}
	}
}

// The ranges in Fields() come from the PGV options in the descriptor; check
// them against what the generated ValidateAll actually accepts.
func TestFieldRangesAgreeWithValidateAll(t *testing.T) {
	percentages := 0
	for _, f := range Fields() {
		switch f.Kind {
		case Uint32:
			if f.Min != 0 {
				t.Errorf("%s: Min = %d, want 0", f.Name, f.Min)
			}
			if _, err := ApplyFields(engine.DefaultConfig(), map[string]string{f.Name: strconv.FormatUint(f.Max, 10)}); err != nil {
				t.Errorf("%s = Max %d refused: %v", f.Name, f.Max, err)
			}
			if f.Max < math.MaxUint32 {
				percentages++
				if f.Max != 100 {
					t.Errorf("%s: Max = %d, want 100 or 4294967295", f.Name, f.Max)
				}
				if _, err := ApplyFields(engine.DefaultConfig(), map[string]string{f.Name: strconv.FormatUint(f.Max+1, 10)}); err == nil {
					t.Errorf("%s = Max+1 accepted", f.Name)
				}
			}
		case Duration:
			_, errZero := ApplyFields(engine.DefaultConfig(), map[string]string{f.Name: "0s"})
			positiveOnly := f.Name != "max_ejection_time_jitter"
			if positiveOnly != (errZero != nil) {
				t.Errorf("%s = 0s: error %v, want an error: %v", f.Name, errZero, positiveOnly)
			}
			if f.Name != "max_ejection_time" { // 0.001s is below base_ejection_time
				if _, err := ApplyFields(engine.DefaultConfig(), map[string]string{f.Name: "0.001s"}); err != nil {
					t.Errorf("%s = 0.001s refused: %v", f.Name, err)
				}
			}
		}
	}
	// Envoy 1.40: max_ejection_percent, failure_percentage_threshold and
	// the seven enforcing_* fields.
	if percentages != 9 {
		t.Errorf("%d fields limited to 100, want 9", percentages)
	}
}

func TestFieldDefaultsAreEnvoyDefaults(t *testing.T) {
	set := map[string]string{}
	for _, f := range Fields() {
		set[f.Name] = f.Default
		got, err := ParseYAML([]byte(f.Name + ": " + jsonValue(f.Kind, f.Default)))
		if err != nil || got != engine.DefaultConfig() {
			t.Errorf("%s: %s gives %+v, %v; want the defaults", f.Name, f.Default, got, err)
		}
	}
	if got, err := ApplyFields(engine.Config{}, set); err != nil || got != engine.DefaultConfig() {
		t.Errorf("ApplyFields(every default) = %+v, %v", got, err)
	}
}

// A pasted cluster is recognised by its top-level keys, so no Cluster field
// may share a name with an OutlierDetection field.
func TestClusterAndOutlierDetectionKeysDoNotOverlap(t *testing.T) {
	for key := range fields().clusterKeys {
		if fields().byName[key] != nil {
			t.Errorf("%s is both a Cluster and an OutlierDetection field", key)
		}
	}
}
