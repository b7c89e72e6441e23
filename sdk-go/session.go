package code

import (
	"context"
	"sync"
)

// SessionOptions configure a new session. Every field is optional: the
// zero value leaves the agent configuration's value or the bridge default.
type SessionOptions struct {
	// Model is "provider/model", overriding the configuration's default.
	Model        string
	SystemPrompt string
	// MaxToolRounds bounds the tool rounds of one run (bridge default 25).
	MaxToolRounds int
	// SessionID fixes the session's id instead of a generated one (to
	// restore a stored session).
	SessionID string
	// HostEnv makes ids and timestamps deterministic, for replay.
	HostEnv *HostEnvConfig

	// Identity tags: opaque to the runtime, kept with the session.
	TenantID        string
	Principal       string
	AgentTemplateID string
	CorrelationID   string

	// FileSessionStoreDir persists the session in this directory.
	FileSessionStoreDir string
}

// HostEnvConfig replaces the session's id generator and clock. The two are
// independent; a nil field keeps the system default.
type HostEnvConfig struct {
	// SequentialIDPrefix yields ids "<prefix>-<kind>-<n>".
	SequentialIDPrefix *string
	// FixedTimeMS makes every timestamp this Unix time in milliseconds.
	FixedTimeMS *uint64
}

// wire returns the options object of session/create with only the fields
// that are set, or nil when none is.
func (o *SessionOptions) wire() map[string]any {
	if o == nil {
		return nil
	}
	m := map[string]any{}
	put := func(key, value string) {
		if value != "" {
			m[key] = value
		}
	}
	put("model", o.Model)
	put("systemPrompt", o.SystemPrompt)
	put("sessionId", o.SessionID)
	put("tenantId", o.TenantID)
	put("principal", o.Principal)
	put("agentTemplateId", o.AgentTemplateID)
	put("correlationId", o.CorrelationID)
	put("fileSessionStoreDir", o.FileSessionStoreDir)
	if o.MaxToolRounds != 0 {
		m["maxToolRounds"] = o.MaxToolRounds
	}
	if env := o.HostEnv; env != nil {
		h := map[string]any{}
		if env.SequentialIDPrefix != nil {
			h["sequentialIdPrefix"] = *env.SequentialIDPrefix
		}
		if env.FixedTimeMS != nil {
			h["fixedTimeMs"] = *env.FixedTimeMS
		}
		m["hostEnv"] = h
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

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
// cancels the run in the bridge; the session stays usable.
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

// ResumeRun continues a run from the checkpoint another process left in
// the session store (seed 000, "loop checkpoints and run resume"). The
// session needs FileSessionStoreDir and the SessionID of the stored one.
func (s *Session) ResumeRun(ctx context.Context, runID string) (*RunResult, error) {
	var res RunResult
	err := s.rt.call(ctx, "session/resumeRun", map[string]string{"sessionId": s.id, "runId": runID}, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
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

// Close closes the session in the bridge and forgets its budget guard. It
// is idempotent.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		err := s.rt.call(ctx, "session/close", map[string]string{"sessionId": s.id}, nil)
		if errIsClosedOrExited(err) {
			err = nil
		}
		s.rt.setGuard(s.id, nil)
		s.closeErr = err
	})
	return s.closeErr
}
