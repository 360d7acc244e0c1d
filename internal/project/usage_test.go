package project_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// TestUsageOfTurnsNotEnded: a log cut off mid-turn (a crashed session, a
// copy taken while it ran) never states its last turn's usage. What the
// turn reported on the way is in the ledger, provisional, so the usage
// views count every token the session reports. When another session of
// the same run (the Codex tap, the Claude stream) ends the turn, the
// turn's own count replaces it: counted once, whatever the order the
// sessions come in and however the batches cut them.
func TestUsageOfTurnsNotEnded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cut   string
		keep  int // lines of the log kept: the turn is open after them
		whole string
	}{
		{"claude-log/multistep", 13, "claude-control/multistep"},
		{"claude-control/multistep", 18, "claude-log/multistep"},
		{"codex-rollout/multistep", 28, "codex-app-server/multistep"},
	} {
		t.Run(c.cut, func(t *testing.T) {
			t.Parallel()
			cut := mapCut(t, c.cut, c.keep)
			whole, ok := mapRecording(t, "acme", "../../testdata/recordings/"+c.whole+".jsonl", "")
			require.True(t, ok)
			ctx := context.Background()

			e := projected(t, cut)
			var provisional, ended int
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE provisional), count(*) FILTER (WHERE NOT provisional) FROM usage_ledger`).
				Scan(&provisional, &ended))
			require.Positive(t, provisional, "the open turn's usage so far")
			require.Zero(t, ended, "no turn of the log ended")
			var open, turnTokens int64
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(input_tokens + output_tokens), 0) FROM turns WHERE ended_at IS NULL`).
				Scan(&open, &turnTokens))
			require.Equal(t, int64(1), open)
			require.Positive(t, turnTokens, "the open turn's row shows its usage so far")
			// Every token the session reports is in the ledger, and once.
			sums := `SELECT array[sum(input_tokens), sum(cached_input_tokens), sum(cache_write_input_tokens), sum(output_tokens), sum(reasoning_output_tokens)]::int8[] FROM `
			var ledger, thread []int64
			require.NoError(t, e.pool.QueryRow(ctx, sums+`usage_ledger`).Scan(&ledger))
			require.NoError(t, e.pool.QueryRow(ctx, sums+`threads`).Scan(&thread))
			require.Equal(t, thread, ledger)
			var viewed []int64
			require.NoError(t, e.pool.QueryRow(ctx, sums+`usage_by_session`).Scan(&viewed))
			require.Equal(t, ledger, viewed)
			// The views say how much of it is a turn's usage so far.
			var perDay, perMonth, perSession int
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT (SELECT sum(provisional_turns) FROM usage_by_day), (SELECT sum(provisional_turns) FROM usage_by_month),
				(SELECT sum(provisional_turns) FROM usage_by_session)`).Scan(&perDay, &perMonth, &perSession))
			require.Equal(t, []int{provisional, provisional, 1}, []int{perDay, perMonth, perSession}, "the open turn's rows, one turn")
			// A report replaces the one before, in whichever batch it comes.
			requireSameDump(t, e.dump(), projectedBy(t, project.Config{Workers: 1, BatchSize: 1}, cut).dump(), "the projection in one batch")

			alone := projected(t, whole)
			var want []int64
			require.NoError(t, alone.pool.QueryRow(ctx, sums+`usage_by_day`).Scan(&want))
			require.Greater(t, want[0]+want[3], ledger[0]+ledger[3], "the whole turn used more than the cut log saw")
			var dumps []string
			// Two workers, commits held open: the sessions' writes of the
			// turn race.
			slow := func(int) { time.Sleep(5 * time.Millisecond) }
			for _, cfg := range []project.Config{{Workers: 1}, {Workers: 1, BatchSize: 1}, {Workers: 2, BatchSize: 1, BeforeCommit: slow}} {
				for _, recs := range [][]recording{{cut, whole}, {whole, cut}} {
					both := projectedBy(t, cfg, recs...)
					var got []int64
					require.NoError(t, both.pool.QueryRow(ctx, sums+`usage_by_day`).Scan(&got))
					require.Equal(t, want, got, "%d workers, batch size %d, %s first: the turn's own count, once", cfg.Workers, cfg.BatchSize, recs[0].name)
					require.NoError(t, both.pool.QueryRow(ctx, `SELECT count(*) + (SELECT sum(provisional_turns) FROM usage_by_day) FROM usage_ledger WHERE provisional`).Scan(&provisional))
					require.Zero(t, provisional, "%d workers, batch size %d, %s first", cfg.Workers, cfg.BatchSize, recs[0].name)
					dumps = append(dumps, both.dump())
				}
			}
			for _, d := range dumps[1:] {
				requireSameDump(t, dumps[0], d, "another order or batch size")
			}
		})
	}
}

// mapCut maps the first keep lines of a recording ("<set>/<scenario>"),
// under the recording's own session key: a copy of its log taken while
// the session ran.
func mapCut(t *testing.T, name string, keep int) recording {
	t.Helper()
	b, err := os.ReadFile("../../testdata/recordings/" + name + ".jsonl")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.Greater(t, len(lines), keep)
	path := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(name)), filepath.Base(name)+".jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o750))
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:keep], "")), 0o600))
	r, ok := mapRecording(t, "acme", path, "recordings/"+name)
	require.True(t, ok)
	return r
}

// TestReportAndCountOfOneTurnRace: two sessions describe one turn (a
// Claude stream and its log), and the workers applying them write at the
// same moment: one the turn's usage so far, under a model the other's
// count does not name, the other the turn's own count. Neither sees what
// the other has not committed; the ledger must still hold the turn's own
// count alone, not the report beside it. (The thread row both update
// orders the two transactions as well; with turn.completed kept off that
// row, this failed without lockUsageKeys and passed with it.)
func TestReportAndCountOfOneTurnRace(t *testing.T) {
	t.Parallel()
	const tenant, workers = "acme", 2
	// Sessions applied by different workers (the projector's hash).
	var spaces []canonical.IDSpace
	for i := 0; len(spaces) < 2; i++ {
		ids := canonical.IDSpace{Tenant: tenant, Provider: canonical.ProviderClaude, SessionKey: fmt.Sprintf("race-%d", i)}
		if len(spaces) == 0 || project.WorkerOf(tenant, ids.IngestSession(), workers) != project.WorkerOf(tenant, spaces[0].IngestSession(), workers) {
			spaces = append(spaces, ids)
		}
	}
	thread := spaces[0].Native(canonical.EntityThread, "th")
	// One event each: one batch each, written at the same moment.
	turn := func(ids canonical.IDSpace, p canonical.Payload) recording {
		return recording{name: ids.SessionKey, events: []canonical.Event{{
			EventID: ids.Event(1, 0), Tenant: tenant, Provider: canonical.ProviderClaude, SessionID: ids.IngestSession(),
			CreatedAt: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC), ThreadID: thread, TurnID: ids.Derived(canonical.EntityTurn, 1, 0),
			ProviderRefs: canonical.ProviderRefs{ProviderTurnID: "msg_1"}, MappingVersion: "fixture/1", Payload: p,
		}}}
	}
	soFar := canonical.TokenUsage{InputTokens: 10, OutputTokens: 1}
	own := canonical.TokenUsage{InputTokens: 10, OutputTokens: 9}
	report := turn(spaces[0], &canonical.ThreadTokenUsageUpdated{Usage: soFar, Turn: &soFar,
		TurnModelUsage: map[string]canonical.ModelUsage{"model-as-reported": {TokenUsage: soFar}}})
	count := turn(spaces[1], &canonical.TurnCompleted{State: canonical.TurnStateCompleted, Usage: &own,
		ModelUsage: map[string]canonical.ModelUsage{"model-as-counted": {TokenUsage: own}}})

	e := newEnv(t)
	e.publish([]recording{report, count}, 1)
	// Each batch holds its transaction open long enough for the other
	// worker's to run beside it.
	e.start(project.Config{Workers: workers, BatchSize: 1, BeforeCommit: func(int) { time.Sleep(300 * time.Millisecond) }})
	e.waitApplied("")
	rows, err := e.pool.Query(context.Background(), `SELECT model || ' ' || output_tokens || ' ' || provisional FROM usage_ledger ORDER BY 1`)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"model-as-counted 9 false"}, got)
}

// TestThreadUsageWhereverBatchesEnd: a thread's row is the same however
// batches cut the session (a projector that starts over after a crash cuts
// it elsewhere). It once held the greatest of the counts that ended a
// batch: with the whole session in one batch, the last count alone. Here a
// resumed Codex process counts from 0 again in the same rollout; the
// adapter adds the first process's count to the second's (codex-rollout/17),
// so the row is the whole thread's. A count that goes down in the events
// (two sessions' counts, a Claude result's total) leaves the greatest of
// each bucket; TestAnyOrderWhereverBatchesEnd draws such orders.
func TestThreadUsageWhereverBatchesEnd(t *testing.T) {
	t.Parallel()
	count := func(at string, input, cached, output, reasoning int) []byte {
		u := fmt.Sprintf(`{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":%d,"total_tokens":%d}`,
			input, cached, output, reasoning, input+output)
		return []byte(`{"timestamp":"` + at + `","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":` + u +
			`,"last_token_usage":` + u + `,"model_context_window":272000}}}`)
	}
	lines := [][]byte{
		[]byte(`{"timestamp":"2025-09-25T14:02:05.435Z","type":"session_meta","payload":{"id":"0199812e-64f0-7f73-91fc-095dda01c36e","timestamp":"2025-09-25T14:02:05.424Z","cwd":"/w","originator":"codex_vscode","cli_version":"0.40.0"}}`),
		count("2025-09-25T14:02:23.021Z", 3102, 2560, 357, 320),
		count("2025-09-25T14:02:26.448Z", 6726, 6016, 409, 320),
		// The thread resumed by a new process, which counts from 0.
		count("2025-09-25T14:12:20.096Z", 37208, 2432, 335, 128),
	}
	rec := mapLinesAs(t, "codex-rollout", "acme", "resumed", "resumed", lines)
	ctx := context.Background()
	var dumps []string
	for _, cfg := range []project.Config{{Workers: 1}, {Workers: 1, BatchSize: 1}} {
		e := projectedBy(t, cfg, rec)
		var usage []int64
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT array[input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens]::int8[] FROM threads`).
			Scan(&usage))
		// Both processes' counts: uncached input (6726 - 6016) + (37208 -
		// 2432), cached 6016 + 2432, output 409 + 335, reasoning 320 + 128.
		require.Equal(t, []int64{35486, 8448, 0, 744, 448}, usage, "batches of %d", cfg.BatchSize)
		dumps = append(dumps, e.dump())
	}
	requireSameDump(t, dumps[0], dumps[1], "the projection in one batch")
}

// TestTurnUsageWhereverBatchesEnd: a report of a turn's usage so far that
// comes after the turn ended (Codex counts tokens after an interrupted
// turn's turn_aborted) counts as long as the turn stated no count of its
// own at its end, and never replaces one it stated, in the same batch as
// in a later one; a turn that has no model takes the one it names
// either way.
func TestTurnUsageWhereverBatchesEnd(t *testing.T) {
	t.Parallel()
	rec, event := withEvents(t, "turn-usage")
	turn := func(name string, p canonical.Payload) canonical.Event {
		e := event(p)
		e.TurnID = uuid.NewSHA1(uuid.NameSpaceURL, []byte(name)).String()
		return e
	}
	soFar := func(name string, input int64, model string) canonical.Event {
		u := canonical.TokenUsage{InputTokens: input, OutputTokens: 1}
		p := &canonical.ThreadTokenUsageUpdated{Usage: u, Turn: &u}
		if model != "" {
			p.TurnModelUsage = map[string]canonical.ModelUsage{model: {TokenUsage: u}}
		}
		return turn(name, p)
	}
	rec.events = append(rec.events,
		turn("interrupted", &canonical.TurnStarted{}),
		soFar("interrupted", 100, ""),
		turn("interrupted", &canonical.TurnAborted{Reason: "interrupted"}),
		soFar("interrupted", 150, ""),
		turn("counted", &canonical.TurnStarted{}),
		soFar("counted", 10, ""),
		turn("counted", &canonical.TurnCompleted{State: canonical.TurnStateCompleted, Usage: &canonical.TokenUsage{InputTokens: 40, OutputTokens: 2}}),
		// Its count is not the turn's, but the model it names is.
		soFar("counted", 55, "model-named-late"),
	)
	ctx := context.Background()
	var dumps []string
	for _, cfg := range []project.Config{{Workers: 1}, {Workers: 1, BatchSize: 1}} {
		e := projectedBy(t, cfg, rec)
		for name, want := range map[string]string{"interrupted": "150 true", "counted": "40 false"} {
			id := uuid.NewSHA1(uuid.NameSpaceURL, []byte(name)).String()
			var turnInput, ledgerInput int64
			var provisional bool
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT t.input_tokens, l.input_tokens, l.provisional
				FROM turns t JOIN usage_ledger l USING (tenant_id, turn_id) WHERE t.turn_id = $1`, id).
				Scan(&turnInput, &ledgerInput, &provisional))
			require.Equal(t, want, fmt.Sprint(ledgerInput, " ", provisional), "%s: the ledger, batches of %d", name, cfg.BatchSize)
			require.Equal(t, ledgerInput, turnInput, "%s: the turn's row, batches of %d", name, cfg.BatchSize)
		}
		var model string
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(model, 'NULL') FROM turns WHERE turn_id = $1`,
			uuid.NewSHA1(uuid.NameSpaceURL, []byte("counted")).String()).Scan(&model))
		require.Equal(t, "model-named-late", model, "batches of %d", cfg.BatchSize)
		dumps = append(dumps, e.dump())
	}
	requireSameDump(t, dumps[0], dumps[1], "the projection in one batch")
}

// TestSubAgentsInTheMainLog: the usage views count every assistant
// message of a Claude session log once (its last line's counts, as the log
// refines them), whoever made the call. Claude Code before 2.0 wrote a
// sub-agent's lines into the main log (isSidechain), inside the main turn:
// they are in the ledger, as the stream's result counts them in
// modelUsage, and not in the turns table, whose usage is the main line's,
// as the result's usage states it. Later CLIs write each sub-agent's own
// transcript, whose lines are its main line. Every public log.
func TestSubAgentsInTheMainLog(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../../shared/corpus/claude-sessionlog/*.jsonl")
	require.NoError(t, err)
	if len(paths) == 0 {
		t.Skip("the public transcripts are not here")
	}
	var recs []recording
	for i, p := range paths {
		r, ok := mapAs(t, "claude-log", fmt.Sprintf("log-%d", i), p, "")
		require.True(t, ok)
		recs = append(recs, r)
	}
	e := projectedBy(t, project.Config{}, recs...)
	inMain := 0
	for i, p := range paths {
		all, main, mixed := messageUsage(t, p)
		tenant := fmt.Sprintf("log-%d", i)
		require.Equal(t, all, e.usageSum(`usage_by_session WHERE tenant_id = $1`, tenant), "%s: the usage views", p)
		if !mixed {
			continue
		}
		inMain++
		require.Greater(t, all.OutputTokens, main.OutputTokens, p)
		require.Equal(t, main, e.usageSum(`turns WHERE tenant_id = $1`, tenant), "%s: the turns' own usage", p)
	}
	require.Positive(t, inMain, "no public log has sub-agent lines in its main log: the test lost its case")
}

// messageUsage sums a Claude session log's assistant messages, each once
// with its last line's counts: all of them, and the main line's alone.
// mixed says the log has both main-line and sidechain messages.
func messageUsage(t *testing.T, path string) (all, main canonical.TokenUsage, mixed bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	type msg struct {
		side bool
		u    canonical.TokenUsage
	}
	last := map[string]msg{}
	for line := range strings.Lines(string(b)) {
		var l struct {
			Type    string `json:"type"`
			Side    bool   `json:"isSidechain"`
			Message struct {
				ID    string       `json:"id"`
				Model string       `json:"model"`
				Usage claudeCounts `json:"usage"`
			} `json:"message"`
		}
		// "<synthetic>" messages (the CLI's own error text) cost nothing.
		if json.Unmarshal([]byte(line), &l) != nil || l.Type != "assistant" || l.Message.ID == "" || strings.HasPrefix(l.Message.Model, "<") {
			continue
		}
		last[l.Message.ID] = msg{side: l.Side, u: l.Message.Usage.usage()}
	}
	var sides, mains int
	for _, m := range last {
		all = all.Add(m.u)
		if m.side {
			sides++
		} else {
			mains++
			main = main.Add(m.u)
		}
	}
	return all, main, sides > 0 && mains > 0
}

// TestUsageMatchesProviderTotals: for the public transcripts of real runs,
// the ledger gives the counts the agents state themselves. A Codex
// rollout's is its last token_count total (input less the cached part, as
// the views count it), summed over the stretches where a resumed process
// counted from zero again; every turn of those rollouts ended, so all of
// the ledger counts. A Claude stream's is each session's last cumulative
// modelUsage of a result (a result without one states its usage), summed
// the same way; a stream cut off mid-turn also reports what that turn used
// so far (provisional), which no result states, so only the rows of ended
// turns compare. Transcripts the corpus marks as doubtful (synthetic
// sequences) are left out.
func TestUsageMatchesProviderTotals(t *testing.T) {
	t.Parallel()
	doubt := doubtfulTranscripts(t)
	var recs []recording
	var checks []providerTotal
	for _, c := range []struct {
		glob, dialect string
		total         func(t *testing.T, path string) canonical.TokenUsage
		where         string
	}{
		{"codex-rollout/*.jsonl", "codex-rollout", rolloutTotal, ""},
		{"claude-stream/*.jsonl", "claude-stream", streamTotal, " AND NOT provisional"},
	} {
		paths, err := filepath.Glob("../../../shared/corpus/" + c.glob)
		require.NoError(t, err)
		for _, p := range paths {
			rel := filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
			if doubt[rel] {
				continue
			}
			tenant := fmt.Sprintf("total-%d", len(checks))
			r, ok := mapAs(t, c.dialect, tenant, p, "")
			require.True(t, ok)
			recs = append(recs, r)
			checks = append(checks, providerTotal{rel, tenant, c.where, c.total(t, p)})
		}
	}
	if len(checks) == 0 {
		t.Skip("the public transcripts are not here")
	}
	e := projectedBy(t, project.Config{}, recs...)
	counted := 0
	for _, c := range checks {
		require.Equal(t, c.want, e.usageSum(`usage_ledger WHERE tenant_id = $1`+c.where, c.tenant), c.name)
		if c.want != (canonical.TokenUsage{}) {
			counted++
		}
	}
	require.Greater(t, counted, 8, "the transcripts state few counts: the test lost its cases")
}

type providerTotal struct {
	name, tenant, where string
	want                canonical.TokenUsage
}

// doubtfulTranscripts are the corpus files its manifest does not mark as
// real runs (synthetic sequences, edited fixtures).
func doubtfulTranscripts(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../../shared/corpus/MANIFEST.tsv")
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	out := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) > 4 && f[4] == "doubt" {
			out[f[0]] = true
		}
	}
	return out
}

// runningTotal sums a count that a process keeps running and a new
// process starts from zero again: the peak of each stretch.
type runningTotal struct{ done, last canonical.TokenUsage }

func (r *runningTotal) see(u canonical.TokenUsage) {
	if u.Behind(r.last) {
		r.done = r.done.Add(r.last)
	}
	r.last = u
}

func (r *runningTotal) sum() canonical.TokenUsage { return r.done.Add(r.last) }

// rolloutTotal is what a Codex rollout's token_count lines state in all.
func rolloutTotal(t *testing.T, path string) canonical.TokenUsage {
	t.Helper()
	var r runningTotal
	for _, line := range adaptertest.ReadLines(t, path) {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total struct {
						Input     int64 `json:"input_tokens"`
						Cached    int64 `json:"cached_input_tokens"`
						Output    int64 `json:"output_tokens"`
						Reasoning int64 `json:"reasoning_output_tokens"`
					} `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" || l.Payload.Info == nil {
			continue
		}
		u := l.Payload.Info.Total
		r.see(canonical.TokenUsage{InputTokens: u.Input - u.Cached, CachedInputTokens: u.Cached, OutputTokens: u.Output, ReasoningOutputTokens: u.Reasoning})
	}
	return r.sum()
}

// streamTotal is what a Claude stream's results state in all.
func streamTotal(t *testing.T, path string) canonical.TokenUsage {
	t.Helper()
	sessions := map[string]*runningTotal{}
	var stated canonical.TokenUsage
	for _, line := range adaptertest.ReadLines(t, path) {
		var l struct {
			Type       string                       `json:"type"`
			Session    string                       `json:"session_id"`
			Usage      claudeCounts                 `json:"usage"`
			ModelUsage map[string]claudeModelCounts `json:"modelUsage"`
		}
		if json.Unmarshal(line, &l) != nil || l.Type != "result" {
			continue
		}
		if len(l.ModelUsage) == 0 {
			stated = stated.Add(l.Usage.usage())
			continue
		}
		var cum canonical.TokenUsage
		for _, m := range l.ModelUsage {
			cum = cum.Add(m.usage())
		}
		if sessions[l.Session] == nil {
			sessions[l.Session] = &runningTotal{}
		}
		sessions[l.Session].see(cum)
	}
	for _, r := range sessions {
		stated = stated.Add(r.sum())
	}
	return stated
}

// usageSum sums the token columns of the rows of from (a table or view
// and its WHERE clause).
func (e *env) usageSum(from string, args ...any) canonical.TokenUsage {
	e.t.Helper()
	var u canonical.TokenUsage
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT coalesce(sum(input_tokens), 0), coalesce(sum(cached_input_tokens), 0),
		coalesce(sum(cache_write_input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(reasoning_output_tokens), 0) FROM `+from, args...).
		Scan(&u.InputTokens, &u.CachedInputTokens, &u.CacheWriteInputTokens, &u.OutputTokens, &u.ReasoningOutputTokens))
	return u
}

// TestLedgerOfCountsNoModelProduces: the ledger compares two sessions'
// counts of one turn by their sums. A count may be as large as a frame
// says, up to half of int64: four of a quarter of it already sum past
// int8 in Postgres, which failed the turn's ledger row. The same session
// log mapped under two ingest keys, every count that large, gives one row
// of those counts.
func TestLedgerOfCountsNoModelProduces(t *testing.T) {
	t.Parallel()
	const quarter = "2305843009213693952" // 2^61: four of them are 2^63
	var lines [][]byte
	for _, l := range adaptertest.ReadLines(t, "../../testdata/recordings/claude-log/plain.jsonl") {
		s := string(l)
		for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
			for _, n := range []string{"0", "3100", "12"} {
				s = strings.ReplaceAll(s, `"`+k+`":`+n+`,`, `"`+k+`":`+quarter+`,`)
				s = strings.ReplaceAll(s, `"`+k+`":`+n+`}`, `"`+k+`":`+quarter+`}`)
			}
		}
		lines = append(lines, []byte(s))
	}
	var recs []recording
	for _, key := range []string{"one", "two"} {
		recs = append(recs, mapLinesAs(t, dialectOf("claude-log"), "acme", key, key, lines))
	}
	e := projectedBy(t, project.Config{Workers: 1, BatchSize: 1}, recs...)
	var rows int
	var input, output string
	require.NoError(t, e.pool.QueryRow(context.Background(),
		`SELECT count(*), min(input_tokens)::text, min(output_tokens)::text FROM usage_ledger`).Scan(&rows, &input, &output))
	require.Equal(t, 1, rows, "one turn, one model")
	require.Equal(t, quarter, input)
	require.Equal(t, quarter, output)
}
