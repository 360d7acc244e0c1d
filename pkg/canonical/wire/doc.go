// Package wire carries canonical events as CloudEvents 1.0: in the NATS
// protocol binding's binary content mode (attributes in `ce-*` headers, the
// event document as the body), which is what agentwire publishes on
// `runtime.<provider>.<type>`, and in the JSON event format (structured
// mode), which is what `agentwire map` prints.
//
// Attributes:
//
//	specversion     "1.0"
//	id              the eventId
//	type            the canonical type, such as "turn.completed"
//	source          /tenants/<tenant>/providers/<provider>/sessions/<sessionId>
//	subject         the threadId (absent when the event has no thread)
//	time            createdAt, RFC 3339 in UTC
//	datacontenttype "application/json"
//	dataschema      the type's JSON Schema URI (canonical.SchemaURI)
//
// Extensions (absent when empty): tenant, provider, sessionid, threadid,
// turnid, itemid, requestid, mappingversion. The data is always the whole
// canonical event document (canonical.Encode), so a subscriber that ignores
// the attributes loses nothing.
//
// Decoding checks that attributes and data agree, so a message whose
// headers were rewritten on the way is rejected rather than misfiled.
// github.com/cloudevents/sdk-go/v2 reads everything this package writes; the
// tests use it as the oracle.
package wire
