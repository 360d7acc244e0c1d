package canonical

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// kindConstants parses the package source and returns every constant of
// type Kind with its value, so that a constant added without updating the
// rest of the package is caught.
func kindConstants(t *testing.T) map[string]Kind {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "kind.go", nil, 0)
	require.NoError(t, err)
	consts := map[string]Kind{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				continue
			}
			for i, name := range vs.Names {
				lit := vs.Values[i].(*ast.BasicLit)
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				consts[name.Name] = Kind(v)
			}
		}
	}
	return consts
}

// payloadTypes parses the package source and returns the names of all types
// with an isPayload method.
func payloadTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "isPayload" {
				continue
			}
			star := fn.Recv.List[0].Type.(*ast.StarExpr)
			names = append(names, star.X.(*ast.Ident).Name)
		}
	}
	slices.Sort(names)
	return names
}

func TestKinds(t *testing.T) {
	t.Parallel()

	consts := kindConstants(t)
	kinds := Kinds()
	require.Len(t, kinds, 45, "EVENTS.md §1.2 has 45 event types")
	require.Len(t, consts, len(kinds), "every Kind constant must be listed in Kinds()")

	for name, k := range consts {
		require.Contains(t, kinds, k, "constant %s is missing from Kinds()", name)
	}
	seen := map[Kind]bool{}
	for _, k := range kinds {
		require.False(t, seen[k], "Kinds() lists %s twice", k)
		seen[k] = true

		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			require.True(t, k.Valid())

			p, err := NewPayload(k)
			require.NoError(t, err, "kind has no payload in the registry")
			require.Equal(t, k, p.Kind(), "payload registered under %s reports another kind", k)

			schema, err := os.ReadFile(filepath.Join("schemas", string(k)+".json"))
			require.NoError(t, err, "kind has no JSON Schema; run `make generate`")
			want, err := Schema(k)
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, schema), "schemas/%s.json is stale; run `make generate`", k)

			_, err = os.Stat(filepath.Join("testdata", string(k)+".json"))
			require.NoError(t, err, "kind has no fixture testdata/%s.json", k)
		})
	}
}

func TestPayloadTypesAreRegistered(t *testing.T) {
	t.Parallel()

	var registered []string
	for _, f := range payloadFactories {
		registered = append(registered, reflect.TypeOf(f()).Elem().Name())
	}
	slices.Sort(registered)
	require.Equal(t, payloadTypes(t), registered, "every payload type must be registered exactly once")
}

func TestSchemaDirHoldsOnlyKinds(t *testing.T) {
	t.Parallel()

	for _, dir := range []string{"schemas", "testdata"} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			k := Kind(strings.TrimSuffix(e.Name(), ".json"))
			require.True(t, k.Valid(), "%s/%s names no event type", dir, e.Name())
		}
	}
}

// TestKindsMatchSpecification compares Kinds with the type list of the
// specification when the shared specification is checked out next to the
// project.
func TestKindsMatchSpecification(t *testing.T) {
	t.Parallel()

	spec, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "seeds", "EVENTS.md"))
	if os.IsNotExist(err) {
		t.Skip("the shared specification is not checked out next to the project")
	}
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(spec), "1.2 Canonical Event Families")
	require.True(t, ok)
	section, _, ok = strings.Cut(section, "1.3 Canonical Item Type")
	require.True(t, ok)
	var want []Kind
	for _, m := range regexp.MustCompile(`\| "([a-z.-]+)"`).FindAllStringSubmatch(section, -1) {
		want = append(want, Kind(m[1]))
	}
	require.Equal(t, want, Kinds())
}

func TestParseKind(t *testing.T) {
	t.Parallel()

	k, err := ParseKind("turn.completed")
	require.NoError(t, err)
	require.Equal(t, KindTurnCompleted, k)

	for _, bad := range []string{"", "turn", "turn.completed ", "Turn.Completed", "message.delta"} {
		_, err := ParseKind(bad)
		require.ErrorIs(t, err, ErrUnknownKind, bad)
		require.ErrorIs(t, err, ErrInvalidEvent, bad)
		var fe *FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, "type", fe.Field)
	}
}
