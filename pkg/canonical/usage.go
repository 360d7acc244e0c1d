package canonical

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// TokenUsage is token usage in one shape for every provider. The four input
// buckets are disjoint, so their sum is the whole prompt and nothing is
// counted twice:
//
//   - InputTokens: prompt tokens neither read from nor written to a cache.
//   - CachedInputTokens: prompt tokens read from a cache (Claude
//     cache_read_input_tokens, Codex cached_input_tokens, Gemini cached).
//   - CacheWriteInputTokens: prompt tokens written to a cache (Claude
//     cache_creation_input_tokens).
//   - OutputTokens: all generated tokens, reasoning included.
//   - ReasoningOutputTokens: the part of OutputTokens spent on reasoning
//     (Codex reasoning_output_tokens, Gemini thoughts).
//
// Providers disagree on whether their "input" includes cached tokens and
// their "output" the reasoning ones; FoldUsage takes that into account.
type TokenUsage struct {
	// InputTokens counts uncached prompt tokens.
	InputTokens int64 `json:"inputTokens" canonical:"nonneg"`
	// CachedInputTokens counts prompt tokens served from a cache.
	CachedInputTokens int64 `json:"cachedInputTokens" canonical:"nonneg"`
	// CacheWriteInputTokens counts prompt tokens written to a cache.
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens" canonical:"nonneg"`
	// OutputTokens counts generated tokens, reasoning included.
	OutputTokens int64 `json:"outputTokens" canonical:"nonneg"`
	// ReasoningOutputTokens counts the reasoning part of OutputTokens.
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens" canonical:"nonneg"`
}

// TotalInputTokens is the whole prompt: uncached, cache-read and cache-write.
func (u TokenUsage) TotalInputTokens() int64 {
	return add(add(u.InputTokens, u.CachedInputTokens), u.CacheWriteInputTokens)
}

// TotalTokens is every token of the prompt and of the output.
func (u TokenUsage) TotalTokens() int64 { return add(u.TotalInputTokens(), u.OutputTokens) }

// add is a sum of token counts, held at math.MaxInt64: counts add up what
// frames say, and counts no model produces (each may be up to MaxInt64/2)
// wrapped a sum around to a negative one.
func add(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Add returns the bucket-wise sum of u and v, each bucket held at
// math.MaxInt64 (add).
func (u TokenUsage) Add(v TokenUsage) TokenUsage {
	return TokenUsage{
		InputTokens:           add(u.InputTokens, v.InputTokens),
		CachedInputTokens:     add(u.CachedInputTokens, v.CachedInputTokens),
		CacheWriteInputTokens: add(u.CacheWriteInputTokens, v.CacheWriteInputTokens),
		OutputTokens:          add(u.OutputTokens, v.OutputTokens),
		ReasoningOutputTokens: add(u.ReasoningOutputTokens, v.ReasoningOutputTokens),
	}
}

// Sub returns u - v bucket by bucket, clamped at zero. It turns cumulative
// counters (Codex token_count) into per-turn deltas; the clamp absorbs a
// counter reset (a new process) instead of going negative.
func (u TokenUsage) Sub(v TokenUsage) TokenUsage {
	d := func(a, b int64) int64 { return max(a-b, 0) }
	return TokenUsage{
		InputTokens:           d(u.InputTokens, v.InputTokens),
		CachedInputTokens:     d(u.CachedInputTokens, v.CachedInputTokens),
		CacheWriteInputTokens: d(u.CacheWriteInputTokens, v.CacheWriteInputTokens),
		OutputTokens:          d(u.OutputTokens, v.OutputTokens),
		ReasoningOutputTokens: d(u.ReasoningOutputTokens, v.ReasoningOutputTokens),
	}
}

// Behind reports whether some bucket of u is below v's. Of two readings
// of a cumulative count, it says the count started over (a new process):
// each bucket of a running count only grows.
func (u TokenUsage) Behind(v TokenUsage) bool {
	return u.InputTokens < v.InputTokens || u.CachedInputTokens < v.CachedInputTokens ||
		u.CacheWriteInputTokens < v.CacheWriteInputTokens || u.OutputTokens < v.OutputTokens ||
		u.ReasoningOutputTokens < v.ReasoningOutputTokens
}

// IsZero reports whether no bucket counts anything.
func (u TokenUsage) IsZero() bool { return u == TokenUsage{} }

// UsageConvention says how a provider family counts tokens, which decides
// how FoldUsage maps its fields onto the disjoint canonical buckets.
type UsageConvention int

const (
	// AnthropicUsage: input_tokens, cache_read_input_tokens and
	// cache_creation_input_tokens are disjoint; output includes thinking.
	AnthropicUsage UsageConvention = iota + 1
	// OpenAIUsage: input_tokens already contains cached_input_tokens (and
	// cache_write_input_tokens); output_tokens contains
	// reasoning_output_tokens.
	OpenAIUsage
	// GeminiUsage: prompt tokens contain cached ones, and thoughts are
	// counted apart from candidates (output), so they are added to it.
	GeminiUsage
)

// usageSpellings lists, per bucket, every field name a provider uses for it,
// snake_case and camelCase. Gemini's stream-json stats say "input" and
// "cached", its stats "prompt", "candidates" and "thoughts"; its API says
// promptTokenCount, candidatesTokenCount and thoughtsTokenCount.
var usageSpellings = struct {
	input, cached, cacheWrite, output, reasoning []string
}{
	input:      []string{"input_tokens", "inputTokens", "input", "prompt", "prompt_tokens", "promptTokens", "promptTokenCount"},
	cached:     []string{"cache_read_input_tokens", "cacheReadInputTokens", "cached_input_tokens", "cachedInputTokens", "cached", "cachedContentTokenCount"},
	cacheWrite: []string{"cache_creation_input_tokens", "cacheCreationInputTokens", "cache_write_input_tokens", "cacheWriteInputTokens"},
	output:     []string{"output_tokens", "outputTokens", "output", "candidates", "completion_tokens", "completionTokens", "candidatesTokenCount"},
	reasoning:  []string{"reasoning_output_tokens", "reasoningOutputTokens", "reasoning_tokens", "thoughts", "thoughtsTokenCount"},
}

// FoldUsage reads a provider usage object in any of the spellings above and
// folds it into TokenUsage. Unknown fields are ignored; a field present
// under two spellings is an error, as is a negative or fractional count.
// The convention says which provider family's arithmetic applies.
func FoldUsage(raw json.RawMessage, conv UsageConvention) (TokenUsage, error) {
	fields, err := usageFields(raw)
	if err != nil {
		return TokenUsage{}, fmt.Errorf("fold usage: %w", err)
	}
	pick := func(names []string) (int64, error) {
		var (
			found string
			n     int64
		)
		for _, name := range names {
			v, ok := fields[name]
			if !ok || string(v) == "null" {
				continue
			}
			if found != "" {
				return 0, fmt.Errorf("fold usage: %q and %q count the same tokens", found, name)
			}
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				// Not a plain number: let the decoder say what it is.
				if err := jsonscan.Unmarshal(v, &f); err != nil {
					return 0, fmt.Errorf("fold usage: %s: %w", name, err)
				}
			}
			if f < 0 || f != math.Trunc(f) || f > math.MaxInt64/2 {
				return 0, fmt.Errorf("fold usage: %s: must be a non-negative integer, got %v", name, f)
			}
			found, n = name, int64(f)
		}
		return n, nil
	}
	var u TokenUsage
	for _, b := range []struct {
		dst   *int64
		names []string
	}{
		{&u.InputTokens, usageSpellings.input},
		{&u.CachedInputTokens, usageSpellings.cached},
		{&u.CacheWriteInputTokens, usageSpellings.cacheWrite},
		{&u.OutputTokens, usageSpellings.output},
		{&u.ReasoningOutputTokens, usageSpellings.reasoning},
	} {
		if *b.dst, err = pick(b.names); err != nil {
			return TokenUsage{}, err
		}
	}
	switch conv {
	case AnthropicUsage:
	case OpenAIUsage:
		u.InputTokens = max(u.InputTokens-u.CachedInputTokens-u.CacheWriteInputTokens, 0)
	case GeminiUsage:
		u.InputTokens = max(u.InputTokens-u.CachedInputTokens-u.CacheWriteInputTokens, 0)
		u.OutputTokens += u.ReasoningOutputTokens
	default:
		return TokenUsage{}, fmt.Errorf("fold usage: unknown convention %d", conv)
	}
	return u, nil
}

// usageFields is decoding raw into a map of its members, by a scan when
// raw is a valid object whose keys need no unescaping: usage objects come
// with every turn and most frames.
func usageFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if jsonscan.Valid(raw) {
		fields := make(map[string]json.RawMessage, 8)
		plain := true
		if jsonscan.EachMember(raw, func(k, v []byte) bool {
			plain = bytes.IndexByte(k, '\\') < 0 && utf8.Valid(k)
			fields[string(k)] = v
			return plain
		}) && plain {
			return fields, nil
		}
	}
	var fields map[string]json.RawMessage
	err := jsonscan.Unmarshal(raw, &fields)
	return fields, err
}
