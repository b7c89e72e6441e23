package code

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDecodeMessageKinds(t *testing.T) {
	cases := []struct {
		line string
		kind messageKind
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, kindResponse},
		{`{"jsonrpc":"2.0","id":3,"result":null}`, kindResponse}, // null is a result
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, kindResponse},
		{`{"jsonrpc":"2.0","id":"bridge-1","method":"host/budget/checkBeforeLlm","params":{}}`, kindRequest},
		{`{"jsonrpc":"2.0","method":"session/event","params":{}}`, kindNotification},
	}
	for _, tc := range cases {
		m, err := decodeMessage([]byte(tc.line))
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if m.kind() != tc.kind {
			t.Errorf("%s: kind %d, want %d", tc.line, m.kind(), tc.kind)
		}
	}
	for _, bad := range []string{`[]`, `{"jsonrpc":"2.0"}`, `not json`} {
		if _, err := decodeMessage([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestIDsStayApart(t *testing.T) {
	m, _ := decodeMessage([]byte(`{"jsonrpc":"2.0","id":"92","result":{}}`))
	if _, ok := m.hostID(); ok {
		t.Error(`string id "92" taken for our numeric id 92`)
	}
	m, _ = decodeMessage([]byte(`{"jsonrpc":"2.0","id":92,"result":{}}`))
	if id, ok := m.hostID(); !ok || id != 92 {
		t.Errorf("numeric id: %d %v", id, ok)
	}
	if incomingKey(json.RawMessage(`"7"`)) == incomingKey(json.RawMessage(`7`)) {
		t.Error(`reverse ids "7" and 7 share a key`)
	}
}

func TestEncodeLineIsOneLine(t *testing.T) {
	line, err := encodeLine(outgoingRequest{JSONRPC: "2.0", ID: 1, Method: "session/send",
		Params: map[string]string{"prompt": "two\nlines <&>"}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(line, []byte{'\n'}) != 1 || line[len(line)-1] != '\n' {
		t.Fatalf("not exactly one trailing newline: %q", line)
	}
}

func TestAllowAnswerIsResultNull(t *testing.T) {
	line, _ := encodeLine(outgoingResponse{JSONRPC: "2.0", ID: json.RawMessage(`"bridge-1"`), Result: jsonNull})
	if string(bytes.TrimSpace(line)) != `{"jsonrpc":"2.0","id":"bridge-1","result":null}` {
		t.Fatalf("got %s", line)
	}
}

func TestEventConvenienceFields(t *testing.T) {
	ev, err := decodeEvent(json.RawMessage(`{"version":1,"type":"tool_start",
		"payload":{"tool_call_id":"call_0_0","tool_name":"read","arguments":{"file_path":"README.md"}},
		"metadata":{"runId":"r","sessionId":"s","seq":4,"timestampMs":1700000000000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ToolName != "read" || ev.ToolCallID != "call_0_0" || ev.Metadata.Seq != 4 || ev.Metadata.TimestampMS != 1700000000000 {
		t.Fatalf("got %+v", ev)
	}
	// An unknown type with odd payload types is kept, not rejected.
	ev, err = decodeEvent(json.RawMessage(`{"version":1,"type":"peer_invocation","payload":{"text":5}}`))
	if err != nil || ev.Type != "peer_invocation" || ev.Text != "" {
		t.Fatalf("unknown event: %+v, %v", ev, err)
	}
}

func TestSessionOptionsSendOnlySetFields(t *testing.T) {
	if (*SessionOptions)(nil).wire() != nil || (&SessionOptions{}).wire() != nil {
		t.Fatal("empty options should send no options object")
	}
	prefix := "replay"
	got, _ := json.Marshal((&SessionOptions{TenantID: "t", MaxToolRounds: 3,
		HostEnv: &HostEnvConfig{SequentialIDPrefix: &prefix}}).wire())
	want := `{"hostEnv":{"sequentialIdPrefix":"replay"},"maxToolRounds":3,"tenantId":"t"}`
	if string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
