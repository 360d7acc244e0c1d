package dbtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnvURLPrecedence(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
		ok   bool
	}{
		{name: "none", env: map[string]string{}},
		{name: "database url", env: map[string]string{"DATABASE_URL": "postgres://a"}, want: "postgres://a", ok: true},
		{
			name: "test url wins",
			env:  map[string]string{"DATABASE_URL": "postgres://a", "TEST_DATABASE_URL": "postgres://b"},
			want: "postgres://b", ok: true,
		},
		{
			name: "empty counts as unset",
			env:  map[string]string{"DATABASE_URL": "postgres://a", "TEST_DATABASE_URL": ""},
			want: "postgres://a", ok: true,
		},
		{name: "all empty", env: map[string]string{"DATABASE_URL": "", "TEST_DATABASE_URL": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, ok := envURL(func(k string) (string, bool) {
				v, ok := tc.env[k]
				return v, ok
			})
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}
