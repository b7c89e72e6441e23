package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The seams of seed 000 ("cluster extension points") that move a session's
// work between processes: save, resume, passivate and host-injected events.

// ResumeRun continues a run from the loop checkpoint another process left
// in the session store, as a new run; the checkpointed run's record stays
// as it was (seed 000, "loop checkpoints and run resume"). The session
// needs FileSessionStoreDir and the SessionID of the stored one. Settled
// rounds are not repeated; a tool call of the interrupted round that has
// no recorded result runs once.
//
// Errors: ErrNoSessionStore without a store, ErrCheckpointNotFound when
// there is no checkpoint for runID (its *Error.RunID names it), ErrStore
// for a checkpoint of another session or a newer format.
func (s *Session) ResumeRun(ctx context.Context, runID string) (*RunResult, error) {
	var res RunResult
	err := s.rt.call(ctx, "session/resumeRun", map[string]string{"sessionId": s.id, "runId": runID}, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Passivate asks the running prompt to stop at its next safe point (after
// its current tool round settles and is checkpointed) so the session can
// be moved; the run emits passivation_requested and then fails with
// ErrPassivated. Passivate returns once the run has stopped, with the id of
// the run to resume elsewhere, or nil when nothing was running.
//
// A non-zero deadline bounds the wait: past it the run is cancelled and
// its last checkpoint stands. The zero time means no deadline.
func (s *Session) Passivate(ctx context.Context, reason string, deadline time.Time) (runID *string, err error) {
	params := map[string]any{"sessionId": s.id, "reason": reason}
	if !deadline.IsZero() {
		ms := deadline.UnixMilli()
		if ms < 0 {
			ms = 0
		}
		params["deadlineMs"] = ms
	}
	var res struct {
		RunID *string `json:"runId"`
	}
	if err := s.rt.call(ctx, "session/passivate", params, &res); err != nil {
		return nil, err
	}
	return res.RunID, nil
}

// InjectEvent delivers a host-produced cluster event to the running
// prompt's event stream, where Stream consumers see it like any other
// event. Only passivation_requested and peer_invocation may be injected:
// build them with PassivationRequestedEvent and PeerInvocationEvent (or
// pass on one received from another session's stream). It reports whether
// a run was there to receive the event.
//
// Injecting passivation_requested only tells the consumers; to make the
// run stop, call Passivate.
func (s *Session) InjectEvent(ctx context.Context, ev Event) (bool, error) {
	if ev.Type == "" {
		return false, errors.New("a3s-code: InjectEvent: the event has no type")
	}
	fields := map[string]json.RawMessage{}
	if len(ev.Payload) > 0 && string(ev.Payload) != "null" {
		if err := json.Unmarshal(ev.Payload, &fields); err != nil {
			return false, fmt.Errorf("a3s-code: InjectEvent: the payload is not a JSON object: %w", err)
		}
	}
	fields["type"], _ = json.Marshal(ev.Type)
	var res struct {
		Delivered bool `json:"delivered"`
	}
	if err := s.rt.call(ctx, "session/injectEvent", map[string]any{"sessionId": s.id, "event": fields}, &res); err != nil {
		return false, err
	}
	return res.Delivered, nil
}

// Save writes the session's snapshot (identity, history, usage, runs) to
// its store now; runs also save it when they end. Without a store it does
// nothing.
func (s *Session) Save(ctx context.Context) error {
	return s.rt.call(ctx, "session/save", map[string]string{"sessionId": s.id}, nil)
}

// PassivationRequestedEvent builds a passivation_requested event for
// InjectEvent. A zero deadline is left out.
func PassivationRequestedEvent(reason string, deadline time.Time) Event {
	p := PassivationRequested{Reason: reason}
	if !deadline.IsZero() && deadline.UnixMilli() > 0 {
		ms := uint64(deadline.UnixMilli())
		p.DeadlineMS = &ms
	}
	return payloadEvent(EventPassivationRequested, p)
}

// PeerInvocationEvent builds a peer_invocation event for InjectEvent: the
// session fromSessionID (of tenant fromTenantID, in the correlation chain
// correlationID; both may be empty) invoked this one.
func PeerInvocationEvent(fromSessionID, fromTenantID, correlationID string) Event {
	p := PeerInvocation{FromSessionID: fromSessionID}
	if fromTenantID != "" {
		p.FromTenantID = &fromTenantID
	}
	if correlationID != "" {
		p.CorrelationID = &correlationID
	}
	return payloadEvent(EventPeerInvocation, p)
}

func payloadEvent(typ string, payload any) Event {
	b, _ := json.Marshal(payload) // plain structs: cannot fail
	return Event{Version: 1, Type: typ, Payload: b}
}
