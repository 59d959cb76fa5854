package settings

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
)

// Apply lays settings over a preset and returns the scenario to run and
// its outlier_detection config (the scenario's Outlier is that config
// too, so whatever reads the run's scenario sees the config that ran).
//
// Layers apply in order, a later one winning over an earlier one: a
// lesson's start, a step's settings, the learner's values. Each names
// settings by name or alias, values as typed ("34", "30s", "250ms",
// "connect_failure"); one layer may not give one setting twice (by its
// name and its alias).
//
// Knobs are checked and set by scenario.ApplyKnobs, outlier_detection
// fields as the dialect's client reads the block: under Envoy by
// envoyconf.ApplyFields, Envoy's own validation with its cross-field check
// (max_ejection_time below base_ejection_time fails as it does in Envoy);
// under gRPC by envoyconf.ApplyFieldsGRPC, grpc-go's xDS client's checks
// (outlierConfigFromCluster), which take what only Envoy refuses
// (envoyconf.GRPCNotes says what). Every bad name and value is reported
// (errors.Join), each naming its setting and what it accepts:
//
//	max_ejection_percent: 101 is out of range (allowed 0–100)
//	hosts: 500 is out of range (allowed 1–200 hosts)
//	fault_rate: scenario "x" has no primary fault to tune
func Apply(p scenario.Preset, layers ...map[string]string) (scenario.Scenario, engine.Config, error) {
	merged, errs := merge(layers)
	fields, knobs := map[string]string{}, map[string]string{}
	for name, v := range merged {
		s, _ := Lookup(name) // merge keeps only known names
		if s.Target == OutlierField {
			fields[name] = v
		} else {
			knobs[name] = v
		}
	}
	sc, err := scenario.ApplyKnobs(p.Scenario(), knobs)
	errs = append(errs, err)
	cfg := p.Outlier
	if len(fields) > 0 {
		if sc.Cluster.Dialect == engine.DialectGRPC {
			cfg, err = envoyconf.ApplyFieldsGRPC(p.Outlier, fields)
		} else {
			cfg, err = envoyconf.ApplyFields(p.Outlier, fields)
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return scenario.Scenario{}, engine.Config{}, err
	}
	sc.Outlier = cfg
	return sc, cfg, nil
}

// merge lays the layers over each other by each setting's Name, later
// layers winning; unknown names and a setting given twice in one layer are
// errors.
func merge(layers []map[string]string) (map[string]string, []error) {
	out := map[string]string{}
	var errs []error
	for _, layer := range layers {
		givenAs := map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(layer)) {
			s, ok := Lookup(name)
			if !ok {
				errs = append(errs, unknownError(name))
				continue
			}
			if prev, dup := givenAs[s.Name]; dup {
				errs = append(errs, fmt.Errorf("%s: is given twice, as %s and as %s (allowed once)", s.Name, prev, name))
				continue
			}
			givenAs[s.Name] = name
			out[s.Name] = layer[name]
		}
	}
	return out, errs
}
