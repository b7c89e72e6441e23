package code

import (
	"context"
	"time"
)

// Statuses of a run.
const (
	RunRunning   = "running"
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
	// RunPassivated: stopped at a safe point by Session.Passivate; its
	// checkpoint stands for Session.ResumeRun.
	RunPassivated = "passivated"
)

// RunInfo is the record of one run of a session: a prompt (Run, Stream,
// ResumeRun) or a direct tool call (prompt "tool:<name>").
type RunInfo struct {
	ID string `json:"id"`
	// Status is RunRunning, RunCompleted, RunFailed, RunCancelled or
	// RunPassivated (new statuses may appear).
	Status    string `json:"status"`
	Prompt    string `json:"prompt"`
	StartedMS uint64 `json:"startedMs"`
	// EndedMS is nil while the run is running.
	EndedMS *uint64 `json:"endedMs"`
}

// Started returns StartedMS as a time.
func (r RunInfo) Started() time.Time { return time.UnixMilli(int64(r.StartedMS)) }

// Ended returns EndedMS as a time, or the zero time while running.
func (r RunInfo) Ended() time.Time {
	if r.EndedMS == nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(*r.EndedMS))
}

// Runs returns the session's retained runs, oldest first. How many are
// kept is SessionOptions.RetentionLimits.MaxRunsRetained (default 64);
// with a store, runs of earlier processes are listed too.
func (s *Session) Runs(ctx context.Context) ([]RunInfo, error) {
	var res struct {
		Runs []RunInfo `json:"runs"`
	}
	if err := s.rt.call(ctx, "session/runs", map[string]string{"sessionId": s.id}, &res); err != nil {
		return nil, err
	}
	return res.Runs, nil
}
