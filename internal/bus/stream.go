package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Config is the JetStream layout's tunables. The zero value is usable:
// WithDefaults fills it in.
type Config struct {
	// Replicas of every stream and bucket (1 on one machine, 3 in a cluster).
	Replicas int
	// RawMaxAge bounds how long RAW keeps frames; 0 keeps them forever (RAW
	// is the source of truth that replays read).
	RawMaxAge time.Duration
	// RuntimeMaxAge bounds how long RUNTIME keeps events; 0 keeps them
	// forever. Events can be rebuilt from RAW.
	RuntimeMaxAge time.Duration
	// Partitions is the number of RAW partitions; fixed when RAW is created.
	Partitions int
	// DuplicateWindow is how long the streams remember message ids. It must
	// outlast a normalizer restart, so that events re-published after a
	// crash are dropped. Default 10 minutes.
	DuplicateWindow time.Duration
	// PinnedTTL is how long a partition stays with a worker that stopped
	// pulling before JetStream gives it to another. Default 10 seconds.
	PinnedTTL time.Duration
	// AckWait is how long a delivered frame waits for its ack before
	// redelivery. Default 30 seconds.
	AckWait time.Duration
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = 10 * time.Minute
	}
	if c.PinnedTTL == 0 {
		c.PinnedTTL = 10 * time.Second
	}
	if c.AckWait == 0 {
		c.AckWait = 30 * time.Second
	}
	return c
}

// ConfigError is what Validate finds wrong with one field of a Config, so
// that a command line can name its own flag for it.
type ConfigError struct {
	// Field is the Config field's name, e.g. "AckWait".
	Field string
	// Value is the field's value.
	Value any
	// Rule is what the value must be, e.g. "must not be negative".
	Rule string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s %s, got %v", e.Field, e.Rule, e.Value)
}

// Validate says in one sentence what is wrong with c, as a *ConfigError.
func (c Config) Validate() error {
	bad := func(field string, value any, rule string) error {
		return &ConfigError{Field: field, Value: value, Rule: rule}
	}
	const notNegative = "must not be negative"
	switch {
	case c.Replicas < 1 || c.Replicas > 5:
		return bad("Replicas", c.Replicas, "must be between 1 and 5")
	case c.Partitions < 1 || c.Partitions > 100:
		return bad("Partitions", c.Partitions, "must be between 1 and 100")
	case c.RawMaxAge < 0:
		return bad("RawMaxAge", c.RawMaxAge, notNegative)
	case c.RuntimeMaxAge < 0:
		return bad("RuntimeMaxAge", c.RuntimeMaxAge, notNegative)
	case c.DuplicateWindow < 0:
		return bad("DuplicateWindow", c.DuplicateWindow, notNegative)
	case c.AckWait < 0:
		return bad("AckWait", c.AckWait, notNegative)
	case c.PinnedTTL < 0:
		return bad("PinnedTTL", c.PinnedTTL, notNegative)
	}
	return nil
}

// Layout is the applied JetStream layout.
type Layout struct {
	// Config is the effective configuration; Partitions is RAW's real count.
	Config Config
	// JS is the JetStream context it was applied with.
	JS jetstream.JetStream
}

// Ensure creates or updates the streams, the object store and the state
// bucket. It is idempotent and safe to call from every service at start.
// An existing RAW stream keeps its partition count (read back from its
// metadata), because changing it would move sessions between partitions.
func Ensure(ctx context.Context, js jetstream.JetStream, cfg Config) (*Layout, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := Require(js.Conn(), StreamMetadata); err != nil {
		return nil, err
	}
	if existing, err := js.Stream(ctx, RawStream); err == nil {
		if p, ok := existing.CachedInfo().Config.Metadata["agentwire.partitions"]; ok {
			if _, err := fmt.Sscan(p, &cfg.Partitions); err != nil {
				return nil, fmt.Errorf("RAW stream metadata: partitions %q: %w", p, err)
			}
		}
	}
	streams := []jetstream.StreamConfig{
		{
			Name:        RawStream,
			Description: "agentwire: provider frames as received",
			Subjects:    []string{rawPrefix + ".>"},
			Storage:     jetstream.FileStorage,
			Replicas:    cfg.Replicas,
			MaxAge:      cfg.RawMaxAge,
			Duplicates:  cfg.DuplicateWindow,
			Metadata:    map[string]string{"agentwire.partitions": fmt.Sprint(cfg.Partitions)},
		},
		{
			Name:        RuntimeStream,
			Description: "agentwire: canonical runtime events (CloudEvents, binary mode)",
			Subjects:    []string{runtimePrefix + ".>"},
			Storage:     jetstream.FileStorage,
			Replicas:    cfg.Replicas,
			MaxAge:      cfg.RuntimeMaxAge,
			Duplicates:  cfg.DuplicateWindow,
		},
		{
			Name:        DeadLetterStream,
			Description: "agentwire: what a stage could not deliver, with the reason",
			Subjects:    []string{deadLetterPrefix + ".>"},
			Storage:     jetstream.FileStorage,
			Replicas:    cfg.Replicas,
		},
	}
	for _, sc := range streams {
		if err := applyStream(ctx, js, sc); err != nil {
			return nil, err
		}
	}
	// Existing buckets are left alone, for the same reason as streams.
	if _, err := js.ObjectStore(ctx, RawObjects); err != nil {
		if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: RawObjects, Description: "agentwire: frames larger than a message", Replicas: cfg.Replicas, Storage: jetstream.FileStorage,
		}); err != nil {
			return nil, fmt.Errorf("apply object store %s: %w", RawObjects, err)
		}
	}
	if _, err := js.KeyValue(ctx, StateBucket); err != nil {
		if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: StateBucket, Description: "agentwire: normalizer adapter state per session", Replicas: cfg.Replicas, Storage: jetstream.FileStorage,
		}); err != nil {
			return nil, fmt.Errorf("apply bucket %s: %w", StateBucket, err)
		}
	}
	return &Layout{Config: cfg, JS: js}, nil
}

// applyStream creates the stream, or updates it when its configuration
// differs in what agentwire sets. Services start concurrently, and leaving
// an up-to-date stream alone keeps them from racing stream updates against
// each other's consumer creation (which nats-server 2.15 does not guard).
func applyStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) error {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := js.CreateStream(ctx, want); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("create stream %s: %w", want.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", want.Name, err)
	}
	if sameStream(s.CachedInfo().Config, want) {
		return nil
	}
	if _, err := js.UpdateStream(ctx, want); err != nil {
		return fmt.Errorf("update stream %s: %w", want.Name, err)
	}
	return nil
}

func sameStream(have, want jetstream.StreamConfig) bool {
	if !slices.Equal(have.Subjects, want.Subjects) || have.MaxAge != want.MaxAge || have.Replicas != want.Replicas ||
		have.Description != want.Description || (want.Duplicates != 0 && have.Duplicates != want.Duplicates) {
		return false
	}
	for k, v := range want.Metadata {
		if have.Metadata[k] != v {
			return false
		}
	}
	return true
}

// NormalizeConsumer creates or updates the durable consumer of partition p
// and returns it.
func (l *Layout) NormalizeConsumer(ctx context.Context, p int) (jetstream.Consumer, error) {
	name := "normalize-" + PartitionToken(p)
	c, err := l.JS.CreateOrUpdateConsumer(ctx, RawStream, jetstream.ConsumerConfig{
		Durable:        name,
		Description:    "agentwire normalizer, partition " + PartitionToken(p),
		FilterSubject:  RawPartitionFilter(p),
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        l.Config.AckWait,
		MaxAckPending:  4096,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		PriorityPolicy: jetstream.PriorityPolicyPinned,
		PriorityGroups: []string{NormalizeGroup},
		PinnedTTL:      l.Config.PinnedTTL,
		Replicas:       l.Config.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("apply consumer %s: %w", name, err)
	}
	return c, nil
}

// NormalizeGroup is the priority group normalizer workers pull in.
const NormalizeGroup = "normalize"
