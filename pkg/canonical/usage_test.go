package canonical

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFoldUsage(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name      string
		given     string
		conv      UsageConvention
		expected  TokenUsage
		withError string
	}{
		{
			name:     "claude: input excludes cache reads and writes",
			given:    `{"input_tokens":12,"cache_creation_input_tokens":3000,"cache_read_input_tokens":20000,"output_tokens":450,"service_tier":"standard"}`,
			conv:     AnthropicUsage,
			expected: TokenUsage{InputTokens: 12, CachedInputTokens: 20000, CacheWriteInputTokens: 3000, OutputTokens: 450},
		},
		{
			name:     "claude modelUsage spelling",
			given:    `{"inputTokens":12,"cacheReadInputTokens":20000,"cacheCreationInputTokens":3000,"outputTokens":450,"costUSD":0.1}`,
			conv:     AnthropicUsage,
			expected: TokenUsage{InputTokens: 12, CachedInputTokens: 20000, CacheWriteInputTokens: 3000, OutputTokens: 450},
		},
		{
			name:     "codex exec: input includes cached",
			given:    `{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122,"reasoning_output_tokens":64}`,
			conv:     OpenAIUsage,
			expected: TokenUsage{InputTokens: 315, CachedInputTokens: 24448, OutputTokens: 122, ReasoningOutputTokens: 64},
		},
		{
			name:     "codex app-server camelCase",
			given:    `{"inputTokens":1000,"cachedInputTokens":400,"outputTokens":50,"reasoningOutputTokens":10,"totalTokens":1050}`,
			conv:     OpenAIUsage,
			expected: TokenUsage{InputTokens: 600, CachedInputTokens: 400, OutputTokens: 50, ReasoningOutputTokens: 10},
		},
		{
			name:     "gemini stream-json stats",
			given:    `{"total_tokens":1500,"input_tokens":1200,"output_tokens":300,"cached":1000,"duration_ms":900,"tool_calls":1}`,
			conv:     GeminiUsage,
			expected: TokenUsage{InputTokens: 200, CachedInputTokens: 1000, OutputTokens: 300},
		},
		{
			name:     "gemini model stats: thoughts are counted apart from candidates",
			given:    `{"prompt":7173,"candidates":0,"total":7190,"cached":100,"thoughts":17,"tool":0}`,
			conv:     GeminiUsage,
			expected: TokenUsage{InputTokens: 7073, CachedInputTokens: 100, OutputTokens: 17, ReasoningOutputTokens: 17},
		},
		{
			name:     "codex exec 0.171 adds cache writes",
			given:    `{"input_tokens":100,"cached_input_tokens":60,"cache_write_input_tokens":30,"output_tokens":5,"reasoning_output_tokens":0}`,
			conv:     OpenAIUsage,
			expected: TokenUsage{InputTokens: 10, CachedInputTokens: 60, CacheWriteInputTokens: 30, OutputTokens: 5},
		},
		{
			name:     "null counts are absent",
			given:    `{"input_tokens":5,"cache_read_input_tokens":null,"output_tokens":1}`,
			conv:     AnthropicUsage,
			expected: TokenUsage{InputTokens: 5, OutputTokens: 1},
		},
		{
			name:     "cached larger than input clamps at zero",
			given:    `{"input_tokens":5,"cached_input_tokens":9}`,
			conv:     OpenAIUsage,
			expected: TokenUsage{CachedInputTokens: 9},
		},
		{name: "two spellings of one bucket", given: `{"cached":1,"cached_input_tokens":1}`, conv: OpenAIUsage, withError: `count the same tokens`},
		{name: "negative count", given: `{"output_tokens":-1}`, conv: OpenAIUsage, withError: "non-negative integer"},
		{name: "fractional count", given: `{"output_tokens":1.5}`, conv: OpenAIUsage, withError: "non-negative integer"},
		{name: "not a number", given: `{"output_tokens":"7"}`, conv: OpenAIUsage, withError: "output_tokens"},
		{name: "not an object", given: `[1]`, conv: OpenAIUsage, withError: "fold usage"},
		{name: "no convention", given: `{}`, withError: "unknown convention"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := FoldUsage(json.RawMessage(tt.given), tt.conv)
			if tt.withError != "" {
				require.ErrorContains(t, err, tt.withError)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.expected, got)
		})
	}
}

func TestTokenUsageArithmetic(t *testing.T) {
	t.Parallel()

	a := TokenUsage{InputTokens: 10, CachedInputTokens: 20, CacheWriteInputTokens: 5, OutputTokens: 7, ReasoningOutputTokens: 3}
	b := TokenUsage{InputTokens: 4, CachedInputTokens: 25, OutputTokens: 7, ReasoningOutputTokens: 1}
	require.Equal(t, int64(35), a.TotalInputTokens())
	require.Equal(t, int64(42), a.TotalTokens())
	require.Equal(t, TokenUsage{InputTokens: 14, CachedInputTokens: 45, CacheWriteInputTokens: 5, OutputTokens: 14, ReasoningOutputTokens: 4}, a.Add(b))
	// Cumulative counters that went backwards (a new process) clamp at zero.
	require.Equal(t, TokenUsage{InputTokens: 6, CacheWriteInputTokens: 5, ReasoningOutputTokens: 2}, a.Sub(b))
	require.True(t, TokenUsage{}.IsZero())
	require.False(t, a.IsZero())
	// A count that fell in any bucket started over, though its total grew.
	require.True(t, b.Behind(a), "input fell")
	require.True(t, a.Behind(b), "cached fell")
	require.False(t, a.Add(b).Behind(a))
	require.False(t, a.Behind(a))
}

// TestAddHoldsAtMaxInt64: a running total, or a total across buckets, of
// counts no model produces stays at the largest count instead of wrapping
// to a negative one.
func TestAddHoldsAtMaxInt64(t *testing.T) {
	t.Parallel()
	half := TokenUsage{InputTokens: math.MaxInt64 / 2, OutputTokens: 3}
	sum := half.Add(half).Add(half)
	require.Equal(t, TokenUsage{InputTokens: math.MaxInt64, OutputTokens: 9}, sum)
	require.Equal(t, int64(math.MaxInt64), sum.TotalTokens())
	require.Equal(t, int64(math.MaxInt64), TokenUsage{InputTokens: math.MaxInt64 / 2, CachedInputTokens: math.MaxInt64 / 2,
		CacheWriteInputTokens: math.MaxInt64 / 2}.TotalInputTokens())
	require.NoError(t, Validate(Event{EventID: "00000000-0000-5000-8000-000000000001", Tenant: "t", Provider: ProviderCodex,
		SessionID: "00000000-0000-5000-8000-000000000002", CreatedAt: time.Unix(1, 0).UTC(), MappingVersion: "x/1",
		Payload: &ThreadTokenUsageUpdated{Usage: sum}}))
}
