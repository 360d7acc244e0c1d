package canonical

import "encoding/json"

// RequestOpened is the payload of request.opened: the agent asks the client
// for something (an approval, a tool result, fresh credentials).
type RequestOpened struct {
	// RequestType is the canonical type of the request.
	RequestType RequestType `json:"requestType"`
	// Detail is a human-readable description (the command to approve, ...).
	Detail string `json:"detail,omitempty"`
	// Args are the request's parameters as the provider sent them.
	Args json.RawMessage `json:"args,omitempty"`
}

// RequestResolved is the payload of request.resolved.
type RequestResolved struct {
	// RequestType is the canonical type of the request.
	RequestType RequestType `json:"requestType"`
	// Decision is the client's decision in the provider's words (accept,
	// decline, allow-once, ...), when there was one.
	Decision string `json:"decision,omitempty"`
	// Resolution is the client's full answer as it was sent.
	Resolution json.RawMessage `json:"resolution,omitempty"`
}

// UserInputRequested is the payload of user-input.requested.
type UserInputRequested struct {
	// Questions are the questions as the provider sent them.
	Questions json.RawMessage `json:"questions"`
}

// UserInputResolved is the payload of user-input.resolved.
type UserInputResolved struct {
	// Answers are the user's answers as they were sent.
	Answers json.RawMessage `json:"answers"`
}

func (*RequestOpened) Kind() Kind      { return KindRequestOpened }
func (*RequestResolved) Kind() Kind    { return KindRequestResolved }
func (*UserInputRequested) Kind() Kind { return KindUserInputRequested }
func (*UserInputResolved) Kind() Kind  { return KindUserInputResolved }

func (*RequestOpened) isPayload()      {}
func (*RequestResolved) isPayload()    {}
func (*UserInputRequested) isPayload() {}
func (*UserInputResolved) isPayload()  {}
