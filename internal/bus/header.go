package bus

// Headers of RAW messages. The body is the frame; everything else is here.
const (
	HeaderTenant     = "Agentwire-Tenant"
	HeaderProvider   = "Agentwire-Provider"
	HeaderDialect    = "Agentwire-Dialect"
	HeaderDirection  = "Agentwire-Direction"
	HeaderSessionKey = "Agentwire-Session-Key"
	HeaderOrdinal    = "Agentwire-Ordinal"
	HeaderReceivedAt = "Agentwire-Received-At"
	// HeaderBacklog is "true" on a frame read from a log after it was
	// written: its receive time is not when it was written.
	HeaderBacklog = "Agentwire-Backlog"
	// HeaderWrittenBy, on a backlog frame, is a time by which it had been
	// written (RFC 3339): the modification time of the file it was read
	// from. Its events take it, not the receive time, when the frame
	// states no time of its own, so a log read days later counts on the
	// day it was written.
	HeaderWrittenBy = "Agentwire-Written-By"
	// HeaderObject names the RAW_OBJECTS object holding a frame too large
	// for a message; the body is then empty.
	HeaderObject = "Agentwire-Object"
	// HeaderReason says why a message was dead-lettered.
	HeaderReason = "Agentwire-Reason"
	// HeaderMsgID is JetStream's deduplication header.
	HeaderMsgID = "Nats-Msg-Id"
)
