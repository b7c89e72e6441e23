package code

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

// Unit tests of the wire shapes and helpers of the newer API.

func TestSessionOptionsWireTheNewFields(t *testing.T) {
	o := &SessionOptions{
		FileSessionStoreDir: "./.a3s/sessions",
		RetentionLimits:     &RetentionLimits{MaxRunsRetained: 2, MaxEventBytesPerRun: 1 << 20},
		PermissionPolicy:    seed004Policy(),
		ConfirmationTimeout: 1500 * time.Millisecond,
	}
	got, _ := json.Marshal(o.wire())
	want := `{"confirmationTimeoutMs":1500,"fileSessionStoreDir":"./.a3s/sessions",` +
		`"permissionPolicy":{"allow":["read*","ls*","glob*","grep*","code_*"],"defaultDecision":"deny",` +
		`"deny":["write*","edit*","patch*","bash*","git*"]},` +
		`"retentionLimits":{"maxEventBytesPerRun":1048576,"maxRunsRetained":2}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	// Zero values mean "the defaults"; a sub-millisecond timeout is not 0.
	got, _ = json.Marshal((&SessionOptions{RetentionLimits: &RetentionLimits{Unbounded: true},
		PermissionPolicy: &PermissionPolicy{}, ConfirmationTimeout: time.Nanosecond}).wire())
	if string(got) != `{"confirmationTimeoutMs":1,"permissionPolicy":{},"retentionLimits":{"unbounded":true}}` {
		t.Fatalf("got %s", got)
	}
	// The handler stays in this process.
	handlerOnly := &SessionOptions{ConfirmPermission: func(context.Context, PermissionRequest) (PermissionDecision, error) {
		return PermissionDecision{}, nil
	}}
	if handlerOnly.wire() != nil {
		t.Fatal("a handler alone should send no options")
	}
}

func TestArtifactURIsFindsTheFooterURI(t *testing.T) {
	out := "     1\tline\n\n[output truncated: showing first 2048 of 90000 bytes, sha256 ab; " +
		"full output stored as artifact://s-1/replay-artifact-3 — read it by range]"
	if got := ArtifactURIs(out); !reflect.DeepEqual(got, []string{"artifact://s-1/replay-artifact-3"}) {
		t.Fatalf("got %q", got)
	}
	if got := ArtifactURIs("artifact://a/1\nartifact://a/2 artifact:// end"); !reflect.DeepEqual(got, []string{"artifact://a/1", "artifact://a/2"}) {
		t.Fatalf("got %q", got)
	}
	if ArtifactURIs("nothing here") != nil {
		t.Fatal("no URI expected")
	}
}

func TestPassivatedErrorNamesItsRun(t *testing.T) {
	e := errorFromWire(&wireError{Code: CodeRuntimeError, Message: "run 'r-1' passivated at a safe point (drain); resume it with resume_run",
		Data: json.RawMessage(`{"code":"PASSIVATED","runId":"r-1","reason":"drain"}`)})
	var err error = e
	if !errors.Is(err, ErrPassivated) || errors.Is(err, ErrCancelled) || e.RunID() != "r-1" {
		t.Fatalf("%v: RunID %q", err, e.RunID())
	}
	for code, sentinel := range map[string]error{"NO_SESSION_STORE": ErrNoSessionStore, "CHECKPOINT_NOT_FOUND": ErrCheckpointNotFound,
		"ARTIFACT_NOT_FOUND": ErrArtifactNotFound, "MAX_TOOL_ROUNDS": ErrMaxToolRounds, "IO_ERROR": ErrIO, "CALLBACK_TIMEOUT": ErrCallbackTimeout} {
		err := errorFromWire(&wireError{Code: CodeRuntimeError, Message: "m", Data: json.RawMessage(`{"code":"` + code + `"}`)})
		if !errors.Is(err, sentinel) || err.RunID() != "" {
			t.Errorf("%s does not match its sentinel", code)
		}
	}
}

func TestInjectableEventsAndPayloadDecoding(t *testing.T) {
	deadline := time.UnixMilli(1_700_000_060_000)
	ev := PassivationRequestedEvent("drain", deadline)
	if ev.Type != EventPassivationRequested || string(ev.Payload) != `{"reason":"drain","deadline_ms":1700000060000}` {
		t.Fatalf("got %s %s", ev.Type, ev.Payload)
	}
	var p PassivationRequested
	if err := ev.Decode(&p); err != nil || !p.Deadline().Equal(deadline) {
		t.Fatalf("decoded %+v, %v", p, err)
	}
	if ev := PassivationRequestedEvent("x", time.Time{}); string(ev.Payload) != `{"reason":"x"}` {
		t.Fatalf("zero deadline: %s", ev.Payload)
	}
	ev = PeerInvocationEvent("s-b", "", "trace")
	if ev.Type != EventPeerInvocation || string(ev.Payload) != `{"from_session_id":"s-b","correlation_id":"trace"}` {
		t.Fatalf("got %s %s", ev.Type, ev.Payload)
	}
	if err := (Event{Type: "x"}).Decode(&p); err == nil {
		t.Fatal("decoding an empty payload should fail")
	}
}

func TestNewAndUnknownEventTypesAreKept(t *testing.T) {
	for _, raw := range []string{
		`{"version":1,"type":"permission_denied","payload":{"tool_call_id":"c","tool_name":"write","reason":"no"}}`,
		`{"version":2,"type":"brand_new_event","payload":{"tool_name":["odd"],"anything":{"nested":true}}}`,
	} {
		ev, err := decodeEvent(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]json.RawMessage
		json.Unmarshal([]byte(raw), &back)
		if ev.Type == "" || string(ev.Payload) != string(back["payload"]) {
			t.Fatalf("event not kept as sent: %+v", ev)
		}
	}
	ev, _ := decodeEvent(json.RawMessage(`{"version":1,"type":"permission_denied","payload":{"tool_call_id":"c","tool_name":"write","reason":"no"}}`))
	var d PermissionDenied
	if ev.ToolName != "write" || ev.ToolCallID != "c" || ev.Decode(&d) != nil || d.Reason != "no" {
		t.Fatalf("permission_denied: %+v %+v", ev, d)
	}
}

func TestToolErrorMatchesErrTool(t *testing.T) {
	var err error = &ToolError{Tool: "read", Output: "path '../x' is outside the workspace"}
	if !errors.Is(err, ErrTool) || err.Error() != "a3s-code: read: path '../x' is outside the workspace" {
		t.Fatal(err)
	}
}
