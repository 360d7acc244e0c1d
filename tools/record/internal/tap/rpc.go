package tap

import (
	"context"
	"encoding/json"
	"fmt"
)

// RPC plays the client side of JSON-RPC 2.0 over a Session: it sends
// requests and notifications, hands agent→client requests to a handler,
// and records everything through the Session.
type RPC struct {
	S *Session
	// JSONRPC is the "jsonrpc" member to send: "2.0" for ACP, "" for Codex,
	// which omits it.
	JSONRPC string
	// OnRequest answers a request the agent sends (approvals, fs reads):
	// it returns the result, or an error object to send instead.
	OnRequest func(method string, params map[string]any) (result any, rpcErr map[string]any)
	// OnNotify sees every notification and every other frame.
	OnNotify func(f Frame)

	next int
}

func (r *RPC) envelope(m map[string]any) map[string]any {
	if r.JSONRPC != "" {
		m["jsonrpc"] = r.JSONRPC
	}
	return m
}

// Notify sends a notification; nil params leaves the member out, as some
// agents (Codex's initialized) expect.
func (r *RPC) Notify(method string, params any) error {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	return r.S.Send(r.envelope(m))
}

// Send sends a request and returns its id without waiting.
func (r *RPC) Send(method string, params any) (int, error) {
	r.next++
	id := r.next
	return id, r.S.Send(r.envelope(map[string]any{"id": id, "method": method, "params": params}))
}

// Call sends a request and serves the agent (its requests, notifications)
// until the response arrives. It returns the result, or an error carrying
// the JSON-RPC error object.
func (r *RPC) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, err := r.Send(method, params)
	if err != nil {
		return nil, err
	}
	return r.Await(ctx, id)
}

// Await serves the agent until the response to request id arrives.
func (r *RPC) Await(ctx context.Context, id int) (json.RawMessage, error) {
	for {
		f, err := r.S.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("awaiting response %d: %w", id, err)
		}
		if done, res, err := r.handle(f, id); done {
			return res, err
		}
	}
}

// Serve handles frames until stop returns true for one (after handling it).
func (r *RPC) Serve(ctx context.Context, stop func(Frame) bool) error {
	for {
		f, err := r.S.Next(ctx)
		if err != nil {
			return err
		}
		_, _, _ = r.handle(f, -1) // no response is awaited here
		if stop(f) {
			return nil
		}
	}
}

func (r *RPC) handle(f Frame, want int) (bool, json.RawMessage, error) {
	_, hasMethod := f.Obj["method"]
	idv, hasID := f.Obj["id"]
	switch {
	case hasMethod && hasID:
		params, _ := f.Obj["params"].(map[string]any)
		method, _ := f.Obj["method"].(string)
		var result any = map[string]any{}
		var rpcErr map[string]any
		if r.OnRequest != nil {
			result, rpcErr = r.OnRequest(method, params)
		} else {
			rpcErr = map[string]any{"code": -32601, "message": "method not found"}
		}
		resp := map[string]any{"id": idv}
		if rpcErr != nil {
			resp["error"] = rpcErr
		} else {
			resp["result"] = result
		}
		_ = r.S.Send(r.envelope(resp))
	case hasID:
		if n, ok := idv.(float64); ok && int(n) == want {
			if e, ok := f.Obj["error"]; ok {
				b, _ := json.Marshal(e)
				return true, nil, fmt.Errorf("json-rpc error: %s", b)
			}
			b, _ := json.Marshal(f.Obj["result"])
			return true, b, nil
		}
		if r.OnNotify != nil {
			r.OnNotify(f)
		}
	default:
		if r.OnNotify != nil {
			r.OnNotify(f)
		}
	}
	return false, nil, nil
}
