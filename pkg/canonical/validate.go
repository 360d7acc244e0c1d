package canonical

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/google/uuid"
)

// Validate checks an event against the rules of its type: required fields,
// enum values, canonical id formats, slugs, non-negative counts and the raw
// frame's encoding. It returns every violation found, each a *FieldError
// naming the field and the rule, joined with errors.Join; errors.Is(err,
// ErrInvalidEvent) holds for the result.
func Validate(e Event) error {
	var errs []error
	errs = validateStruct(errs, "", reflect.ValueOf(e))
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
			errs = validateStruct(errs, "payload", pv.Elem())
		}
	}
	if e.Raw != nil {
		errs = validateStruct(errs, "raw", reflect.ValueOf(*e.Raw))
		if e.Raw.Encoding == RawRef {
			if ref, err := e.Raw.Reference(); err != nil || (ref.Stream == "") == (ref.Bucket == "") {
				errs = append(errs, &FieldError{Field: "raw.payload", Rule: "must be a reference to a stream message or an object"})
			}
		} else if _, err := e.Raw.Frame(); err != nil && e.Raw.Encoding.Valid() {
			errs = append(errs, &FieldError{Field: "raw.payload", Rule: "must hold the frame in the stated encoding"})
		}
	}
	return errors.Join(errs...)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func validateStruct(errs []error, path string, v reflect.Value) []error {
	for _, f := range fieldsOf(v.Type()) {
		errs = validateValue(errs, join(path, f.name), v.FieldByIndex(f.index), f)
	}
	return errs
}

func validateValue(errs []error, path string, v reflect.Value, f field) []error {
	fail := func(rule, value string) []error {
		return append(errs, &FieldError{Field: path, Rule: rule, Value: value})
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
		if !json.Valid(raw) {
			return fail("must be valid JSON", "")
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
		return validateValue(errs, path, v.Elem(), f)
	case reflect.String:
		return validateString(errs, path, v.String(), enumValuesOf(t), f)
	case reflect.Slice:
		if v.IsNil() {
			if f.required {
				return fail("is required", "")
			}
			return errs
		}
		elem := field{typ: t.Elem(), required: true, allowEmpty: true}
		for i := range v.Len() {
			errs = validateValue(errs, fmt.Sprintf("%s[%d]", path, i), v.Index(i), elem)
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
		iter := v.MapRange()
		for iter.Next() {
			key := iter.Key().String()
			errs = validateString(errs, path+" key", key, keyEnum, field{required: true})
			errs = validateValue(errs, join(path, key), iter.Value(), elem)
		}
		return errs
	case reflect.Struct:
		return validateStruct(errs, path, v)
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

func validateString(errs []error, path, s string, values []string, f field) []error {
	fail := func(rule string, err error) []error {
		return append(errs, &FieldError{Field: path, Rule: rule, Value: s, err: err})
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
		if err := checkSlug(path, s); err != nil {
			return append(errs, err)
		}
	}
	return errs
}

// IsCanonicalID reports whether s has the form of an agentwire id: a UUID in
// its lower-case, hyphenated form.
func IsCanonicalID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
