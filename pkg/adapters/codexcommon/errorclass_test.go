package codexcommon

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/canonical"
)

func TestErrorClass(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		info, message string
		want          canonical.ErrorClass
	}{
		{`"unauthorized"`, "", canonical.ErrorClassPermission},
		{``, "exceeded retry limit, last status: 401 Unauthorized", canonical.ErrorClassPermission},
		// The app-server's spelling and a rollout's.
		{`{"responseStreamDisconnected":{"httpStatusCode":null}}`, "stream disconnected", canonical.ErrorClassTransport},
		{`{"response_stream_disconnected":{"http_status_code":null}}`, "stream disconnected", canonical.ErrorClassTransport},
		{`"http_connection_failed"`, "", canonical.ErrorClassTransport},
		{`"HttpConnectionFailed"`, "", canonical.ErrorClassTransport},
		{`"internal_server_error"`, "We’re currently experiencing high demand", canonical.ErrorClassProvider},
		{`"usage_limit_exceeded"`, "You've hit your usage limit.", canonical.ErrorClassProvider},
	} {
		require.Equal(t, tt.want, ErrorClass(json.RawMessage(tt.info), tt.message), "%s %q", tt.info, tt.message)
	}
}
