package code

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Reverse requests of the budget guard (protocol/README.md, "Budget guard").
const (
	methodCheckBeforeLLM  = "host/budget/checkBeforeLlm"
	methodRecordAfterLLM  = "host/budget/recordAfterLlm"
	methodCheckBeforeTool = "host/budget/checkBeforeTool"
)

// BudgetGuardHandlers is a host-owned budget policy for one session (seed
// 000, "budget / cost guards"). Each handler is optional: a nil one is
// never called and counts as "allow". Handlers run in their own goroutine
// with a context that ends at the bridge's deadline (Timeout) or when the
// bridge withdraws the call.
//
// Fail-closed: a check that returns an error, panics, or misses its
// deadline denies the guarded call. A failing RecordAfterLLM is ignored.
type BudgetGuardHandlers struct {
	// CheckBeforeLLM runs before every model call. A nil decision with a
	// nil error allows the call.
	CheckBeforeLLM func(context.Context, BudgetLLMContext) (*BudgetDecision, error)
	// RecordAfterLLM runs after every model call with its usage.
	RecordAfterLLM func(context.Context, BudgetUsageContext) error
	// CheckBeforeTool runs before every tool call.
	CheckBeforeTool func(context.Context, BudgetToolContext) (*BudgetDecision, error)
	// Timeout bounds each call (bridge default 5s when zero).
	Timeout time.Duration
}

// BudgetLLMContext describes a model call about to be made.
type BudgetLLMContext struct {
	SessionID       string `json:"sessionId"`
	EstimatedTokens int    `json:"estimatedTokens"`
}

// BudgetUsageContext reports a finished model call's usage.
type BudgetUsageContext struct {
	SessionID string `json:"sessionId"`
	Usage     Usage  `json:"usage"`
}

// BudgetToolContext describes a tool call about to be made.
type BudgetToolContext struct {
	SessionID string `json:"sessionId"`
	ToolName  string `json:"toolName"`
}

// BudgetDecision is a guard's answer. Decision is "allow", "soft" (emit a
// budget_threshold_hit event of kind soft and go on; set Resource,
// Consumed, Limit and optionally Message) or "deny" (fail the call with
// "Budget exhausted on '<Resource>': <Reason>").
type BudgetDecision struct {
	Decision string  `json:"decision"`
	Resource string  `json:"resource,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	Message  string  `json:"message,omitempty"`
	Consumed float64 `json:"consumed,omitempty"`
	Limit    float64 `json:"limit,omitempty"`
}

// SetBudgetGuard installs handlers as the session's budget guard, or
// clears it when handlers is nil. The bridge only calls the handlers that
// are set.
func (s *Session) SetBudgetGuard(ctx context.Context, handlers *BudgetGuardHandlers) error {
	var guard any // JSON null clears
	if handlers != nil {
		g := map[string]any{
			"checkBeforeLlm":  handlers.CheckBeforeLLM != nil,
			"recordAfterLlm":  handlers.RecordAfterLLM != nil,
			"checkBeforeTool": handlers.CheckBeforeTool != nil,
		}
		if handlers.Timeout > 0 {
			g["timeoutMs"] = handlers.Timeout.Milliseconds()
		}
		guard = g
		// Installed before the request: the bridge may call a handler as
		// soon as it has answered, before this function returns.
		h := *handlers
		prev := s.rt.setGuard(s.id, &h)
		if err := s.setGuardRemote(ctx, guard); err != nil {
			s.rt.setGuard(s.id, prev)
			return err
		}
		return nil
	}
	if err := s.setGuardRemote(ctx, nil); err != nil {
		return err
	}
	s.rt.setGuard(s.id, nil)
	return nil
}

func (s *Session) setGuardRemote(ctx context.Context, guard any) error {
	return s.rt.call(ctx, "session/setBudgetGuard", map[string]any{"sessionId": s.id, "guard": guard}, nil)
}

// setGuard stores (or, for nil, removes) a session's handlers and returns
// the previous ones.
func (rt *Runtime) setGuard(sessionID string, h *BudgetGuardHandlers) *BudgetGuardHandlers {
	rt.guardsMu.Lock()
	defer rt.guardsMu.Unlock()
	prev := rt.guards[sessionID]
	if h == nil {
		delete(rt.guards, sessionID)
	} else {
		rt.guards[sessionID] = h
	}
	return prev
}

// handleBudget answers one host/budget/* request. It runs in the handler
// goroutine the connection started; ctx carries the bridge's deadline.
func (rt *Runtime) handleBudget(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p struct {
		SessionID       string `json:"sessionId"`
		EstimatedTokens int    `json:"estimatedTokens"`
		Usage           Usage  `json:"usage"`
		ToolName        string `json:"toolName"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, DataCode: "INVALID_PARAMS", Message: fmt.Sprintf("%s: %v", method, err)}
	}
	rt.guardsMu.Lock()
	h := rt.guards[p.SessionID]
	rt.guardsMu.Unlock()
	notFound := &Error{Code: CodeMethodNotFound, DataCode: "METHOD_NOT_FOUND",
		Message: fmt.Sprintf("no %s handler for session %q", method, p.SessionID)}
	if h == nil {
		return nil, notFound
	}

	switch method {
	case methodCheckBeforeLLM:
		if h.CheckBeforeLLM == nil {
			return nil, notFound
		}
		return decisionResult(h.CheckBeforeLLM(ctx, BudgetLLMContext{SessionID: p.SessionID, EstimatedTokens: p.EstimatedTokens}))
	case methodCheckBeforeTool:
		if h.CheckBeforeTool == nil {
			return nil, notFound
		}
		return decisionResult(h.CheckBeforeTool(ctx, BudgetToolContext{SessionID: p.SessionID, ToolName: p.ToolName}))
	case methodRecordAfterLLM:
		if h.RecordAfterLLM == nil {
			return nil, notFound
		}
		if err := h.RecordAfterLLM(ctx, BudgetUsageContext{SessionID: p.SessionID, Usage: p.Usage}); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	}
	return nil, notFound
}

// decisionResult turns a handler's return into the reply: a nil decision
// is JSON null (allow); an error is an error reply, which the bridge
// treats as deny.
func decisionResult(d *BudgetDecision, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, nil
	}
	return d, nil
}
