package canonical

import (
	"crypto/sha1" //nolint:gosec // UUIDv5 is defined on SHA-1; ids name things, they protect nothing
	"encoding/binary"
	"strconv"

	"github.com/google/uuid"
)

// idNamespace is the UUIDv5 namespace of every agentwire id. Changing it
// changes every id ever derived: never do that.
var idNamespace = uuid.MustParse("6f1c7a52-9a3e-5d0b-8f43-2b6a8c0e4d17")

// Entity says what an id identifies. It is part of every id's name, so a
// thread and a turn with the same provider id still get different ids.
type Entity string

// Entities.
const (
	EntityEvent   Entity = "event"
	EntitySession Entity = "session"
	EntityThread  Entity = "thread"
	EntityTurn    Entity = "turn"
	EntityItem    Entity = "item"
	EntityRequest Entity = "request"
	// EntityHook names hook runs the provider gives no id of their own.
	EntityHook Entity = "hook"
)

// IDSpace derives canonical ids for the events of one ingest session. All
// ids are UUIDv5 in one agentwire namespace, so they are deterministic: the
// same raw input always yields the same ids, which is what makes replay,
// dedupe and idempotent projection work.
//
// The name hashed for an id is a sequence of length-prefixed components, so
// that no two different component lists can produce the same name:
//
//   - Native ids, for things the provider names: ("native", entity, tenant,
//     provider, scope..., provider id). They do not depend on the ingest
//     session, so the same Codex thread seen through an app-server tap and
//     through its rollout log gets the same ThreadID. When a provider id is
//     only unique within something (Codex exec item ids "item_0" within a
//     thread), pass that something's provider id first as scope.
//   - Derived ids, for things the provider does not name (Claude turns, ACP
//     turns, events themselves): ("derived", entity, tenant, provider,
//     session key, frame ordinal, fan-out index). The fan-out index numbers
//     the events or entities one frame gives rise to, from 0.
//   - The session id of an ingest session that carries no provider session
//     id: ("ingest-session", tenant, provider, session key).
type IDSpace struct {
	// Tenant owns the ids.
	Tenant string
	// Provider emitted the frames.
	Provider Provider
	// SessionKey is the ingest session key the frames arrived under.
	SessionKey string
}

// Native returns the id of the entity the provider calls native, within the
// scopes given before it (outermost first).
func (s IDSpace) Native(e Entity, scopeAndNative ...string) string {
	parts := append([]string{"native", string(e), s.Tenant, string(s.Provider)}, scopeAndNative...)
	return deriveID(parts)
}

// Derived returns the id of the index-th entity of kind e that the frame
// with the given ordinal gives rise to.
func (s IDSpace) Derived(e Entity, ordinal uint64, index int) string {
	return deriveID([]string{
		"derived", string(e), s.Tenant, string(s.Provider), s.SessionKey,
		strconv.FormatUint(ordinal, 10), strconv.Itoa(index),
	})
}

// Event returns the id of the index-th event mapped from the frame with the
// given ordinal.
func (s IDSpace) Event(ordinal uint64, index int) string {
	return s.Derived(EntityEvent, ordinal, index)
}

// IngestSession returns the session id for frames whose provider names no
// session: one per ingest session key.
func (s IDSpace) IngestSession() string {
	return deriveID([]string{"ingest-session", s.Tenant, string(s.Provider), s.SessionKey})
}

func deriveID(parts []string) string {
	// uuid.NewSHA1 spelled out on a stack buffer: it allocates a hash, its
	// digest and the name for every id, and ids are derived several times
	// per frame.
	var buf [512]byte
	name := append(buf[:0], idNamespace[:]...)
	for _, p := range parts {
		name = binary.AppendUvarint(name, uint64(len(p)))
		name = append(name, p...)
	}
	sum := sha1.Sum(name) //nolint:gosec // see the import
	var id uuid.UUID
	copy(id[:], sum[:])
	id[6] = (id[6] & 0x0f) | 0x50 // version 5
	id[8] = (id[8] & 0x3f) | 0x80 // RFC 4122 variant
	return id.String()
}
