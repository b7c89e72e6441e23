package code

import "encoding/json"

// Event types the bridge emits (the runtime's stable snake_case tags).
// New types may appear: a Stream delivers every event, unknown types
// included, as it came; nothing is ever dropped for its type. Decode
// reads a payload into the matching struct of eventpayloads.go.
const (
	EventAgentStart         = "agent_start"
	EventTurnStart          = "turn_start"
	EventTextDelta          = "text_delta"
	EventToolStart          = "tool_start"
	EventToolEnd            = "tool_end"
	EventTurnEnd            = "turn_end"
	EventAgentEnd           = "agent_end"
	EventError              = "error"
	EventBudgetThresholdHit = "budget_threshold_hit"

	// Permissions (seed 004): the policy or the host refused a call; a call
	// waits for ConfirmPermission; its answer; nobody answered in time.
	EventPermissionDenied     = "permission_denied"
	EventConfirmationRequired = "confirmation_required"
	EventConfirmationReceived = "confirmation_received"
	EventConfirmationTimeout  = "confirmation_timeout"
	// EventContextCompacted: older turns were summarised to fit the context.
	EventContextCompacted = "context_compacted"

	// Cluster events (seed 000). The runtime emits passivation_requested
	// when Session.Passivate is called; both may also be injected by the
	// host with Session.InjectEvent.
	EventPassivationRequested = "passivation_requested"
	EventPeerInvocation       = "peer_invocation"
)

// Event is one event of a run, as the bridge sent it.
type Event struct {
	Version int    `json:"version"`
	Type    string `json:"type"`
	// Payload is the event's fields with the runtime's snake_case names,
	// e.g. {"text":"Hello"} for text_delta or
	// {"tool_call_id":…,"tool_name":"read","arguments":{…}} for tool_start.
	Payload  json.RawMessage `json:"payload"`
	Metadata EventMetadata   `json:"metadata"`

	// Convenience copies of the payload keys text, tool_name, tool_call_id
	// and error when they are strings; empty otherwise.
	Text       string `json:"-"`
	ToolName   string `json:"-"`
	ToolCallID string `json:"-"`
	Error      string `json:"-"`
}

// EventMetadata locates an event in its run.
type EventMetadata struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	// Seq counts the run's events (not the stream's notifications).
	Seq         uint64 `json:"seq"`
	TimestampMS uint64 `json:"timestampMs"`
}

// fillConvenience copies the payload keys text, tool_name, tool_call_id
// and error into the event. It reads leniently: a key of another type is
// simply not copied, so a new or changed event never fails the stream.
func (ev *Event) fillConvenience() {
	if len(ev.Payload) == 0 || ev.Payload[0] != '{' {
		return
	}
	var f struct {
		Text       string `json:"text"`
		ToolName   string `json:"tool_name"`
		ToolCallID string `json:"tool_call_id"`
		Error      string `json:"error"`
	}
	// On a type mismatch Unmarshal still fills the other fields and
	// reports only the first mismatch, which is exactly the leniency
	// wanted here.
	_ = json.Unmarshal(ev.Payload, &f)
	ev.Text, ev.ToolName, ev.ToolCallID, ev.Error = f.Text, f.ToolName, f.ToolCallID, f.Error
}

// decodeEvent parses an event and fills the convenience fields.
func decodeEvent(raw json.RawMessage) (Event, error) {
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return Event{}, err
	}
	ev.fillConvenience()
	return ev, nil
}
