package envoyconf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/envoyproxy/protoc-gen-validate/validate"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
)

// pgvError is what protoc-gen-validate generates for every message
// (ClusterValidationError, Cluster_CommonLbConfigValidationError, ...):
// the Go field name, an English reason, and the embedded message's own
// error as the cause.
type pgvError interface {
	Field() string
	Reason() string
	Cause() error
}

// pgvErrors turns the error of msg's generated ValidateAll into field-named
// errors: each Go field name ("CircuitBreakers", "Thresholds[0]") becomes
// the snake_case path the user wrote, the value is read from msg, and the
// allowed range is read from the same PGV rule.
func pgvErrors(msg protoreflect.Message, err error, path string) []*FieldError {
	if multi, ok := err.(interface{ AllErrors() []error }); ok {
		var out []*FieldError
		for _, e := range multi.AllErrors() {
			out = append(out, pgvErrors(msg, e, path)...)
		}
		return out
	}
	ve, ok := err.(pgvError)
	if !ok {
		return []*FieldError{{Field: path, Reason: "is not valid: " + err.Error(), cause: err}}
	}
	goName, index, hasIndex := strings.Cut(ve.Field(), "[")
	index = strings.TrimSuffix(index, "]")
	fd := fieldByGoName(msg.Descriptor(), goName)
	if fd == nil {
		return []*FieldError{{Field: joinPath(path, strings.ToLower(ve.Field())), Reason: strings.TrimPrefix(ve.Reason(), "value "), cause: err}}
	}
	p := joinPath(path, string(fd.Name()))
	if hasIndex {
		p += "[" + index + "]"
	}
	if ve.Cause() != nil {
		if sub := subMessage(msg, fd, index, hasIndex); sub != nil {
			return pgvErrors(sub, ve.Cause(), p)
		}
	}
	fe := &FieldError{Field: p, Value: fieldValue(msg, fd, index, hasIndex), cause: err}
	fe.Reason = strings.TrimPrefix(ve.Reason(), "value ")
	r := ve.Reason()
	isRange := strings.Contains(r, "range") || strings.Contains(r, "less than") || strings.Contains(r, "greater than")
	if allowed := rulesAllowed(fd); allowed != "" && isRange {
		fe.Reason, fe.Allowed = "is out of range", allowed
	}
	return []*FieldError{fe}
}

// fieldByGoName finds the field whose generated Go name is goName.
// protoc-gen-go capitalises each word and drops the underscores before
// lower-case letters ("consecutive_5xx" → "Consecutive_5Xx"), so comparing
// both with underscores removed and case folded is enough within one
// message.
func fieldByGoName(md protoreflect.MessageDescriptor, goName string) protoreflect.FieldDescriptor {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	fds := md.Fields()
	for i := range fds.Len() {
		if norm(string(fds.Get(i).Name())) == norm(goName) {
			return fds.Get(i)
		}
	}
	return nil
}

// subMessage is the message a PGV cause is about: the field's message, or
// one element of a list or map of messages.
func subMessage(msg protoreflect.Message, fd protoreflect.FieldDescriptor, index string, hasIndex bool) protoreflect.Message {
	v, ok := element(msg, fd, index, hasIndex)
	if !ok {
		return nil
	}
	if fd.IsMap() {
		if fd.MapValue().Message() == nil {
			return nil
		}
	} else if fd.Message() == nil {
		return nil
	}
	return v.Message()
}

func element(msg protoreflect.Message, fd protoreflect.FieldDescriptor, index string, hasIndex bool) (protoreflect.Value, bool) {
	if !msg.Has(fd) {
		return protoreflect.Value{}, false
	}
	v := msg.Get(fd)
	switch {
	case !hasIndex:
		return v, true
	case fd.IsList():
		i, err := strconv.Atoi(index)
		if err != nil || i < 0 || i >= v.List().Len() {
			return protoreflect.Value{}, false
		}
		return v.List().Get(i), true
	case fd.IsMap():
		e := v.Map().Get(protoreflect.ValueOfString(index).MapKey())
		return e, e.IsValid()
	}
	return v, true
}

// fieldValue renders a field's value as a user would write it: a number,
// a wrapper's value, a duration like "30s", else compact proto JSON.
func fieldValue(msg protoreflect.Message, fd protoreflect.FieldDescriptor, index string, hasIndex bool) string {
	v, ok := element(msg, fd, index, hasIndex)
	if !ok {
		return ""
	}
	isMsg := (fd.IsMap() && fd.MapValue().Message() != nil) || (!fd.IsMap() && fd.Message() != nil)
	if !isMsg {
		if fd.Kind() == protoreflect.EnumKind && !fd.IsList() {
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
				return string(ev.Name())
			}
		}
		return fmt.Sprint(v.Interface())
	}
	m := v.Message()
	if d, ok := m.Interface().(*durationpb.Duration); ok {
		return formatDuration(d)
	}
	if inner := m.Descriptor().Fields().ByName("value"); inner != nil && m.Descriptor().Fields().Len() == 1 {
		return fmt.Sprint(m.Get(inner).Interface())
	}
	data, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m.Interface())
	if err != nil {
		return ""
	}
	return compact(data)
}

// rulesAllowed is a field's PGV range in words ("0–100", "> 0s", "≥ 1"),
// or "" when its rules set no bound.
func rulesAllowed(fd protoreflect.FieldDescriptor) string {
	rules, _ := proto.GetExtension(fd.Options(), validate.E_Rules).(*validate.FieldRules)
	if rules == nil {
		return ""
	}
	var sub protoreflect.Message
	rules.ProtoReflect().Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if f.Message() != nil {
			sub = v.Message()
		}
		return sub == nil
	})
	if sub == nil {
		return ""
	}
	bound := func(name string) string {
		f := sub.Descriptor().Fields().ByName(protoreflect.Name(name))
		if f == nil || !sub.Has(f) {
			return ""
		}
		if f.Message() != nil {
			d, _ := sub.Get(f).Message().Interface().(*durationpb.Duration)
			return formatDuration(d)
		}
		return fmt.Sprint(sub.Get(f).Interface())
	}
	lo, hi := bound("gte"), bound("lte")
	switch {
	case lo != "" && hi != "":
		return lo + "–" + hi
	case lo != "":
		hi = bound("lt")
		if hi != "" {
			return "≥ " + lo + " and < " + hi
		}
		return "≥ " + lo
	}
	var parts []string
	if gt := bound("gt"); gt != "" {
		parts = append(parts, "> "+gt)
	}
	if hi != "" {
		parts = append(parts, "≤ "+hi)
	} else if lt := bound("lt"); lt != "" {
		parts = append(parts, "< "+lt)
	}
	if n := bound("min_len"); n != "" && n != "0" {
		parts = append(parts, "at least "+n+" characters")
	}
	return strings.Join(parts, " and ")
}
