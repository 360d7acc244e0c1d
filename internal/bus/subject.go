package bus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

// Subject prefixes and stream names.
const (
	RawStream        = "RAW"
	RuntimeStream    = "RUNTIME"
	DeadLetterStream = "DEADLETTER"
	RawObjects       = "RAW_OBJECTS"
	StateBucket      = "NORMALIZER_STATE"

	rawPrefix        = "raw"
	runtimePrefix    = "runtime"
	deadLetterPrefix = "deadletter"
)

// DefaultPartitions is the partition count of a new RAW stream. It bounds
// how many normalizer workers can share the load; 16 is plenty for one
// machine and cheap to consume.
const DefaultPartitions = 16

// SessionToken is the subject token of a session: a hash of tenant and
// session key, because session keys (file paths, URLs) may hold any byte.
func SessionToken(tenant, sessionKey string) string {
	h := sessionHash(tenant, sessionKey)
	return hex.EncodeToString(h[:8])
}

func sessionHash(tenant, sessionKey string) [32]byte {
	return sha256.Sum256([]byte(strconv.Itoa(len(tenant)) + ":" + tenant + sessionKey))
}

// Partition returns the partition of a session, in [0, n).
func Partition(tenant, sessionKey string, n int) int {
	h := sessionHash(tenant, sessionKey)
	return int(binary.BigEndian.Uint64(h[8:16]) % uint64(n)) //nolint:gosec // n is a small positive partition count
}

// PartitionToken spells partition p as a subject token.
func PartitionToken(p int) string { return fmt.Sprintf("P%02d", p) }

// RawSubject is the RAW subject of a frame of the session.
func RawSubject(tenant, sessionKey string, partitions int) string {
	return rawPrefix + "." + tenant + "." + PartitionToken(Partition(tenant, sessionKey, partitions)) + "." + SessionToken(tenant, sessionKey)
}

// RawPartitionFilter matches every RAW frame of partition p.
func RawPartitionFilter(p int) string { return rawPrefix + ".*." + PartitionToken(p) + ".*" }

// RawSessionFilter matches every RAW frame of one session.
func RawSessionFilter(tenant, sessionKey string, partitions int) string {
	return RawSubject(tenant, sessionKey, partitions)
}

// RawMsgID is the Nats-Msg-Id of a frame: re-sending the same frame of the
// same session is dropped by the stream's duplicate window.
func RawMsgID(tenant, sessionKey string, ordinal uint64) string {
	return SessionToken(tenant, sessionKey) + "-" + strconv.FormatUint(ordinal, 10)
}

// DeadLetterSubject is where a stage puts what it could not deliver.
func DeadLetterSubject(stage, tenant string) string {
	return deadLetterPrefix + "." + stage + "." + tenant
}
