// Package canonical is agentwire's canonical model of AI coding-agent runtime
// events: the one language every stage and every subscriber shares.
//
// # Events
//
// An Event is an envelope (ids, tenant, provider, time, provider refs, the
// raw frame) around a typed Payload. The set of event types is closed:
// Kinds lists the 45 types of the specification, each has exactly one
// payload struct, and Payload is a sealed interface, so only this package
// can add variants. Switch over payloads without a default case; the
// gochecksumtype and exhaustive linters then flag every switch that misses
// a new type.
//
// Payload fields follow the specification's names. Where it says `unknown`
// the field is json.RawMessage and carries the provider's value unchanged;
// everything else is typed, including token usage (TokenUsage, one shape
// for every provider; see FoldUsage).
//
// # Validation
//
// Validate checks required members, enum values, id and slug formats,
// non-negative counts and JSON members nested at most MaxJSONDepth deep,
// and reports each violation as a *FieldError naming the JSON path and the
// rule. Decode decodes and validates. Both are driven by the same struct
// tags as the JSON Schemas (Schema, SchemaURI), so the schemas published
// for subscribers in other languages say what Go enforces, but for the
// depth, which a JSON Schema cannot state.
//
// # Identifiers
//
// Canonical ids are agentwire's own, never the provider's (those go in
// ProviderRefs and Raw), and they are deterministic UUIDv5 values: see
// IDSpace for how each is derived from tenant, provider and provider id, or,
// where the provider has none, from the ingest session key, the frame's
// ordinal and a fan-out index. Mapping the same frames again yields the
// same ids, which is what makes replay, dedupe and idempotent projection
// work.
//
// # Providers and tenants
//
// Provider and tenant are slugs (`[a-z0-9]`, inner `-` and `_`, at most 64
// bytes) because both become NATS subject tokens: `.`, `*`, `>` and
// whitespace can never get in. Events are published on Subject:
// `runtime.<provider>.<type>`.
//
// # Encoding
//
// MarshalJSON writes the event document deterministically; Raw keeps the
// frame byte for byte (compact JSON as JSON, other text as a string, other
// bytes as base64). The CloudEvents wire format lives in package
// github.com/agentwire/agentwire/pkg/canonical/wire.
package canonical
