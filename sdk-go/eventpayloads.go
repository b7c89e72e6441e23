package code

import (
	"encoding/json"
	"fmt"
	"time"
)

// Decode unmarshals the event's payload into v, typically one of the
// payload structs below chosen by ev.Type:
//
//	if ev.Type == code.EventPermissionDenied {
//		var p code.PermissionDenied
//		if err := ev.Decode(&p); err == nil {
//			log.Printf("%s refused: %s", p.ToolName, p.Reason)
//		}
//	}
func (ev Event) Decode(v any) error {
	if len(ev.Payload) == 0 {
		return fmt.Errorf("a3s-code: %s event has no payload", ev.Type)
	}
	if err := json.Unmarshal(ev.Payload, v); err != nil {
		return fmt.Errorf("a3s-code: decode %s payload: %w", ev.Type, err)
	}
	return nil
}

// ToolEnd is the payload of tool_end. Output over the inline limit holds a
// preview and an artifact URI (see ArtifactURIs).
type ToolEnd struct {
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	Output     string `json:"output"`
	IsError    bool   `json:"is_error"`
}

// PermissionDenied is the payload of permission_denied: the policy, or the
// host through ConfirmPermission, refused the call.
type PermissionDenied struct {
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	Reason     string `json:"reason"`
}

// ConfirmationRequired is the payload of confirmation_required: the call
// waits for ConfirmPermission, at most TimeoutMS milliseconds.
type ConfirmationRequired struct {
	ToolCallID string          `json:"tool_call_id"`
	ToolName   string          `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments"`
	TimeoutMS  uint64          `json:"timeout_ms"`
}

// ConfirmationReceived is the payload of confirmation_received. A
// rejection carries a reason; so does an error or panic of the handler.
type ConfirmationReceived struct {
	ToolCallID string  `json:"tool_call_id"`
	ToolName   string  `json:"tool_name"`
	Approved   bool    `json:"approved"`
	Reason     *string `json:"reason,omitempty"`
}

// ConfirmationTimeout is the payload of confirmation_timeout: nobody
// answered within TimeoutMS, so the call was denied.
type ConfirmationTimeout struct {
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	TimeoutMS  uint64 `json:"timeout_ms"`
}

// ContextCompacted is the payload of context_compacted.
type ContextCompacted struct {
	SummarizedMessages int `json:"summarized_messages"`
	TokensBefore       int `json:"tokens_before"`
	TokensAfter        int `json:"tokens_after"`
}

// BudgetThresholdHit is the payload of budget_threshold_hit: Kind is
// "soft" (the guard answered soft, the call went on) or "hard" (denied;
// the reason is in Message).
type BudgetThresholdHit struct {
	Resource string  `json:"resource"`
	Kind     string  `json:"kind"`
	Consumed float64 `json:"consumed"`
	Limit    float64 `json:"limit"`
	Message  *string `json:"message,omitempty"`
}

// PassivationRequested is the payload of passivation_requested: the host
// asked the session to reach a safe, persistable state so it can be moved.
type PassivationRequested struct {
	Reason string `json:"reason"`
	// DeadlineMS is the Unix epoch deadline in milliseconds, if any.
	DeadlineMS *uint64 `json:"deadline_ms,omitempty"`
}

// Deadline returns DeadlineMS as a time, or the zero time without one.
func (p PassivationRequested) Deadline() time.Time {
	if p.DeadlineMS == nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(*p.DeadlineMS))
}

// PeerInvocation is the payload of peer_invocation: another session
// invoked this one. The tags attribute the call to its source tenant and
// correlation chain.
type PeerInvocation struct {
	FromSessionID string  `json:"from_session_id"`
	FromTenantID  *string `json:"from_tenant_id,omitempty"`
	CorrelationID *string `json:"correlation_id,omitempty"`
}
