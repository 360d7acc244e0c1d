package ingest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// Tokens maps the SHA-256 of bearer tokens to their tenants. Only hashes
// are kept, in memory and in the file, so the file gives no token away.
//
// The tokens file (`ingest serve --tokens FILE`) has one token a line:
//
//	# tenant  sha256 of the token, hex
//	acme      9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//	globex    sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752
//
// Blank lines and lines starting with # are ignored; the hash may carry a
// "sha256:" prefix. `agentwire ingest token-hash` prints the hash of a
// token. Several tokens may name the same tenant (to rotate them).
type Tokens struct {
	byHash map[[sha256.Size]byte]string
}

// HashToken is the hex SHA-256 of a token, as the tokens file holds it.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// LoadTokens reads a tokens file.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path) //nolint:gosec // the operator names the file
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only
	t, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("tokens %s: %w", path, err)
	}
	return t, nil
}

// ParseTokens reads the tokens file format from r.
func ParseTokens(r io.Reader) (*Tokens, error) {
	t := &Tokens{byHash: map[[sha256.Size]byte]string{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: want \"TENANT SHA256-HEX\", got %d fields", n, len(fields))
		}
		tenant, hexHash := fields[0], strings.TrimPrefix(strings.ToLower(fields[1]), "sha256:")
		if err := canonical.ValidateTenant(tenant); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		b, err := hex.DecodeString(hexHash)
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("line %d: the hash must be 64 hex digits (the SHA-256 of the token; see `agentwire ingest token-hash`)", n)
		}
		var h [sha256.Size]byte
		copy(h[:], b)
		if prev, ok := t.byHash[h]; ok && prev != tenant {
			return nil, fmt.Errorf("line %d: the same token names tenants %s and %s", n, prev, tenant)
		}
		t.byHash[h] = tenant
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return t, nil
}

// Len is how many tokens there are.
func (t *Tokens) Len() int { return len(t.byHash) }

// Tenant returns the tenant of a bearer token.
func (t *Tokens) Tenant(token string) (string, bool) {
	if t == nil || token == "" {
		return "", false
	}
	// A lookup by hash: timing tells nothing about the token itself.
	tenant, ok := t.byHash[sha256.Sum256([]byte(token))]
	return tenant, ok
}
