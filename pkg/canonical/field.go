package canonical

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
)

// field is what Validate and the schema generator know about one JSON
// member of a struct: both read it from the same struct tags, so a rule
// cannot be enforced by one and forgotten by the other.
type field struct {
	name       string
	index      []int
	typ        reflect.Type
	required   bool
	allowEmpty bool
	nonNeg     bool
	uuid       bool
	slug       bool
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	timeType       = reflect.TypeFor[time.Time]()
	enumType       = reflect.TypeFor[enum]()
	fieldCache     sync.Map // reflect.Type -> []field
	enumCache      sync.Map // reflect.Type -> []string
)

// fieldsOf lists the JSON members of struct type t in declaration order,
// flattening embedded structs as encoding/json does.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		if sf.Anonymous && tag == "" && sf.Type.Kind() == reflect.Struct {
			for _, inner := range fieldsOf(sf.Type) {
				inner.index = append([]int{i}, inner.index...)
				fs = append(fs, inner)
			}
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		f := field{name: name, index: []int{i}, typ: sf.Type, required: true}
		for opt := range strings.SplitSeq(opts, ",") {
			if opt == "omitempty" || opt == "omitzero" {
				f.required = false
			}
		}
		for rule := range strings.SplitSeq(sf.Tag.Get(tagName), ",") {
			switch rule {
			case "allowempty":
				f.allowEmpty = true
			case "nonneg":
				f.nonNeg = true
			case "uuid":
				f.uuid = true
			case "slug":
				f.slug = true
			}
		}
		fs = append(fs, f)
	}
	fieldCache.Store(t, fs)
	return fs
}

// enumValuesOf returns the allowed values of an enum type, or nil.
func enumValuesOf(t reflect.Type) []string {
	if t.Kind() != reflect.String {
		return nil
	}
	if vs, ok := enumCache.Load(t); ok {
		return vs.([]string)
	}
	var vs []string
	if t.Implements(enumType) {
		vs = reflect.Zero(t).Interface().(enum).enumValues()
	}
	enumCache.Store(t, vs)
	return vs
}
