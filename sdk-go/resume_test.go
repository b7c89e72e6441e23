package code

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Loop checkpoints, resume, passivation and injected events against the
// real bridge.

// threeBashRounds appends one line per round to tools.log, then answers.
var threeBashRounds = script(
	toolTurn("bash", `command = "echo r1 >> tools.log"`),
	toolTurn("bash", `command = "echo r2 >> tools.log"`),
	toolTurn("bash", `command = "echo r3 >> tools.log"`),
	textTurn("Done."),
)

func TestBridgeResumeRunAfterTheBridgeIsKilled(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	dir, store := t.TempDir(), t.TempDir()
	const id = "session-of-the-crash"

	// Node A runs until the third model call, which its guard holds, and
	// dies there: rounds 1 and 2 are settled and checkpointed.
	agentA := newAgent(t, threeBashRounds)
	sA := openSession(t, agentA, dir, &SessionOptions{SessionID: id, FileSessionStoreDir: store})
	guard := newNthGuard(3)
	must(t, sA.SetBudgetGuard(ctx, guard.handlers()))
	runErr := make(chan error, 1)
	go func() { _, err := sA.Run(ctx, "Run the three rounds."); runErr <- err }()
	guard.waitEntered(t)
	runs, err := sA.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].Status != RunRunning || runs[0].EndedMS != nil {
		t.Fatalf("running: %+v, %v", runs, err)
	}
	runID := runs[0].ID
	must(t, syscall.Kill(agentA.Runtime().pid(), syscall.SIGKILL))
	if err := <-runErr; !errors.Is(err, ErrBridgeExited) {
		t.Fatalf("run on the killed bridge: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "tools.log")); got != "r1\nr2\n" {
		t.Fatalf("tools.log before resuming: %q", got)
	}

	// Node B, another process, resumes the run from the store.
	agentB := newAgent(t, threeBashRounds)
	sB := openSession(t, agentB, dir, &SessionOptions{SessionID: id, FileSessionStoreDir: store})
	resumed, err := sB.ResumeRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "tools.log")); got != "r1\nr2\nr3\n" {
		t.Fatalf("tools.log: %q, want each round exactly once", got)
	}

	// The same prompt without interruption, elsewhere, for comparison.
	plainDir := t.TempDir()
	plain, err := openSession(t, agentB, plainDir, nil).Run(ctx, "Run the three rounds.")
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Text != plain.Text || resumed.Text != "Done." || resumed.ToolCallsCount != plain.ToolCallsCount || resumed.RunID == runID {
		t.Fatalf("resumed %+v, uninterrupted %+v", resumed, plain)
	}
	if got := readFile(t, filepath.Join(plainDir, "tools.log")); got != "r1\nr2\nr3\n" {
		t.Fatalf("uninterrupted tools.log: %q", got)
	}
	// A resumed run is a new run of the session.
	runs, err = sB.Runs(ctx)
	if err != nil || len(runs) == 0 || runs[len(runs)-1].ID != resumed.RunID || runs[len(runs)-1].Status != RunCompleted {
		t.Fatalf("runs after resuming: %+v, %v", runs, err)
	}
}

func TestBridgeResumeRunErrorsAreTheSeedErrors(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	agent := newAgent(t, readThenAnswer)

	_, err := openSession(t, agent, workspace(t), nil).ResumeRun(ctx, "run-id-from-node-a")
	if !errors.Is(err, ErrNoSessionStore) || err.Error() != "resume_run requires a session_store on this session" {
		t.Fatalf("without a store: %v", err)
	}

	s := openSession(t, agent, workspace(t), &SessionOptions{FileSessionStoreDir: t.TempDir()})
	_, err = s.ResumeRun(ctx, "never-ran")
	var e *Error
	if !errors.Is(err, ErrCheckpointNotFound) || !errors.As(err, &e) ||
		err.Error() != "no loop checkpoint found for run 'never-ran'" || e.RunID() != "never-ran" {
		t.Fatalf("without a checkpoint: %v", err)
	}
}

// lsThenAnswer lists the workspace, then answers.
var lsThenAnswer = script(toolTurn("ls", `path = "."`), textTurn("Listed after resuming."))

// passivateAfterFirstRound streams a prompt on s (lsThenAnswer), passivates
// the session while its first model call is held, and returns the events,
// the run id Passivate gave and the stream's error.
func passivateAfterFirstRound(t *testing.T, s *Session, reason string, deadline time.Time) ([]Event, string, error) {
	t.Helper()
	ctx := context.Background()
	guard := newNthGuard(1)
	must(t, s.SetBudgetGuard(ctx, guard.handlers()))
	defer s.SetBudgetGuard(ctx, nil)
	st, err := s.Stream(ctx, "List the workspace.")
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{})
	collected := make(chan []Event, 1)
	go func() {
		var events []Event
		for ev := range st.Events() {
			events = append(events, ev)
			if ev.Type == EventPassivationRequested {
				close(asked)
			}
		}
		collected <- events
	}()
	guard.waitEntered(t)
	type passivated struct {
		id  *string
		err error
	}
	done := make(chan passivated, 1)
	go func() {
		id, err := s.Passivate(ctx, reason, deadline)
		done <- passivated{id, err}
	}()
	<-asked // the run knows; let it reach the end of its round
	close(guard.release)
	p := <-done
	if p.err != nil || p.id == nil {
		t.Fatalf("Passivate: %v, %v", p.id, p.err)
	}
	_, streamErr := st.Wait()
	return <-collected, *p.id, streamErr
}

func TestBridgePassivateStopsTheRunAtASafePoint(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	agent := newAgent(t, lsThenAnswer)
	s := openSession(t, agent, workspace(t), &SessionOptions{FileSessionStoreDir: t.TempDir()})

	if id, err := s.Passivate(ctx, "idle", time.Time{}); err != nil || id != nil {
		t.Fatalf("nothing running: %v, %v", id, err)
	}

	deadline := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	events, runID, err := passivateAfterFirstRound(t, s, "draining node-a", deadline)
	var e *Error
	if !errors.Is(err, ErrPassivated) || !errors.As(err, &e) || e.RunID() != runID {
		t.Fatalf("the run: %v, want ErrPassivated for %s", err, runID)
	}
	var req PassivationRequested
	if !firstEvent(t, events, EventPassivationRequested, &req) || req.Reason != "draining node-a" || !req.Deadline().Equal(deadline) {
		t.Fatalf("passivation_requested: %+v", req)
	}
	if firstEvent(t, events, EventTextDelta, nil) || !firstEvent(t, events, EventToolEnd, nil) {
		t.Fatalf("the run should stop after its tool round: %v", eventTypes(events))
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != runID || runs[0].Status != RunPassivated {
		t.Fatalf("runs: %+v, %v", runs, err)
	}

	// Its checkpoint stands: the run can go on (here, in the same session).
	res, err := s.ResumeRun(ctx, runID)
	if err != nil || res.Text != "Listed after resuming." || res.ToolCallsCount != 1 {
		t.Fatalf("resumed: %+v, %v", res, err)
	}
}

func TestBridgeInjectedEventsReachTheStream(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	_, s := realSession(t, nil)
	peer := PeerInvocationEvent("session-b", "tenant-b", "trace-42")
	if delivered, err := s.InjectEvent(ctx, peer); err != nil || delivered {
		t.Fatalf("nothing running: %v, %v", delivered, err)
	}

	guard := newNthGuard(1)
	must(t, s.SetBudgetGuard(ctx, guard.handlers()))
	st, err := s.Stream(ctx, "hi")
	if err != nil {
		t.Fatal(err)
	}
	guard.waitEntered(t)
	delivered, err := s.InjectEvent(ctx, peer)
	if err != nil || !delivered {
		t.Fatalf("InjectEvent: %v, %v", delivered, err)
	}
	notice := PassivationRequestedEvent("heads-up only", time.Time{})
	if delivered, err := s.InjectEvent(ctx, notice); err != nil || !delivered {
		t.Fatalf("InjectEvent(passivation_requested): %v, %v", delivered, err)
	}
	if _, err := s.InjectEvent(ctx, Event{Type: EventTextDelta, Payload: []byte(`{"text":"forged"}`)}); !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("injecting text_delta: %v", err)
	}
	close(guard.release)

	var events []Event
	for ev := range st.Events() {
		events = append(events, ev)
	}
	res, err := st.Wait()
	if err != nil || res.Text != "The README says hello." {
		t.Fatalf("an injected notice does not stop the run: %+v, %v", res, err)
	}
	var got PeerInvocation
	if !firstEvent(t, events, EventPeerInvocation, &got) {
		t.Fatalf("no peer_invocation: %v", eventTypes(events))
	}
	if got.FromSessionID != "session-b" || str(got.FromTenantID) != "tenant-b" || str(got.CorrelationID) != "trace-42" {
		t.Fatalf("peer_invocation: %+v", got)
	}
	var p PassivationRequested
	if !firstEvent(t, events, EventPassivationRequested, &p) || p.Reason != "heads-up only" || p.DeadlineMS != nil {
		t.Fatalf("passivation_requested: %+v", p)
	}
	for _, ev := range events {
		if ev.Type == EventPeerInvocation && ev.Metadata.RunID != res.RunID {
			t.Fatalf("injected event metadata: %+v", ev.Metadata)
		}
	}
}
