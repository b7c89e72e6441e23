package code

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// methodPermissionRequest is the reverse request that asks the host to
// confirm a tool call (protocol: host/permission/request).
const methodPermissionRequest = "host/permission/request"

// Decisions of a PermissionPolicy.
const (
	PermissionAllow = "allow"
	PermissionDeny  = "deny"
	PermissionAsk   = "ask"
)

// PermissionPolicy decides which tool calls run, before they run. Rules
// are "tool" or "tool(argument)": the tool part is a glob on the tool
// name ("write*"), the argument part matches the call's primary argument
// (bash's command, read's file_path, ...) as a prefix ("bash(git
// status:*)") or a glob ("read(src/**)"). The order is deny, then allow,
// then ask, then DefaultDecision.
//
// A tool that no call could ever pass (denied outright, or not named by an
// allow or ask rule under a "deny" default) is not offered to the model at
// all; Session.Info lists the tools that are. A call that is denied
// anyway fails as a tool error the model sees, with a permission_denied
// event. The seed 004 read-only policy:
//
//	&code.PermissionPolicy{
//		Allow:           []string{"read*", "ls*", "glob*", "grep*", "code_*"},
//		Deny:            []string{"write*", "edit*", "patch*", "bash*", "git*"},
//		DefaultDecision: code.PermissionDeny,
//	}
type PermissionPolicy struct {
	Allow []string
	Deny  []string
	Ask   []string
	// DefaultDecision applies when no rule matches: PermissionAllow,
	// PermissionDeny or PermissionAsk. Empty means the bridge default,
	// which is PermissionAsk.
	DefaultDecision string
}

func (p *PermissionPolicy) wire() map[string]any {
	if p == nil {
		return nil
	}
	m := map[string]any{}
	if len(p.Allow) > 0 {
		m["allow"] = p.Allow
	}
	if len(p.Deny) > 0 {
		m["deny"] = p.Deny
	}
	if len(p.Ask) > 0 {
		m["ask"] = p.Ask
	}
	if p.DefaultDecision != "" {
		m["defaultDecision"] = p.DefaultDecision
	}
	return m
}

// PermissionRequest is a tool call waiting for the host's confirmation.
type PermissionRequest struct {
	SessionID  string
	ToolCallID string
	ToolName   string
	// Arguments are the call's arguments as the model gave them.
	Arguments json.RawMessage
	// Timeout is how long the bridge waits for the answer; the handler's
	// context ends then too.
	Timeout time.Duration
}

// PermissionDecision is the host's answer. The zero value rejects.
type PermissionDecision struct {
	Approved bool
	// Reason is shown to the model (and in the confirmation_received
	// event) when the call is rejected.
	Reason string
}

// PermissionHandler confirms or rejects a tool call the permission policy
// sent to "ask" (seed 004, "confirmation"). It mirrors the budget guard
// handlers: it runs in its own goroutine, with a context that ends at the
// bridge's deadline (SessionOptions.ConfirmationTimeout) or as soon as the
// bridge withdraws the question (the run was cancelled or timed out).
//
// Fail-closed: only a nil error with Approved true lets the call run. An
// error, a panic (recovered and logged), a missed deadline or no handler
// at all denies it; the run goes on and the model sees the refusal.
type PermissionHandler func(context.Context, PermissionRequest) (PermissionDecision, error)

// setConfirm stores (or, for nil, removes) a session's handler.
func (rt *Runtime) setConfirm(sessionID string, h PermissionHandler) {
	rt.guardsMu.Lock()
	defer rt.guardsMu.Unlock()
	if h == nil {
		delete(rt.confirms, sessionID)
	} else {
		rt.confirms[sessionID] = h
	}
}

// handlePermission answers one host/permission/request in the handler
// goroutine the connection started; ctx carries the bridge's deadline.
func (rt *Runtime) handlePermission(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		SessionID  string          `json:"sessionId"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Arguments  json.RawMessage `json:"arguments"`
		TimeoutMS  int64           `json:"timeoutMs"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, DataCode: "INVALID_PARAMS",
			Message: fmt.Sprintf("%s: %v", methodPermissionRequest, err)}
	}
	rt.guardsMu.Lock()
	h := rt.confirms[p.SessionID]
	rt.guardsMu.Unlock()
	if h == nil {
		return nil, &Error{Code: CodeMethodNotFound, DataCode: "METHOD_NOT_FOUND",
			Message: fmt.Sprintf("no permission handler for session %q", p.SessionID)}
	}
	d, err := h(ctx, PermissionRequest{
		SessionID:  p.SessionID,
		ToolCallID: p.ToolCallID,
		ToolName:   p.ToolName,
		Arguments:  p.Arguments,
		Timeout:    time.Duration(p.TimeoutMS) * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	res := struct {
		Approved bool    `json:"approved"`
		Reason   *string `json:"reason"`
	}{Approved: d.Approved}
	if d.Reason != "" {
		res.Reason = &d.Reason
	}
	return res, nil
}
