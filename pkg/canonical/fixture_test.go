package canonical

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

var (
	schemasOnce sync.Once
	schemas     map[Kind]*jsonschema.Schema
	errSchemas  error
)

// compiledSchema compiles the committed schema of k with an independent
// JSON Schema implementation, so the fixtures are checked against what
// subscribers in other languages get.
func compiledSchema(t *testing.T, k Kind) *jsonschema.Schema {
	t.Helper()
	schemasOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		schemas = map[Kind]*jsonschema.Schema{}
		for _, k := range Kinds() {
			b, err := os.ReadFile(filepath.Join("schemas", string(k)+".json"))
			if err != nil {
				errSchemas = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				errSchemas = err
				return
			}
			if err := c.AddResource(SchemaURI(k), doc); err != nil {
				errSchemas = err
				return
			}
			if schemas[k], err = c.Compile(SchemaURI(k)); err != nil {
				errSchemas = err
				return
			}
		}
	})
	require.NoError(t, errSchemas)
	return schemas[k]
}

func schemaValidate(t *testing.T, k Kind, doc []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err)
	return compiledSchema(t, k).Validate(inst)
}

// unsetInFixture names payload members a fixture leaves out on purpose.
var unsetInFixture = map[Kind][]string{
	// A started item has neither an exit code, a duration nor content
	// yet; the item.updated and item.completed fixtures set them.
	KindItemStarted: {"exitCode", "durationMs", "content"},
}

func readFixtureFile(k Kind) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", string(k)+".json"))
}

func readFixture(t *testing.T, k Kind) []byte {
	t.Helper()
	b, err := readFixtureFile(k)
	require.NoError(t, err)
	return b
}

// TestFixtures checks, for every kind, that its fixture decodes and
// validates, re-encodes to the same JSON (no member lost or invented),
// encodes deterministically, and is accepted by the published schema; and
// that the fixture sets every payload member, so the schema is exercised
// on all of them.
func TestFixtures(t *testing.T) {
	t.Parallel()

	for _, k := range Kinds() {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			doc := readFixture(t, k)

			e, err := Decode(doc)
			require.NoError(t, err)
			require.Equal(t, k, e.Type())

			enc, err := Encode(e)
			require.NoError(t, err)
			require.JSONEq(t, string(doc), string(enc))

			again, err := Decode(enc)
			require.NoError(t, err)
			// What a consumer that skips raw reads (the projector).
			env, err := DecodeEnvelope(enc)
			require.NoError(t, err)
			withoutRaw := again
			withoutRaw.Raw = nil
			require.Equal(t, withoutRaw, env)
			enc2, err := Encode(again)
			require.NoError(t, err)
			require.Equal(t, string(enc), string(enc2), "encoding must be deterministic")

			require.NoError(t, schemaValidate(t, k, doc))
			require.NoError(t, schemaValidate(t, k, enc))

			var members struct {
				Payload map[string]json.RawMessage `json:"payload"`
			}
			require.NoError(t, json.Unmarshal(doc, &members))
			for _, f := range fieldsOf(reflect.TypeOf(e.Payload).Elem()) {
				_, set := members.Payload[f.name]
				require.True(t, set || slices.Contains(unsetInFixture[k], f.name), "the fixture should set payload.%s", f.name)
			}
		})
	}
}

func TestSchemaRejectsWrongType(t *testing.T) {
	t.Parallel()

	doc := readFixture(t, KindTurnStarted)
	require.Error(t, schemaValidate(t, KindTurnCompleted, doc), "a turn.started document is not a turn.completed")
}
