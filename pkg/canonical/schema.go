package canonical

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
)

//go:generate go run ./internal/schemagen -out schemas

// SchemaBaseURI is the prefix of every event schema's $id and of the
// CloudEvents dataschema attribute; SchemaURI appends "<type>.json". The
// "v1" segment changes only with an incompatible change of the model.
const SchemaBaseURI = "https://agentwire.dev/schemas/runtime/v1/"

const (
	slugPattern = `^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$`
	uuidPattern = `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
)

// SchemaURI returns the URI that identifies the JSON Schema of kind k.
func SchemaURI(k Kind) string { return SchemaBaseURI + string(k) + ".json" }

// Schema returns the JSON Schema (draft 2020-12) of the event document of
// kind k: the envelope with `type` fixed to k and the payload of k. It is
// generated from the Go types and their tags, so it enforces exactly what
// Validate enforces for structure, required members and enum values.
// The output is deterministic and indented.
func Schema(k Kind) ([]byte, error) {
	p, err := NewPayload(k)
	if err != nil {
		return nil, err
	}
	envelope := structSchema(reflect.TypeFor[Event]())
	props := envelope["properties"].(map[string]any)
	props["type"] = map[string]any{"const": string(k)}
	props["payload"] = typeSchema(reflect.TypeOf(p).Elem(), field{required: true})
	props["raw"] = structSchema(reflect.TypeFor[Raw]())
	envelope["required"] = append(envelope["required"].([]string), "type", "payload")
	envelope["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	envelope["$id"] = SchemaURI(k)
	envelope["title"] = string(k)
	envelope["description"] = "agentwire canonical runtime event of type " + string(k) + "."

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(envelope); err != nil {
		return nil, fmt.Errorf("encode schema of %s: %w", k, err)
	}
	return buf.Bytes(), nil
}

func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range fieldsOf(t) {
		props[f.name] = typeSchema(f.typ, f)
		if f.required {
			required = append(required, f.name)
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

func typeSchema(t reflect.Type, f field) map[string]any {
	switch t {
	case rawMessageType:
		if f.required {
			return map[string]any{"not": map[string]any{"type": "null"}}
		}
		return map[string]any{}
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeSchema(t.Elem(), f)
	case reflect.String:
		s := map[string]any{"type": "string"}
		switch values := enumValuesOf(t); {
		case values != nil:
			s["enum"] = values
		case f.uuid:
			s["pattern"] = uuidPattern
		case f.slug:
			s["pattern"] = slugPattern
		case f.required && !f.allowEmpty:
			s["minLength"] = 1
		}
		return s
	case reflect.Slice:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem(), field{required: true, allowEmpty: true})}
	case reflect.Map:
		s := map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem(), field{required: true, allowEmpty: true})}
		if values := enumValuesOf(t.Key()); values != nil {
			s["propertyNames"] = map[string]any{"enum": values}
		}
		return s
	case reflect.Struct:
		return structSchema(t)
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s := map[string]any{"type": "integer"}
		if f.nonNeg {
			s["minimum"] = 0
		}
		return s
	case reflect.Float32, reflect.Float64:
		s := map[string]any{"type": "number"}
		if f.nonNeg {
			s["minimum"] = 0
		}
		return s
	default:
		panic(fmt.Sprintf("canonical: no JSON Schema for Go type %s", t))
	}
}

// WriteSchemas writes Schema(k) for every kind to dir/<k>.json, creating dir.
func WriteSchemas(dir string) error {
	// Schemas are public documents: world-readable on purpose.
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // see above
		return fmt.Errorf("write schemas: %w", err)
	}
	for _, k := range Kinds() {
		b, err := Schema(k)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, string(k)+".json"), b, 0o644); err != nil { //nolint:gosec // public document
			return fmt.Errorf("write schema of %s: %w", k, err)
		}
	}
	return nil
}
