package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestWireErrorsMatchTheirSentinels(t *testing.T) {
	cases := []struct {
		wire     string
		sentinel error
		others   []error
	}{
		{`{"code":-32000,"message":"Budget exhausted on 'tokens': monthly cap reached","data":{"code":"BUDGET_EXHAUSTED"}}`,
			ErrBudgetExhausted, []error{ErrSessionBusy, ErrLLM}},
		{`{"code":-32000,"message":"busy","data":{"code":"SESSION_BUSY"}}`, ErrSessionBusy, []error{ErrBudgetExhausted}},
		{`{"code":-32000,"message":"x","data":{"code":"SESSION_NOT_FOUND"}}`, ErrSessionNotFound, []error{ErrAgentNotFound}},
		{`{"code":-32800,"message":"cancelled","data":{"code":"CANCELLED"}}`, ErrCancelled, nil},
		{`{"code":-32800,"message":"cancelled"}`, ErrCancelled, nil}, // no data: code decides
		{`{"code":-32001,"message":"later","data":{"code":"OVERLOADED"}}`, ErrOverloaded, nil},
		{`{"code":-32601,"message":"nope"}`, ErrMethodNotFound, []error{ErrInvalidParams}},
		{`{"code":-32602,"message":"v","data":{"code":"UNSUPPORTED_PROTOCOL_VERSION","supported":[1]}}`,
			ErrUnsupportedProtocolVersion, []error{ErrInvalidParams}},
		{`{"code":-32600,"message":"long","data":{"code":"LINE_TOO_LONG"}}`, ErrLineTooLong, []error{ErrInvalidRequest}},
		{`{"code":-32002,"message":"init","data":{"code":"NOT_INITIALIZED"}}`, ErrNotInitialized, []error{ErrAlreadyInitialized}},
		{`{"code":-32000,"message":"cfg","data":{"code":"CONFIG_ERROR"}}`, ErrConfig, nil},
		{`{"code":-32000,"message":"llm","data":"not an object"}`, &Error{Code: CodeRuntimeError}, []error{ErrLLM}},
	}
	for _, tc := range cases {
		var w wireError
		if err := json.Unmarshal([]byte(tc.wire), &w); err != nil {
			t.Fatal(err)
		}
		// Wrapped, as API calls return them.
		err := fmt.Errorf("call: %w", errorFromWire(&w))
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: does not match %v", tc.wire, tc.sentinel)
		}
		for _, o := range tc.others {
			if errors.Is(err, o) {
				t.Errorf("%s: unexpectedly matches %v", tc.wire, o)
			}
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != w.Code || e.Message != w.Message {
			t.Errorf("%s: errors.As gave %+v", tc.wire, e)
		}
	}
}

func TestErrorMessageIsTheBridgeMessage(t *testing.T) {
	e := &Error{Code: -32000, DataCode: "BUDGET_EXHAUSTED", Message: "Budget exhausted on 'tokens': monthly cap reached"}
	if e.Error() != "Budget exhausted on 'tokens': monthly cap reached" {
		t.Fatalf("got %q", e.Error())
	}
}

func TestCancelledErrorMatchesContextAndSentinel(t *testing.T) {
	err := cancelledError("session/send", context.Canceled)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCancelled) {
		t.Fatalf("%v: want both context.Canceled and ErrCancelled", err)
	}
	if errors.Is(err, ErrSessionBusy) {
		t.Fatal("cancelled error matches ErrSessionBusy")
	}
}

func TestBridgeExitedErrorCarriesStderrTail(t *testing.T) {
	long := strings.Repeat("log line\n", 2000) + "thread 'main' panicked at boom"
	e := &BridgeExitedError{ExitCode: 101, Stderr: long}
	msg := e.Error()
	if !strings.Contains(msg, "exit status 101") || !strings.HasSuffix(msg, "panicked at boom") {
		t.Fatalf("message lacks status or tail: %q", msg[len(msg)-200:])
	}
	if len(msg) > stderrInMessage+200 {
		t.Fatalf("message is %d bytes; the tail in it should be bounded", len(msg))
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", e), ErrBridgeExited) {
		t.Fatal("does not match ErrBridgeExited")
	}
}

func TestBridgeNotFoundErrorExplainsTheFix(t *testing.T) {
	t.Setenv(EnvBridgePath, "")
	t.Setenv("PATH", t.TempDir())
	_, err := findBridge("")
	if !errors.Is(err, ErrBridgeNotFound) {
		t.Fatalf("got %v, want ErrBridgeNotFound", err)
	}
	for _, want := range []string{"cargo build --release -p a3s-code-bridge", EnvBridgePath, "PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
}

func TestExplicitOrEnvBridgePathMustExist(t *testing.T) {
	if _, err := findBridge("/nonexistent/a3s-code-bridge"); !errors.Is(err, ErrBridgeNotFound) {
		t.Fatalf("explicit path: got %v", err)
	}
	t.Setenv(EnvBridgePath, "/nonexistent/env-bridge")
	_, err := findBridge("")
	if !errors.Is(err, ErrBridgeNotFound) || !strings.Contains(err.Error(), "/nonexistent/env-bridge") {
		t.Fatalf("env path: got %v", err)
	}
}

func TestCreateWithMissingBridgeFailsWithErrBridgeNotFound(t *testing.T) {
	checkNoLeaks(t)
	_, err := Create(context.Background(), "default_model = \"x/y\"", WithBridgePath("/nonexistent/a3s-code-bridge"))
	if !errors.Is(err, ErrBridgeNotFound) {
		t.Fatalf("got %v, want ErrBridgeNotFound", err)
	}
	var nf *BridgeNotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("got %T, want *BridgeNotFoundError", err)
	}
}
