package code

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error is a JSON-RPC error answered by the bridge (or built by this SDK
// for the same situations). Code is the JSON-RPC code, DataCode the stable
// string in error.data.code (protocol/README.md, "Errors"). Match it with
// errors.Is against the sentinels below, which compare DataCode:
//
//	if errors.Is(err, code.ErrBudgetExhausted) { ... }
//
// or inspect it with errors.As:
//
//	var e *code.Error
//	if errors.As(err, &e) { log.Println(e.Code, e.DataCode, string(e.Data)) }
type Error struct {
	Code     int
	DataCode string
	Message  string
	// Data is the raw error.data object (it may carry more than the code,
	// e.g. "supported" for UNSUPPORTED_PROTOCOL_VERSION).
	Data json.RawMessage
}

// Error returns the bridge's message as is, so that a denied budget check
// reads exactly "Budget exhausted on 'tokens': monthly cap reached".
func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if e.DataCode != "" {
		return fmt.Sprintf("a3s-code: %s (%d)", e.DataCode, e.Code)
	}
	return fmt.Sprintf("a3s-code: JSON-RPC error %d", e.Code)
}

// Is reports whether target is an *Error with the same DataCode (or, for a
// target without DataCode, the same JSON-RPC code).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t.DataCode != "" {
		return t.DataCode == e.DataCode
	}
	return t.Code != 0 && t.Code == e.Code
}

// JSON-RPC error codes used by the protocol.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeNotInitialized = -32002
	CodeOverloaded     = -32001
	CodeRuntimeError   = -32000
	CodeCancelled      = -32800
)

func sentinel(code int, dataCode, msg string) *Error {
	return &Error{Code: code, DataCode: dataCode, Message: msg}
}

// Sentinels for every data.code of protocol/README.md's error table. They
// are only meant for errors.Is; the errors returned carry the bridge's own
// message and data.
var (
	ErrParse                      = sentinel(CodeParseError, "PARSE_ERROR", "invalid JSON")
	ErrInvalidRequest             = sentinel(CodeInvalidRequest, "INVALID_REQUEST", "invalid request")
	ErrLineTooLong                = sentinel(CodeInvalidRequest, "LINE_TOO_LONG", "line too long")
	ErrMethodNotFound             = sentinel(CodeMethodNotFound, "METHOD_NOT_FOUND", "method not found")
	ErrInvalidParams              = sentinel(CodeInvalidParams, "INVALID_PARAMS", "invalid params")
	ErrUnsupportedProtocolVersion = sentinel(CodeInvalidParams, "UNSUPPORTED_PROTOCOL_VERSION", "unsupported protocol version")
	ErrInternal                   = sentinel(CodeInternalError, "INTERNAL", "internal error")
	ErrNotInitialized             = sentinel(CodeNotInitialized, "NOT_INITIALIZED", "not initialized")
	ErrAlreadyInitialized         = sentinel(CodeNotInitialized, "ALREADY_INITIALIZED", "already initialized")
	ErrOverloaded                 = sentinel(CodeOverloaded, "OVERLOADED", "overloaded")
	ErrCancelled                  = sentinel(CodeCancelled, "CANCELLED", "cancelled")
	ErrConfig                     = sentinel(CodeRuntimeError, "CONFIG_ERROR", "configuration error")
	ErrAgentNotFound              = sentinel(CodeRuntimeError, "AGENT_NOT_FOUND", "agent not found")
	ErrSessionNotFound            = sentinel(CodeRuntimeError, "SESSION_NOT_FOUND", "session not found")
	ErrSessionBusy                = sentinel(CodeRuntimeError, "SESSION_BUSY", "session busy")
	ErrSessionClosed              = sentinel(CodeRuntimeError, "SESSION_CLOSED", "session closed")
	ErrBudgetExhausted            = sentinel(CodeRuntimeError, "BUDGET_EXHAUSTED", "budget exhausted")
	ErrLLM                        = sentinel(CodeRuntimeError, "LLM_ERROR", "LLM error")
	ErrStore                      = sentinel(CodeRuntimeError, "STORE_ERROR", "session store error")
	ErrShuttingDown               = sentinel(CodeRuntimeError, "SHUTTING_DOWN", "shutting down")
	ErrMaxToolRounds              = sentinel(CodeRuntimeError, "MAX_TOOL_ROUNDS", "max tool rounds reached")
	ErrIO                         = sentinel(CodeRuntimeError, "IO_ERROR", "I/O error")
	ErrCallbackTimeout            = sentinel(CodeRuntimeError, "CALLBACK_TIMEOUT", "host callback timed out")
	ErrArtifactNotFound           = sentinel(CodeRuntimeError, "ARTIFACT_NOT_FOUND", "artifact not found")
	// ErrPassivated: the run stopped at a safe point because the session
	// was passivated; its checkpoint stands. (*Error).RunID names the run
	// to resume elsewhere with Session.ResumeRun.
	ErrPassivated = sentinel(CodeRuntimeError, "PASSIVATED", "run passivated")
	// ErrNoSessionStore: "resume_run requires a session_store on this
	// session". Fall back to a fresh session.
	ErrNoSessionStore = sentinel(CodeRuntimeError, "NO_SESSION_STORE", "no session store")
	// ErrCheckpointNotFound: "no loop checkpoint found for run 'X'". The
	// run never reached its first checkpoint, or ended and its checkpoint
	// was deleted; treat it as settled or lost.
	ErrCheckpointNotFound = sentinel(CodeRuntimeError, "CHECKPOINT_NOT_FOUND", "checkpoint not found")
)

// RunID returns error.data.runId: the run a PASSIVATED or
// CHECKPOINT_NOT_FOUND error is about, or "" when the error names none.
//
//	var e *code.Error
//	if errors.As(err, &e) && errors.Is(err, code.ErrPassivated) {
//		resumeElsewhere(e.RunID())
//	}
func (e *Error) RunID() string {
	var d struct {
		RunID string `json:"runId"`
	}
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.RunID
}

// defaultDataCode names the codes whose meaning does not depend on data, so
// an error object without data.code still matches its sentinel.
var defaultDataCode = map[int]string{
	CodeParseError:     "PARSE_ERROR",
	CodeMethodNotFound: "METHOD_NOT_FOUND",
	CodeInternalError:  "INTERNAL",
	CodeOverloaded:     "OVERLOADED",
	CodeCancelled:      "CANCELLED",
}

// errorFromWire turns a JSON-RPC error object into an *Error.
func errorFromWire(w *wireError) *Error {
	e := &Error{Code: w.Code, Message: w.Message, Data: w.Data}
	if len(w.Data) > 0 {
		var d struct {
			Code string `json:"code"`
		}
		// data may be any JSON value; only an object with a string code counts.
		if json.Unmarshal(w.Data, &d) == nil {
			e.DataCode = d.Code
		}
	}
	if e.DataCode == "" {
		e.DataCode = defaultDataCode[w.Code]
	}
	return e
}

// wireErrorFrom is the inverse, for answers this SDK sends the bridge.
func wireErrorFrom(code int, dataCode, msg string) *wireError {
	w := &wireError{Code: code, Message: msg}
	if dataCode != "" {
		w.Data, _ = json.Marshal(map[string]string{"code": dataCode})
	}
	return w
}

// ErrBridgeNotFound matches a *BridgeNotFoundError with errors.Is.
var ErrBridgeNotFound = errors.New("a3s-code-bridge not found")

// BridgeNotFoundError says where the bridge binary was looked for and how
// to get one.
type BridgeNotFoundError struct {
	// Tried lists what was looked up, in order ("WithBridgePath: /x", ...).
	Tried []string
	// Err is the last lookup error.
	Err error
}

func (e *BridgeNotFoundError) Error() string {
	return fmt.Sprintf("a3s-code: bridge binary not found (tried %s). "+
		"Build it with `cargo build --release -p a3s-code-bridge` in the A3S Code repository, "+
		"then set %s=/path/to/target/release/a3s-code-bridge or put a3s-code-bridge on PATH",
		strings.Join(e.Tried, "; "), EnvBridgePath)
}

func (e *BridgeNotFoundError) Is(target error) bool { return target == ErrBridgeNotFound }
func (e *BridgeNotFoundError) Unwrap() error        { return e.Err }

// ErrBridgeExited matches a *BridgeExitedError with errors.Is.
var ErrBridgeExited = errors.New("a3s-code-bridge exited")

// ErrClosed is returned by calls made on (or pending during) a closed
// Runtime, Agent or Session.
var ErrClosed = errors.New("a3s-code: closed")

// BridgeExitedError reports that the bridge process ended while calls were
// pending or were made. Every pending call fails with the same value.
type BridgeExitedError struct {
	// ExitCode is the process exit code, or -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended it, if any.
	Signal string
	// Stderr is the tail of what the bridge wrote on stderr (up to 64 KiB).
	Stderr string
}

// stderrInMessage bounds how much of the stderr tail Error() repeats; the
// full tail stays in the Stderr field.
const stderrInMessage = 4 << 10

func (e *BridgeExitedError) Error() string {
	var b strings.Builder
	b.WriteString("a3s-code-bridge exited")
	switch {
	case e.Signal != "":
		fmt.Fprintf(&b, " (signal: %s)", e.Signal)
	default:
		fmt.Fprintf(&b, " (exit status %d)", e.ExitCode)
	}
	tail := strings.TrimSpace(e.Stderr)
	if len(tail) > stderrInMessage {
		tail = "…" + tail[len(tail)-stderrInMessage:]
	}
	if tail != "" {
		b.WriteString("; stderr:\n")
		b.WriteString(tail)
	} else {
		b.WriteString("; stderr was empty")
	}
	return b.String()
}

func (e *BridgeExitedError) Is(target error) bool { return target == ErrBridgeExited }

// cancelledError wraps a caller's context error so that it matches both
// ctx.Err() (context.Canceled / DeadlineExceeded) and ErrCancelled.
func cancelledError(method string, ctxErr error) error {
	return fmt.Errorf("a3s-code: %s: %w (%w)", method, ctxErr, ErrCancelled)
}
