package canonical

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// Validate checks an event against the rules of its type: required fields,
// enum values, canonical id formats, slugs, non-negative counts, JSON
// members that are valid and nest at most MaxJSONDepth deep, and the raw frame's
// encoding. It returns every violation found, each a *FieldError
// naming the field and the rule, joined with errors.Join; errors.Is(err,
// ErrInvalidEvent) holds for the result.
func Validate(e Event) error {
	var errs []error
	errs = validateStruct(errs, nil, reflect.ValueOf(e))
	switch {
	case e.Payload == nil:
		errs = append(errs, &FieldError{Field: "payload", Rule: "is required"})
	case !e.Payload.Kind().Valid():
		errs = append(errs, &FieldError{Field: "type", Rule: "must be a known event type", Value: string(e.Payload.Kind()), err: ErrUnknownKind})
	default:
		pv := reflect.ValueOf(e.Payload)
		if pv.IsNil() {
			errs = append(errs, &FieldError{Field: "payload", Rule: "is required"})
		} else {
			errs = validateStruct(errs, &path{name: "payload"}, pv.Elem())
		}
	}
	if e.Raw != nil {
		errs = validateStruct(errs, &path{name: "raw"}, reflect.ValueOf(*e.Raw))
		if e.Raw.Encoding == RawRef {
			if ref, err := e.Raw.Reference(); err != nil || (ref.Stream == "") == (ref.Bucket == "") {
				errs = append(errs, &FieldError{Field: "raw.payload", Rule: "must be a reference to a stream message or an object"})
			}
		} else if err := e.Raw.checkPayload(); err != nil && e.Raw.Encoding.Valid() {
			errs = append(errs, &FieldError{Field: "raw.payload", Rule: "must hold the frame in the stated encoding"})
		}
	}
	return errors.Join(errs...)
}

// path names the field being validated. It is a chain of frames, spelled
// out only when a rule fails: most events break none, and building every
// field's name would cost more than checking it. A frame is reused for
// every member or element of one value, renamed as the walk moves on (a
// failure spells the name out at once), so validating an event allocates
// a frame per nested value, not per field.
type path struct {
	parent *path
	name   string // a member's name, or a suffix such as " key"
	index  int    // an element's index, when name is ""
}

func (p *path) String() string {
	if p == nil {
		return ""
	}
	parent := p.parent.String()
	switch {
	case p.name == "":
		return parent + "[" + strconv.Itoa(p.index) + "]"
	case parent == "":
		return p.name
	case p.name[0] == ' ':
		return parent + p.name
	}
	return parent + "." + p.name
}

func validateStruct(errs []error, at *path, v reflect.Value) []error {
	member := &path{parent: at}
	for _, f := range fieldsOf(v.Type()) {
		member.name = f.name
		errs = validateValue(errs, member, v.FieldByIndex(f.index), f)
	}
	return errs
}

func validateValue(errs []error, at *path, v reflect.Value, f field) []error {
	fail := func(rule, value string) []error {
		return append(errs, &FieldError{Field: at.String(), Rule: rule, Value: value})
	}
	t := v.Type()
	switch t {
	case rawMessageType:
		raw := v.Bytes()
		if len(raw) == 0 || string(raw) == "null" {
			if f.required {
				return fail("is required", "")
			}
			return errs
		}
		info := jsonscan.Check(raw)
		if !info.Valid {
			return fail("must be valid JSON", "")
		}
		if info.Depth > MaxJSONDepth {
			return fail("must nest at most "+strconv.Itoa(MaxJSONDepth)+" levels deep", strconv.Itoa(info.Depth))
		}
		return errs
	case timeType:
		if f.required && v.Interface().(interface{ IsZero() bool }).IsZero() {
			return fail("is required", "")
		}
		return errs
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			if f.required {
				return fail("is required", "")
			}
			return errs
		}
		f.required = true
		return validateValue(errs, at, v.Elem(), f)
	case reflect.String:
		return validateString(errs, at, v.String(), enumValuesOf(t), f)
	case reflect.Slice:
		if v.IsNil() {
			if f.required {
				return fail("is required", "")
			}
			return errs
		}
		elem := field{typ: t.Elem(), required: true, allowEmpty: true}
		element := &path{parent: at}
		for i := range v.Len() {
			element.index = i
			errs = validateValue(errs, element, v.Index(i), elem)
		}
		return errs
	case reflect.Map:
		if v.IsNil() {
			if f.required {
				return fail("is required", "")
			}
			return errs
		}
		keyEnum := enumValuesOf(t.Key())
		elem := field{typ: t.Elem(), required: true, allowEmpty: true}
		member := &path{parent: at}
		iter := v.MapRange()
		for iter.Next() {
			key := iter.Key().String()
			member.name = " key"
			errs = validateString(errs, member, key, keyEnum, field{required: true})
			member.name = key
			errs = validateValue(errs, member, iter.Value(), elem)
		}
		return errs
	case reflect.Struct:
		return validateStruct(errs, at, v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f.nonNeg && v.Int() < 0 {
			return fail("must not be negative", fmt.Sprint(v.Int()))
		}
	case reflect.Float32, reflect.Float64:
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fail("must be a finite number", fmt.Sprint(x))
		}
		if f.nonNeg && x < 0 {
			return fail("must not be negative", fmt.Sprint(x))
		}
	default:
	}
	return errs
}

func validateString(errs []error, at *path, s string, values []string, f field) []error {
	fail := func(rule string, err error) []error {
		return append(errs, &FieldError{Field: at.String(), Rule: rule, Value: s, err: err})
	}
	switch {
	case s == "":
		if f.required && !f.allowEmpty {
			return fail("is required", nil)
		}
	case values != nil && !isOneOf(s, values):
		return fail("must be one of "+strings.Join(values, ", "), nil)
	case f.uuid && !IsCanonicalID(s):
		return fail("must be a canonical id (lower-case UUID)", nil)
	case f.slug:
		if checkSlug("", s) != nil {
			return append(errs, checkSlug(at.String(), s))
		}
	}
	return errs
}

// IsCanonicalID reports whether s has the form of an agentwire id: a UUID in
// its lower-case, hyphenated form.
func IsCanonicalID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
