package code

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Tests against the real a3s-code-bridge (see main_test.go for how it is
// found), driving the offline scripted model.

// readThenAnswer is the scripted model of most tests: turn 0 reads
// README.md, turn 1 answers.
const readThenAnswer = `
default_model = "offline/demo"
providers "offline" {
  kind = "scripted"
  models "demo" {
    turn {
      tool_call {
        name = "read"
        arguments = { file_path = "README.md" }
      }
    }
    turn { text = "The README says hello." }
  }
}
`

// workspace returns a directory holding README.md.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// realSession starts a bridge with the scripted agent and opens a session.
func realSession(t *testing.T, opts *SessionOptions, extra ...Option) (*Agent, *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	agent, err := Create(ctx, readThenAnswer, append([]Option{WithBridgePath(requireBridge(t))}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := agent.Close(context.Background()); err != nil {
			t.Errorf("agent.Close: %v", err)
		}
	})
	session, err := agent.Session(ctx, workspace(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return agent, session
}

func TestBridgeRunReturnsTheAnswer(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	res, err := session.Run(context.Background(), "What does the README say?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "The README says hello." || res.ToolCallsCount != 1 || res.RunID == "" || res.Usage.TotalTokens == 0 {
		t.Fatalf("got %+v", res)
	}
	if err := session.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := session.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestBridgeStreamDeliversEventsInOrder(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	st, err := session.Stream(context.Background(), "What does the README say?")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var text strings.Builder
	var lastSeq uint64
	for ev := range st.Events() {
		if n := len(types); n == 0 || types[n-1] != ev.Type || ev.Type != EventTextDelta {
			types = append(types, ev.Type) // text deltas collapse into one entry
		}
		if ev.Type == EventTextDelta {
			text.WriteString(ev.Text)
		}
		if ev.Type == EventToolStart && (ev.ToolName != "read" || ev.ToolCallID == "") {
			t.Errorf("tool_start: %+v", ev)
		}
		if ev.Metadata.SessionID != session.SessionID() || ev.Metadata.RunID == "" {
			t.Errorf("metadata: %+v", ev.Metadata)
		}
		if len(types) > 1 && ev.Metadata.Seq <= lastSeq {
			t.Errorf("metadata.seq went from %d to %d", lastSeq, ev.Metadata.Seq)
		}
		lastSeq = ev.Metadata.Seq
	}
	res, err := st.Wait()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{EventAgentStart, EventTurnStart, EventToolStart, EventToolEnd, EventTurnEnd,
		EventTurnStart, EventTextDelta, EventTurnEnd, EventAgentEnd}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Fatalf("events:\n got %v\nwant %v", types, want)
	}
	if text.String() != res.Text || res.Text != "The README says hello." {
		t.Fatalf("deltas %q, result %q", text.String(), res.Text)
	}
}

// blockingGuard holds every run at its first model call until the
// handler's context ends or release is closed.
type blockingGuard struct {
	entered  chan struct{}
	release  chan struct{}
	ctxErr   chan error
	onceOpen sync.Once
}

func newBlockingGuard() *blockingGuard {
	return &blockingGuard{entered: make(chan struct{}), release: make(chan struct{}), ctxErr: make(chan error, 16)}
}

func (g *blockingGuard) handlers() *BudgetGuardHandlers {
	return &BudgetGuardHandlers{
		Timeout: 30 * time.Second,
		CheckBeforeLLM: func(ctx context.Context, _ BudgetLLMContext) (*BudgetDecision, error) {
			g.onceOpen.Do(func() { close(g.entered) })
			select {
			case <-ctx.Done():
				g.ctxErr <- ctx.Err()
				return nil, ctx.Err()
			case <-g.release:
				return nil, nil
			}
		},
	}
}

func TestBridgeContextCancelStopsTheRunAndSessionStaysUsable(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	g := newBlockingGuard()
	defer close(g.release)
	if err := session.SetBudgetGuard(context.Background(), g.handlers()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := session.Run(ctx, "hold"); done <- err }()
	<-g.entered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCancelled) {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// The bridge stops the run, which withdraws its pending budget check:
	// the handler's context must end long before its 30s deadline.
	select {
	case err := <-g.ctxErr:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("handler context ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the bridge did not withdraw the budget check of the cancelled run")
	}

	if err := session.SetBudgetGuard(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	res, err := session.Run(context.Background(), "again")
	if err != nil || res.Text != "The README says hello." {
		t.Fatalf("after cancel: %+v, %v", res, err)
	}
}

func TestBridgeSecondRunOnABusySessionFails(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	g := newBlockingGuard()
	if err := session.SetBudgetGuard(context.Background(), g.handlers()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := session.Run(context.Background(), "first"); done <- err }()
	<-g.entered
	_, err := session.Run(context.Background(), "second")
	close(g.release)
	if !errors.Is(err, ErrSessionBusy) {
		t.Fatalf("second run: %v, want ErrSessionBusy", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("first run: %v", err)
	}
}

func TestBridgeKilledFailsPendingCallWithStderr(t *testing.T) {
	checkNoLeaks(t)
	t.Setenv("A3S_LOG", "debug") // so the bridge has something on stderr
	agent, session := realSession(t, nil)
	g := newBlockingGuard()
	defer close(g.release)
	if err := session.SetBudgetGuard(context.Background(), g.handlers()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := session.Run(context.Background(), "hold"); done <- err }()
	<-g.entered
	if err := syscall.Kill(agent.Runtime().pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var exited *BridgeExitedError
		if !errors.As(err, &exited) || !errors.Is(err, ErrBridgeExited) {
			t.Fatalf("Run: %v, want *BridgeExitedError", err)
		}
		if exited.Signal != "killed" || strings.TrimSpace(exited.Stderr) == "" {
			t.Fatalf("exit: signal %q, stderr %q", exited.Signal, exited.Stderr)
		}
		if !strings.Contains(err.Error(), strings.TrimSpace(exited.Stderr)[:20]) {
			t.Fatalf("message lacks the stderr tail: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pending Run did not fail when the bridge was killed")
	}
	if _, err := session.Run(context.Background(), "later"); !errors.Is(err, ErrBridgeExited) {
		t.Fatalf("call after the crash: %v", err)
	}
}

func TestBridgeBudgetDenyAndClear(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	ctx := context.Background()
	deny := &BudgetGuardHandlers{
		CheckBeforeLLM: func(context.Context, BudgetLLMContext) (*BudgetDecision, error) {
			return &BudgetDecision{Decision: "deny", Resource: "tokens", Reason: "monthly cap reached"}, nil
		},
	}
	if err := session.SetBudgetGuard(ctx, deny); err != nil {
		t.Fatal(err)
	}
	_, err := session.Run(ctx, "hi")
	if !errors.Is(err, ErrBudgetExhausted) || err.Error() != "Budget exhausted on 'tokens': monthly cap reached" {
		t.Fatalf("Run: %v", err)
	}

	// The stream shows why: a hard threshold hit, then the error event.
	st, err := session.Stream(ctx, "hi")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for ev := range st.Events() {
		types = append(types, ev.Type)
	}
	if _, err := st.Wait(); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("Stream: %v", err)
	}
	if got := strings.Join(types, ","); !strings.Contains(got, EventBudgetThresholdHit) || !strings.HasSuffix(got, EventError) {
		t.Fatalf("stream events: %v", types)
	}

	// Cleared: the session runs again, and usage was never recorded.
	if err := session.SetBudgetGuard(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := session.Run(ctx, "hi"); err != nil || res.Text == "" {
		t.Fatalf("after clearing: %+v, %v", res, err)
	}
}

func TestBridgePanickingHandlerDenies(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	err := session.SetBudgetGuard(context.Background(), &BudgetGuardHandlers{
		CheckBeforeLLM: func(context.Context, BudgetLLMContext) (*BudgetDecision, error) { panic("guard bug") },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = session.Run(context.Background(), "hi")
	if !errors.Is(err, ErrBudgetExhausted) || !strings.Contains(err.Error(), "budget_guard") {
		t.Fatalf("Run: %v, want a budget_guard denial", err)
	}
}

func TestBridgeRecordAndToolGuards(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	var recorded, total atomic.Int64
	var tools sync.Map
	err := session.SetBudgetGuard(context.Background(), &BudgetGuardHandlers{
		RecordAfterLLM: func(_ context.Context, u BudgetUsageContext) error {
			recorded.Add(1)
			total.Add(int64(u.Usage.TotalTokens))
			return nil
		},
		CheckBeforeTool: func(_ context.Context, c BudgetToolContext) (*BudgetDecision, error) {
			tools.Store(c.ToolName, true)
			return &BudgetDecision{Decision: "deny", Resource: "tools", Reason: "no reading"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := session.Stream(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	var toolEnd Event
	for ev := range st.Events() {
		if ev.Type == EventToolEnd {
			toolEnd = ev
		}
	}
	res, err := st.Wait()
	if err != nil {
		t.Fatalf("a denied tool is a tool error, not a failed run: %v", err)
	}
	if !strings.Contains(string(toolEnd.Payload), "Budget exhausted on 'tools': no reading") {
		t.Errorf("tool_end payload: %s", toolEnd.Payload)
	}
	if _, ok := tools.Load("read"); !ok {
		t.Error("CheckBeforeTool was not asked about read")
	}
	if recorded.Load() != 2 || int(total.Load()) != res.Usage.TotalTokens {
		t.Errorf("RecordAfterLLM: %d calls, %d tokens; run used %d", recorded.Load(), total.Load(), res.Usage.TotalTokens)
	}
}

func TestBridgeSessionInfoReportsIdentityTags(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, &SessionOptions{TenantID: "tenant-example", Principal: "principal-example",
		AgentTemplateID: "agent-template-example", CorrelationID: "trace-example"})
	info, err := session.Info(context.Background())
	if errors.Is(err, ErrMethodNotFound) {
		t.Skip("bridge does not serve session/info yet")
	}
	if err != nil {
		t.Fatal(err)
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	got := []string{info.SessionID, str(info.TenantID), str(info.Principal), str(info.AgentTemplateID), str(info.CorrelationID)}
	want := []string{session.SessionID(), "tenant-example", "principal-example", "agent-template-example", "trace-example"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("info: got %v, want %v", got, want)
	}
}

func TestBridgeDeterministicIDsAndTime(t *testing.T) {
	checkNoLeaks(t)
	prefix, fixed := "replay", uint64(1_700_000_000_000)
	_, session := realSession(t, &SessionOptions{HostEnv: &HostEnvConfig{SequentialIDPrefix: &prefix, FixedTimeMS: &fixed}})
	if !strings.HasPrefix(session.SessionID(), "replay-") {
		t.Fatalf("session id %q lacks the prefix", session.SessionID())
	}
	st, err := session.Stream(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	for ev := range st.Events() {
		if ev.Metadata.TimestampMS != fixed || !strings.HasPrefix(ev.Metadata.RunID, "replay-") {
			t.Fatalf("event not deterministic: %+v", ev.Metadata)
		}
	}
	if _, err := st.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestBridgeOneRuntimeServesManyAgentsAndSessions(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	rt, err := NewRuntime(ctx, WithBridgePath(requireBridge(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	dir := workspace(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 2; i++ {
		agent, err := Create(ctx, readThenAnswer, WithRuntime(rt))
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 4; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := agent.Session(ctx, dir, nil)
				if err == nil {
					var res *RunResult
					res, err = s.Run(ctx, "hi")
					if err == nil && res.Text != "The README says hello." {
						err = errors.New("wrong text " + res.Text)
					}
					s.Close(ctx)
				}
				errs <- err
			}()
		}
		defer agent.Close(ctx) // leaves rt running
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestBridgeBadConfigIsErrConfig(t *testing.T) {
	checkNoLeaks(t)
	_, err := Create(context.Background(), "no-such-file.acl", WithBridgePath(requireBridge(t)))
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v, want ErrConfig", err)
	}
}
