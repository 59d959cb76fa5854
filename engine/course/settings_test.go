package course

import (
	"maps"
	"testing"
)

// A lesson's layers meet by catalog name: a step or a learner naming a
// knob by the Envoy field it stands for overrides the start's value.
func TestSettingsLayersMeetByCatalogName(t *testing.T) {
	got := Merge(map[string]string{"panic_threshold": "50", "retries": "0"}, map[string]string{"healthy_panic_threshold": "0"})
	if want := map[string]string{"panic_threshold": "0", "retries": "0"}; !maps.Equal(got, want) {
		t.Errorf("Merge = %v, want %v", got, want)
	}
	l := Lesson{ID: "t", Preset: "search-cache", Start: map[string]string{"panic_threshold": "50", "max_ejection_percent": "34"},
		Steps: []Step{{ID: "s", Settings: map[string]string{"num_retries": "1"}}}}
	sc, err := Scenario(l, "s", map[string]string{"healthy_panic_threshold": "0", "max_ejection_percent": "50"})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Cluster.HealthyPanicThreshold != 0 || sc.Cluster.Retry.NumRetries != 1 || sc.Outlier.MaxEjectionPercent != 50 {
		t.Errorf("panic %d, retries %d, cap %d", sc.Cluster.HealthyPanicThreshold, sc.Cluster.Retry.NumRetries, sc.Outlier.MaxEjectionPercent)
	}
	if _, err := Scenario(l, "s", map[string]string{"max_ejection_percent": "101"}); err == nil {
		t.Error("a learner's bad value is accepted")
	}
}
