package canonical

// Payload is the typed body of an event; its dynamic type decides the
// event's Kind. It is sealed: only this package can add variants, and every
// variant is a pointer to a struct of this package. Switch over it without a
// default case, so that a new variant breaks lint wherever it must be handled.
//
//sumtype:decl
type Payload interface {
	// Kind is the event type this payload belongs to.
	Kind() Kind
	isPayload()
}

// Field tags used by payloads, read by Validate and by the JSON Schema
// generator so that both enforce the same rules:
//
//   - a field without omitempty/omitzero is required: strings and enums must
//     be non-empty, raw JSON must be present and not null, slices and maps
//     must be non-nil; numbers and booleans only have to be present.
//   - `canonical:"allowempty"` lets a required string be empty.
//   - `canonical:"nonneg"` forbids negative numbers.
//   - `canonical:"uuid"` requires a canonical id (lower-case UUID).
//   - `canonical:"slug"` requires a subject-token slug (see Provider).
const tagName = "canonical"
