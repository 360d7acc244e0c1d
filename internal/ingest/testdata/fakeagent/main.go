// Command fakeagent is a tiny JSON-RPC agent over stdio for the proxy's
// tests: it answers requests, sends a request of its own to the client
// and waits for the answer, and writes notifications. Its output depends
// only on its input, so runs can be compared byte for byte.
//
//	{"id":1,"method":"ping"}                  → {"id":1,"result":"pong"}
//	{"id":2,"method":"turn","params":{"n":3}} → n progress notifications, a request
//	                                            {"id":"ask-2","method":"approve"}, and
//	                                            after its answer {"id":2,"result":{"approved":…}}
//	{"id":3,"method":"exit","params":{"code":4}} exits with that code
//
// It writes one line on stderr when it starts and exits 0 at EOF.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params struct {
		N    int `json:"n"`
		Code int `json:"code"`
	} `json:"params"`
	Result json.RawMessage `json:"result,omitempty"`
}

func main() {
	fmt.Fprintln(os.Stderr, "fakeagent: ready")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		_ = out.Flush()
	}
	for in.Scan() {
		var m message
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			send(`{"id":null,"error":{"code":-32700,"message":"parse error"}}`)
			continue
		}
		switch m.Method {
		case "ping":
			send(`{"id":%s,"result":"pong"}`, m.ID)
		case "turn":
			for i := range m.Params.N {
				send(`{"method":"progress","params":{"turn":%s,"step":%d}}`, m.ID, i+1)
			}
			send(`{"id":"ask-%s","method":"approve","params":{"command":"make test"}}`, m.ID)
			var answer json.RawMessage
			for in.Scan() {
				var a message
				if json.Unmarshal(in.Bytes(), &a) == nil && string(a.ID) == `"ask-`+string(m.ID)+`"` {
					answer = a.Result
					break
				}
			}
			if answer == nil {
				answer = json.RawMessage("null")
			}
			send(`{"method":"progress","params":{"turn":%s,"step":"done"}}`, m.ID)
			send(`{"id":%s,"result":{"approved":%s}}`, m.ID, answer)
		case "exit":
			os.Exit(m.Params.Code)
		default:
			send(`{"id":%s,"error":{"code":-32601,"message":"unknown method"}}`, m.ID)
		}
	}
}
