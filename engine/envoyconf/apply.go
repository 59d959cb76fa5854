package envoyconf

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine"
)

// ApplyFields sets fields over base, as `outlierlab run -set name=value`
// and the web sliders do. Each value is what a user types: "34", "30s",
// "1.5s", "true"; an empty value resets the field to Envoy's default.
//
// Nothing is checked by hand: base is rendered as a proto JSON object, each
// value is put in as the JSON type its field needs, and the result goes
// through the same protojson + ValidateAll + C++-check path as a config
// file. So "-set interval=1500ms" fails exactly as the YAML would.
//
// max_ejection_time is left out of the rendered base when it equals its
// Envoy default for the base's base_ejection_time (max(300s, base)), so
// that raising base_ejection_time above 300s raises it too, as it would in
// a YAML file that never set it. Set max_ejection_time explicitly to pin it.
func ApplyFields(base engine.Config, set map[string]string) (engine.Config, error) {
	return applyFields(base, set, parseOutlierDetection)
}

// ApplyFieldsGRPC is ApplyFields for the gRPC dialect: the result is read
// as grpc-go's xDS client reads the block (parseOutlierDetectionGRPC), so
// what only Envoy refuses (max_ejection_time below base_ejection_time, 0s
// durations, values of fields grpc-go does not read) is accepted;
// GRPCNotes says what Envoy would make of it.
func ApplyFieldsGRPC(base engine.Config, set map[string]string) (engine.Config, error) {
	return applyFields(base, set, parseOutlierDetectionGRPC)
}

func applyFields(base engine.Config, set map[string]string, parse func([]member) (engine.Config, error)) (engine.Config, error) {
	t := fields()
	var errs []*FieldError
	override := map[string]json.RawMessage{}
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fi := t.byName[name]
		if fi == nil || fi.Name != name {
			errs = append(errs, unknownFieldError(name))
			continue
		}
		override[name] = userValueJSON(fi.Kind, set[name])
	}
	if len(errs) > 0 {
		return engine.Config{}, joinFieldErrors(errs)
	}

	members, err := protoJSONMembers(ToProto(base))
	if err != nil {
		return engine.Config{}, &FieldError{Reason: "cannot render the base config: " + err.Error(), cause: err}
	}
	derivedMax := base.MaxEjectionTimeMs == engine.DefaultMaxEjectionTimeFor(base.BaseEjectionTimeMs) && base.MaxEjectionTimeSubMsNs == 0
	var merged []member
	for _, m := range members {
		switch {
		case t.byName[m.key] == nil: // monitors
			continue
		case override[m.key] != nil:
			m.value = override[m.key]
		case m.key == "max_ejection_time" && derivedMax:
			continue
		}
		merged = append(merged, m)
	}
	return parse(merged)
}

// userValueJSON turns typed text into the JSON value proto JSON expects for
// the kind. Anything that is not already that JSON type becomes a JSON
// string, so protojson refuses it and the error shows it quoted ("abc").
func userValueJSON(kind Kind, s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("null") // unset: Envoy's default applies
	}
	switch kind {
	case Uint32:
		if _, err := strconv.ParseFloat(s, 64); err == nil && json.Valid([]byte(s)) {
			return json.RawMessage(s)
		}
	case Bool:
		if s == "true" || s == "false" {
			return json.RawMessage(s)
		}
	}
	quoted, _ := json.Marshal(s)
	return quoted
}

func memberObject(members []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ClusterYAML renders a copyable Envoy cluster snippet: name,
// outlier_detection with every field written explicitly (so it means the
// same in any Envoy version, whatever its defaults), the retry circuit
// breaker (circuit_breakers.thresholds[DEFAULT priority].max_retries: a
// lifted breaker is what turns retries into a storm, so the snippet must
// show it) and common_lb_config.healthy_panic_threshold. Fields and blocks
// follow the protos' field order (Cluster: name 1, circuit_breakers 10,
// outlier_detection 19, common_lb_config 27). Values come from protojson,
// so they are exactly what Envoy reads; durations are written like "30s"
// or "1.5s".
func ClusterYAML(cfg engine.Config, clusterName string, panicThreshold float64, maxRetries uint32) string {
	if clusterName == "" {
		clusterName = "outlierlab"
	}
	var b strings.Builder
	b.WriteString("name: " + yamlScalar(clusterName) + "\n")
	b.WriteString("circuit_breakers:\n  thresholds:\n  - max_retries: " + strconv.FormatUint(uint64(maxRetries), 10) + "\n")
	b.WriteString("outlier_detection:\n")
	members, err := protoJSONMembers(ToProto(cfg))
	if err != nil {
		// ToProto only builds valid messages; keep the snippet parseable anyway.
		b.WriteString("  {}\n")
	}
	t := fields()
	for _, m := range members {
		fi := t.byName[m.key]
		if fi == nil { // monitors
			continue
		}
		b.WriteString("  " + m.key + ": " + userForm(m.value) + "\n")
	}
	b.WriteString("common_lb_config:\n")
	b.WriteString("  healthy_panic_threshold:\n")
	b.WriteString("    value: " + strconv.FormatFloat(panicThreshold, 'f', -1, 64) + "\n")
	return b.String()
}

var plainYAMLScalar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// yamlScalar quotes a string unless YAML would read it back unchanged as a
// plain string (YAML 1.1 turns yes/no/on/off/null into other types).
func yamlScalar(s string) string {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
	default:
		if plainYAMLScalar.MatchString(s) {
			return s
		}
	}
	quoted, _ := json.Marshal(s) // a JSON string is a valid YAML double-quoted scalar
	return string(quoted)
}
