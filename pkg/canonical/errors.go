package canonical

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Every error this package returns wraps one of them, so
// callers branch with errors.Is and never on message text.
var (
	// ErrInvalidEvent is wrapped by every validation failure of an event.
	ErrInvalidEvent = errors.New("invalid canonical event")
	// ErrUnknownKind is wrapped when a type name is not one of Kinds.
	ErrUnknownKind = errors.New("unknown event type")
	// ErrInvalidSlug is wrapped when a provider or tenant is not a valid
	// subject token.
	ErrInvalidSlug = errors.New("invalid slug")
)

// FieldError says which field of an event broke which rule. Field is a JSON
// path in the event document, such as "payload.plan[2].status".
type FieldError struct {
	// Field is the JSON path of the offending field.
	Field string
	// Rule is the rule it broke, as a sentence fragment ("is required").
	Rule string
	// Value is the offending value, empty when the field is missing.
	Value string

	err error
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Rule)
	}
	return fmt.Sprintf("%s: %s (got %s)", e.Field, e.Rule, strconv.Quote(e.Value))
}

// Unwrap returns the sentinel the error belongs to (ErrInvalidEvent unless
// said otherwise), so errors.Is works on FieldErrors.
func (e *FieldError) Unwrap() error {
	if e.err == nil {
		return ErrInvalidEvent
	}
	return e.err
}

// Is makes every FieldError match ErrInvalidEvent as well as its own
// sentinel: an unknown kind is also an invalid event.
func (e *FieldError) Is(target error) bool {
	return target == ErrInvalidEvent
}
