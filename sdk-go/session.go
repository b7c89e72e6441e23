package code

import (
	"context"
	"sync"
)

// RunResult is the outcome of a run.
type RunResult struct {
	RunID          string `json:"runId"`
	Text           string `json:"text"`
	Usage          Usage  `json:"usage"`
	ToolCallsCount int    `json:"toolCallsCount"`
}

// Usage counts model tokens.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
}

// Session is a conversation with an agent in a workspace. It runs one
// prompt at a time (a second Run or Stream while one runs fails with
// ErrSessionBusy); different sessions run concurrently.
type Session struct {
	rt *Runtime
	id string

	closeOnce sync.Once
	closeErr  error
}

// SessionID returns the session's id.
func (s *Session) SessionID() string { return s.id }

// Run sends a prompt and waits for the final answer. Cancelling ctx
// cancels the run in the bridge; the session stays usable. A run stopped
// by Passivate fails with ErrPassivated.
func (s *Session) Run(ctx context.Context, prompt string) (*RunResult, error) {
	var res RunResult
	err := s.rt.call(ctx, "session/send", map[string]string{"sessionId": s.id, "prompt": prompt}, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Stream sends a prompt and returns its events as they happen; see Stream
// for how to read them. Cancelling ctx cancels the run in the bridge and
// closes the event channel.
func (s *Session) Stream(ctx context.Context, prompt string) (*Stream, error) {
	select {
	case <-s.rt.closing:
		return nil, ErrClosed
	default:
	}
	c := s.rt.conn
	st := newStream(c, s.rt.init.Limits.StreamWindow)
	id, p, err := c.start(ctx, "session/stream", map[string]string{"sessionId": s.id, "prompt": prompt}, st)
	if err != nil {
		return nil, err
	}
	st.id = id
	go st.run(ctx, p)
	go st.forward()
	return st, nil
}

// SessionInfo is what session/info reports. The identity tags are nil when
// the session has none.
type SessionInfo struct {
	SessionID string `json:"sessionId"`
	// Workspace is the directory the session's tools are confined to.
	Workspace string `json:"workspace,omitempty"`
	// Tools names the tools the session's model may call.
	Tools           []string `json:"tools,omitempty"`
	TenantID        *string  `json:"tenantId,omitempty"`
	Principal       *string  `json:"principal,omitempty"`
	AgentTemplateID *string  `json:"agentTemplateId,omitempty"`
	CorrelationID   *string  `json:"correlationId,omitempty"`
}

// Info asks the bridge for the session's id and identity tags.
func (s *Session) Info(ctx context.Context) (*SessionInfo, error) {
	var info SessionInfo
	if err := s.rt.call(ctx, "session/info", map[string]string{"sessionId": s.id}, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// Close closes the session in the bridge and forgets its budget guard and
// permission handler. It is idempotent.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		err := s.rt.call(ctx, "session/close", map[string]string{"sessionId": s.id}, nil)
		if errIsClosedOrExited(err) {
			err = nil
		}
		s.rt.setGuard(s.id, nil)
		s.rt.setConfirm(s.id, nil)
		s.closeErr = err
	})
	return s.closeErr
}
