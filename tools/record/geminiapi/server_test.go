package geminiapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

const mainBody = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`

func TestStreamsThoughtsTextAndCalls(t *testing.T) {
	t.Parallel()
	srv, err := Start(io.Discard, script.Script{{
		Thinking:    "**Thinking** about it",
		Text:        "I will run it.",
		ToolCalls:   []script.ToolCall{{Name: "run_shell_command", Args: `{"command":"ls"}`}},
		InputTokens: 100, CachedTokens: 40, OutputTokens: 7,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	code, body := post(t, srv.URL()+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", mainBody)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var events []map[string]any
	for l := range strings.SplitSeq(body, "\n") {
		data, ok := strings.CutPrefix(strings.TrimSpace(l), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("chunk is not JSON: %s", data)
		}
		events = append(events, ev)
	}
	if len(events) < 3 {
		t.Fatalf("want at least thought, text and call chunks, got %d:\n%s", len(events), body)
	}
	for _, want := range []string{`"thought":true`, `"functionCall":{"args":{"command":"ls"},"name":"run_shell_command"}`, `"finishReason":"STOP"`, `"cachedContentTokenCount":40`, `"thoughtsTokenCount"`} {
		if !strings.Contains(body, want) {
			t.Errorf("stream lacks %s:\n%s", want, body)
		}
	}
	if got := srv.Requests(); got != 1 {
		t.Errorf("Requests() = %d, want 1", got)
	}
}

func TestSideRequestFollowsSchemaWithoutConsumingScript(t *testing.T) {
	t.Parallel()
	srv, err := Start(io.Discard, script.Script{{Text: "main"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	side := `{"contents":[{"role":"user","parts":[{"text":"who speaks?"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["model","user"]}},"required":["reasoning","next_speaker"]}}}`
	code, body := post(t, srv.URL()+"/v1beta/models/gemini-2.5-flash:generateContent", side)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Candidates) == 0 || len(resp.Candidates[0].Content.Parts) == 0 {
		t.Fatalf("not a GenerateContentResponse: %s", body)
	}
	var answer map[string]any
	if err := json.Unmarshal([]byte(resp.Candidates[0].Content.Parts[0].Text), &answer); err != nil {
		t.Fatalf("side answer is not JSON: %s", body)
	}
	if answer["next_speaker"] != "user" {
		t.Errorf("next_speaker = %v, want user", answer["next_speaker"])
	}
	if got := srv.Requests(); got != 0 {
		t.Errorf("a side request consumed the script: Requests() = %d", got)
	}
}

func TestErrorsAreRPCStatus(t *testing.T) {
	t.Parallel()
	srv, err := Start(io.Discard, script.Script{
		{Error: &script.HTTPError{Status: 429, Message: "slow down", RetryAfterSeconds: 2}},
		{Error: &script.HTTPError{Status: 500, Message: "boom"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := srv.URL() + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	for _, want := range []struct {
		code   int
		status string
	}{{429, "RESOURCE_EXHAUSTED"}, {500, "INTERNAL"}} {
		code, body := post(t, url, mainBody)
		if code != want.code || !strings.Contains(body, `"status":"`+want.status+`"`) {
			t.Errorf("got %d %s, want %d with status %s", code, body, want.code, want.status)
		}
	}
}
