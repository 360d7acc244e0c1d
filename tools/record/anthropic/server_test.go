package anthropic

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

func TestStreamsTextReplyAndCountsMainRequests(t *testing.T) {
	t.Parallel()
	srv, err := Start(io.Discard, script.Script{{Thinking: "let me think about it", Text: "hello there, recorder"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := `{"model":"claude-x","max_tokens":1000,"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"event: message_start", `"thinking_delta"`, `"signature_delta"`, `"text_delta"`, `"stop_reason":"end_turn"`, "event: message_stop", `"cache_read_input_tokens"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stream lacks %s:\n%s", want, b)
		}
	}
	if got := srv.Requests(); got != 1 {
		t.Errorf("Requests() = %d, want 1", got)
	}
}

func TestSideRequestDoesNotConsumeScript(t *testing.T) {
	t.Parallel()
	srv, err := Start(io.Discard, script.Script{{Error: &script.HTTPError{Status: 429, RetryAfterSeconds: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(body string) (int, http.Header) {
		resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header
	}
	if status, _ := post(`{"model":"claude-haiku","max_tokens":512,"messages":[{"role":"user","content":"title?"}]}`); status != http.StatusOK {
		t.Errorf("side request: status %d", status)
	}
	status, h := post(`{"model":"claude-x","max_tokens":1000,"stream":true,"tools":[{"name":"Bash"}],"messages":[]}`)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" {
		t.Errorf("main request: status %d, Retry-After %q", status, h.Get("Retry-After"))
	}
	if got := srv.Requests(); got != 1 {
		t.Errorf("Requests() = %d, want 1", got)
	}
}

// TestRepliesByModel: a reply that names a model answers that model's
// requests only, in script order, whichever conversation asks first.
func TestRepliesByModel(t *testing.T) {
	t.Parallel()
	srv, err := Start(io.Discard, script.Script{{Model: "sonnet", Text: "main one"}, {Model: "haiku", Text: "sub one"}, {Model: "sonnet", Text: "main two"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ask := func(model string) string {
		body := `{"model":"` + model + `","max_tokens":1000,"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`
		resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, step := range []struct{ model, want string }{
		{"claude-haiku-4-5", "sub one"}, {"claude-sonnet-4-5", "main one"}, {"claude-sonnet-4-5", "main two"}, {"claude-haiku-4-5", "done"},
	} {
		if got := ask(step.model); !strings.Contains(got, step.want) {
			t.Errorf("%s: reply lacks %q:\n%s", step.model, step.want, got)
		}
	}
}
