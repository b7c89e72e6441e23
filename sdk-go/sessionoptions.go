package code

import "time"

// SessionOptions configure a new session. Every field is optional: the
// zero value leaves the agent configuration's value or the bridge default.
type SessionOptions struct {
	// Model is "provider/model", overriding the configuration's default.
	Model        string
	SystemPrompt string
	// MaxToolRounds bounds the tool rounds of one run (bridge default 25).
	MaxToolRounds int
	// SessionID fixes the session's id instead of a generated one. With
	// FileSessionStoreDir, a session stored under this id is continued:
	// its history, runs and identity tags come back (seed 000).
	SessionID string
	// HostEnv makes ids and timestamps deterministic, for replay.
	HostEnv *HostEnvConfig

	// Identity tags: opaque to the runtime, kept with the session and
	// restored with it. When a stored session is continued, the tags given
	// here take precedence over the stored ones (to relabel a moved
	// session); empty ones keep what was stored.
	TenantID        string
	Principal       string
	AgentTemplateID string
	CorrelationID   string

	// FileSessionStoreDir persists the session, its runs and the loop
	// checkpoints of its runs as JSON files in this directory (resolved
	// by the bridge, which shares this process's working directory), so
	// another process can continue the session or resume a run.
	FileSessionStoreDir string

	// RetentionLimits caps what a long-running session keeps in memory;
	// nil keeps the defaults (see RetentionLimits).
	RetentionLimits *RetentionLimits

	// PermissionPolicy decides which tool calls run. nil lets every call
	// run (and offers every tool to the model).
	PermissionPolicy *PermissionPolicy
	// ConfirmPermission answers the calls PermissionPolicy sends to "ask".
	// nil (or no policy) means such calls are denied. See
	// PermissionHandler for its contract.
	ConfirmPermission PermissionHandler
	// ConfirmationTimeout bounds each ConfirmPermission call (bridge
	// default 60s). Past it the call is denied with a
	// confirmation_timeout event and the handler's context ends.
	ConfirmationTimeout time.Duration
}

// HostEnvConfig replaces the session's id generator and clock. The two are
// independent; a nil field keeps the system default.
type HostEnvConfig struct {
	// SequentialIDPrefix yields ids "<prefix>-<kind>-<n>".
	SequentialIDPrefix *string
	// FixedTimeMS makes every timestamp this Unix time in milliseconds.
	FixedTimeMS *uint64
}

// RetentionLimits caps a session's in-memory stores (seed 000, "retention
// limits for long-running sessions"). A zero field keeps its default:
//
//	MaxRunsRetained           64 run records
//	MaxEventsPerRun           2,048 events per run
//	MaxEventBytesPerRun       8 MiB of events per run
//	MaxTraceEvents            8,192 trace events
//	MaxTerminalSubagentTasks  512 finished sub-agent task snapshots
//
// The caps are soft: past one, the oldest entries are dropped, never with
// an error, and running entries are never dropped. Set Unbounded only for
// sessions known to be short; it lifts every cap.
type RetentionLimits struct {
	MaxRunsRetained          int
	MaxEventsPerRun          int
	MaxEventBytesPerRun      int
	MaxTraceEvents           int
	MaxTerminalSubagentTasks int
	Unbounded                bool
}

// wire returns the options object of session/create with only the fields
// that are set, or nil when none is. ConfirmPermission stays in this
// process; the bridge asks for it through host/permission/request.
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
	if r := o.RetentionLimits.wire(); r != nil {
		m["retentionLimits"] = r
	}
	if p := o.PermissionPolicy.wire(); p != nil {
		m["permissionPolicy"] = p
	}
	if o.ConfirmationTimeout > 0 {
		m["confirmationTimeoutMs"] = ceilMillis(o.ConfirmationTimeout)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

func (r *RetentionLimits) wire() map[string]any {
	if r == nil {
		return nil
	}
	m := map[string]any{}
	put := func(key string, v int) {
		if v > 0 {
			m[key] = v
		}
	}
	put("maxRunsRetained", r.MaxRunsRetained)
	put("maxEventsPerRun", r.MaxEventsPerRun)
	put("maxEventBytesPerRun", r.MaxEventBytesPerRun)
	put("maxTraceEvents", r.MaxTraceEvents)
	put("maxTerminalSubagentTasks", r.MaxTerminalSubagentTasks)
	if r.Unbounded {
		m["unbounded"] = true
	}
	return m // {} is meaningful: "the defaults", as the caller asked
}

// ceilMillis converts a positive duration to whole milliseconds, rounding
// up so that 1ns does not become "0 = default".
func ceilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
