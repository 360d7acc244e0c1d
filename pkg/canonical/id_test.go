package canonical

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/quick"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestIDsAreDeterministic(t *testing.T) {
	t.Parallel()

	native := func(tenant, provider, scope, id string) bool {
		s := IDSpace{Tenant: tenant, Provider: Provider(provider), SessionKey: "k"}
		a, b := s.Native(EntityItem, scope, id), s.Native(EntityItem, scope, id)
		return a == b && IsCanonicalID(a)
	}
	require.NoError(t, quick.Check(native, nil))

	derived := func(tenant, provider, key string, ordinal uint64, index uint8) bool {
		s := IDSpace{Tenant: tenant, Provider: Provider(provider), SessionKey: key}
		a, b := s.Derived(EntityTurn, ordinal, int(index)), s.Derived(EntityTurn, ordinal, int(index))
		return a == b && IsCanonicalID(a)
	}
	require.NoError(t, quick.Check(derived, nil))
}

// TestIDsChangeWithEveryComponent changes one component at a time and
// requires a different id each time.
func TestIDsChangeWithEveryComponent(t *testing.T) {
	t.Parallel()

	type derivedInput struct {
		Tenant, Provider, Key string
		Ordinal               uint64
		Index                 uint16
		Entity                bool
	}
	id := func(in derivedInput) string {
		e := EntityTurn
		if in.Entity {
			e = EntityItem
		}
		return IDSpace{Tenant: in.Tenant, Provider: Provider(in.Provider), SessionKey: in.Key}.Derived(e, in.Ordinal, int(in.Index))
	}
	mutations := []func(*derivedInput){
		func(in *derivedInput) { in.Tenant += "x" },
		func(in *derivedInput) { in.Provider += "x" },
		func(in *derivedInput) { in.Key += "x" },
		func(in *derivedInput) { in.Ordinal++ },
		func(in *derivedInput) { in.Index++ },
		func(in *derivedInput) { in.Entity = !in.Entity },
	}
	check := func(in derivedInput) bool {
		base := id(in)
		for _, m := range mutations {
			changed := in
			m(&changed)
			if id(changed) == base {
				return false
			}
		}
		return true
	}
	require.NoError(t, quick.Check(check, nil))

	nativeCheck := func(tenant, provider, scope, native string) bool {
		s := IDSpace{Tenant: tenant, Provider: Provider(provider)}
		base := s.Native(EntityThread, scope, native)
		others := []string{
			IDSpace{Tenant: tenant + "x", Provider: Provider(provider)}.Native(EntityThread, scope, native),
			IDSpace{Tenant: tenant, Provider: Provider(provider + "x")}.Native(EntityThread, scope, native),
			s.Native(EntityThread, scope+"x", native),
			s.Native(EntityThread, scope, native+"x"),
			s.Native(EntityTurn, scope, native),
			s.Native(EntityThread, native),
		}
		return !slices.Contains(others, base)
	}
	require.NoError(t, quick.Check(nativeCheck, nil))
}

// TestIDComponentsAreUnambiguous guards the length prefixes: moving a
// boundary between components must change the id.
func TestIDComponentsAreUnambiguous(t *testing.T) {
	t.Parallel()

	s := IDSpace{Tenant: "acme", Provider: ProviderCodex}
	require.NotEqual(t, s.Native(EntityItem, "ab", "c"), s.Native(EntityItem, "a", "bc"))
	require.NotEqual(t, s.Native(EntityItem, "a|b"), s.Native(EntityItem, "a", "b"))
	require.NotEqual(t,
		IDSpace{Tenant: "ac", Provider: "me"}.Native(EntityItem, "x"),
		IDSpace{Tenant: "a", Provider: "cme"}.Native(EntityItem, "x"))
	require.NotEqual(t,
		IDSpace{Tenant: "acme", Provider: ProviderClaude, SessionKey: "s1"}.Derived(EntityTurn, 12, 3),
		IDSpace{Tenant: "acme", Provider: ProviderClaude, SessionKey: "s11"}.Derived(EntityTurn, 2, 3))
	// Native and derived ids live in different name spaces.
	require.NotEqual(t, s.Native(EntityTurn, "", "0", "0"), s.Derived(EntityTurn, 0, 0))
	// Native ids ignore the ingest session: two taps of one thread agree.
	require.Equal(t,
		IDSpace{Tenant: "acme", Provider: ProviderCodex, SessionKey: "tap"}.Native(EntityThread, "thr_1"),
		IDSpace{Tenant: "acme", Provider: ProviderCodex, SessionKey: "rollout"}.Native(EntityThread, "thr_1"))
}

// TestIDsArePinned pins a few ids: they are stored in RAW-derived state and
// in Postgres, so an accidental change of the derivation must fail loudly.
// The values were computed by a separate implementation of the scheme in
// the IDSpace documentation (SHA-1 over the namespace and the
// length-prefixed components), not by this code.
func TestIDsArePinned(t *testing.T) {
	t.Parallel()

	s := IDSpace{Tenant: "default", Provider: ProviderCodex, SessionKey: "codex/session-1"}
	got := []string{s.Native(EntityThread, "thr_1"), s.Event(7, 0), s.IngestSession()}
	require.Equal(t, []string{
		"7e6ba1e3-b479-51ac-b7f5-3d6c8cfb1e8c",
		"c407c445-28a4-50a2-94be-8f549745b5b1",
		"234c8d0b-500b-5c33-a93e-446271bc6201",
	}, got)
}

func ExampleIDSpace() {
	ids := IDSpace{Tenant: "default", Provider: ProviderClaude, SessionKey: "claude/3f2a"}
	// A Claude turn has no provider id: derive it from the frame that opens it.
	turn := ids.Derived(EntityTurn, 4, 0)
	// A tool call has one: derive its item id from it.
	item := ids.Native(EntityItem, "toolu_01ABC")
	fmt.Println(IsCanonicalID(turn), IsCanonicalID(item), turn == ids.Derived(EntityTurn, 4, 0))
	// Output: true true true
}

// FuzzDeriveID holds the hand-written UUIDv5 to uuid.NewSHA1 over the
// same length-prefixed name.
func FuzzDeriveID(f *testing.F) {
	f.Add("codex", "thread-1", "")
	f.Add("", "", strings.Repeat("x", 600))
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var name []byte
		for _, p := range []string{a, b, c} {
			name = binary.AppendUvarint(name, uint64(len(p)))
			name = append(name, p...)
		}
		if got, want := deriveID([]string{a, b, c}), uuid.NewSHA1(idNamespace, name).String(); got != want {
			t.Fatalf("deriveID = %s, uuid.NewSHA1 = %s", got, want)
		}
	})
}

// FuzzIsCanonicalID holds the hand-written check to its definition: a
// string uuid.Parse reads and prints back unchanged.
func FuzzIsCanonicalID(f *testing.F) {
	f.Add("6f1c7a52-9a3e-5d0b-8f43-2b6a8c0e4d17")
	f.Add("6F1C7A52-9A3E-5D0B-8F43-2B6A8C0E4D17")
	f.Add("{6f1c7a52-9a3e-5d0b-8f43-2b6a8c0e4d17}")
	f.Add("6f1c7a529a3e5d0b8f432b6a8c0e4d17")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := uuid.Parse(s)
		if want := err == nil && u.String() == s; IsCanonicalID(s) != want {
			t.Fatalf("IsCanonicalID(%q) = %v, want %v", s, !want, want)
		}
	})
}
