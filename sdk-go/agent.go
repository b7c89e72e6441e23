package code

import (
	"context"
	"errors"
	"sync"
)

// Agent is an agent configuration loaded in a bridge. Sessions run on it.
type Agent struct {
	rt    *Runtime
	id    string
	owned bool // rt was started for this agent and closes with it

	closeOnce sync.Once
	closeErr  error
}

// Create starts a bridge (or uses the one given with WithRuntime) and loads
// an agent configuration into it. configPathOrInlineACL is the path of an
// ACL file or inline ACL text. Close the agent when done; that also stops
// the bridge unless it came from WithRuntime.
func Create(ctx context.Context, configPathOrInlineACL string, opts ...Option) (*Agent, error) {
	o := buildOptions(opts)
	rt, owned := o.runtime, false
	if rt == nil {
		var err error
		if rt, err = NewRuntime(ctx, opts...); err != nil {
			return nil, err
		}
		owned = true
	}
	agent, err := rt.CreateAgent(ctx, configPathOrInlineACL)
	if err != nil {
		if owned {
			_ = rt.Close(context.Background())
		}
		return nil, err
	}
	agent.owned = owned
	return agent, nil
}

// NewAgent is Create under the name some samples use.
func NewAgent(ctx context.Context, configPathOrInlineACL string, opts ...Option) (*Agent, error) {
	return Create(ctx, configPathOrInlineACL, opts...)
}

// ID returns the bridge's id for this agent.
func (a *Agent) ID() string { return a.id }

// Runtime returns the runtime the agent lives in.
func (a *Agent) Runtime() *Runtime { return a.rt }

// Close closes the agent and its sessions in the bridge, then stops the
// bridge if the agent owns it. It is idempotent.
func (a *Agent) Close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		err := a.rt.call(ctx, "agent/close", map[string]string{"agentId": a.id}, nil)
		if errIsClosedOrExited(err) {
			err = nil // nothing left to close
		}
		if a.owned {
			err = errors.Join(err, a.rt.Close(ctx))
		}
		a.closeErr = err
	})
	return a.closeErr
}

// Session opens a session working in workspaceDir (resolved by the bridge,
// which shares this process's working directory). opts may be nil.
func (a *Agent) Session(ctx context.Context, workspaceDir string, opts *SessionOptions) (*Session, error) {
	params := map[string]any{"agentId": a.id, "workspace": workspaceDir}
	if wire := opts.wire(); wire != nil {
		params["options"] = wire
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := a.rt.call(ctx, "session/create", params, &res); err != nil {
		return nil, err
	}
	// Registered once the id is known; no run, and so no question, can
	// come before the caller has the session.
	if opts != nil && opts.ConfirmPermission != nil {
		a.rt.setConfirm(res.SessionID, opts.ConfirmPermission)
	}
	return &Session{rt: a.rt, id: res.SessionID}, nil
}
