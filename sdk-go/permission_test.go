package code

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Permission policy and confirmation against the real bridge (seed 004).

// writeThenAnswer calls write once, then answers.
var writeThenAnswer = script(
	toolTurn("write", `file_path = "out.txt", content = "x"`),
	textTurn("Finished."),
)

// seed004Policy is the read-only policy of the seed 004 sample.
func seed004Policy() *PermissionPolicy {
	return &PermissionPolicy{
		Allow:           []string{"read*", "ls*", "glob*", "grep*", "code_*"},
		Deny:            []string{"write*", "edit*", "patch*", "bash*", "git*"},
		DefaultDecision: PermissionDeny,
	}
}

func TestBridgePermissionSeed004PolicyIsReadOnly(t *testing.T) {
	checkNoLeaks(t)
	agent := newAgent(t, writeThenAnswer)
	dir := workspace(t)
	session := openSession(t, agent, dir, &SessionOptions{PermissionPolicy: seed004Policy()})

	info, err := session.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tools := append([]string(nil), info.Tools...)
	sort.Strings(tools)
	if strings.Join(tools, ",") != "glob,grep,ls,read" {
		t.Fatalf("tools offered: %v, want only glob, grep, ls, read", info.Tools)
	}

	// The scripted model calls write although it was not offered.
	events, res, err := streamAll(t, session, "Write a file.")
	if err != nil {
		t.Fatal(err)
	}
	var denied PermissionDenied
	if !firstEvent(t, events, EventPermissionDenied, &denied) {
		t.Fatalf("no permission_denied event: %v", eventTypes(events))
	}
	if denied.ToolName != "write" || denied.ToolCallID == "" || !strings.Contains(denied.Reason, "permission denied") {
		t.Fatalf("permission_denied: %+v", denied)
	}
	var end ToolEnd
	if !firstEvent(t, events, EventToolEnd, &end) || !end.IsError || end.Output != denied.Reason {
		t.Fatalf("tool_end: %+v, want the refusal as a tool error", end)
	}
	if firstEvent(t, events, EventConfirmationRequired, nil) {
		t.Fatal("a denied call must not ask for confirmation")
	}
	if got := readFile(t, filepath.Join(dir, "out.txt")); got != "<absent>" {
		t.Fatalf("out.txt was written: %q", got)
	}
	if res.Text != "Finished." {
		t.Fatalf("run: %+v", res)
	}
}

// confirmCase is one way a host answers a confirmation.
type confirmCase struct {
	name    string
	handler PermissionHandler
	timeout time.Duration
	// approved: the write runs. Otherwise reason is part of the refusal
	// (empty for a timeout).
	approved bool
	timedOut bool
	reason   string
}

func TestBridgePermissionAskGoesToTheHost(t *testing.T) {
	checkNoLeaks(t)
	agent := newAgent(t, writeThenAnswer)

	var mu sync.Mutex
	var asked []PermissionRequest
	record := func(r PermissionRequest) {
		mu.Lock()
		asked = append(asked, r)
		mu.Unlock()
	}
	slowEnded := make(chan error, 1)
	cases := []confirmCase{
		{name: "approve", approved: true, handler: func(_ context.Context, r PermissionRequest) (PermissionDecision, error) {
			record(r)
			return PermissionDecision{Approved: true}, nil
		}},
		{name: "reject", reason: "not on a Friday", handler: func(_ context.Context, r PermissionRequest) (PermissionDecision, error) {
			record(r)
			return PermissionDecision{Reason: "not on a Friday"}, nil
		}},
		{name: "error", reason: "policy service unavailable", handler: func(context.Context, PermissionRequest) (PermissionDecision, error) {
			return PermissionDecision{Approved: true}, errors.New("policy service unavailable")
		}},
		{name: "panic", reason: "panicked: confirm bug", handler: func(context.Context, PermissionRequest) (PermissionDecision, error) {
			panic("confirm bug")
		}},
		{name: "slow", timedOut: true, timeout: 300 * time.Millisecond, handler: func(ctx context.Context, _ PermissionRequest) (PermissionDecision, error) {
			<-ctx.Done() // the bridge gives up first and withdraws the question
			slowEnded <- ctx.Err()
			return PermissionDecision{Approved: true}, nil
		}},
		{name: "no handler", reason: "no permission handler"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t)
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			session := openSession(t, agent, dir, &SessionOptions{
				PermissionPolicy:    &PermissionPolicy{Allow: []string{"read*"}, Ask: []string{"write*"}, DefaultDecision: PermissionDeny},
				ConfirmPermission:   tc.handler,
				ConfirmationTimeout: timeout,
			})
			defer session.Close(context.Background())
			events, res, err := streamAll(t, session, "Write a file.")
			if err != nil || res.Text != "Finished." {
				t.Fatalf("a refused call is a tool error, not a failed run: %+v, %v", res, err)
			}
			checkConfirmation(t, tc, events, timeout, readFile(t, filepath.Join(dir, "out.txt")))
		})
	}

	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("handlers saw %d requests, want 2", len(asked))
	}
	r := asked[0]
	var args struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(r.Arguments, &args); err != nil || args.FilePath != "out.txt" ||
		r.ToolName != "write" || r.ToolCallID == "" || r.SessionID == "" || r.Timeout != 10*time.Second {
		t.Fatalf("request: %+v (%s)", r, r.Arguments)
	}
	select {
	case err := <-slowEnded:
		if err == nil {
			t.Fatal("the slow handler's context did not end")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the slow handler's context did not end after the bridge gave up")
	}
}

// checkConfirmation checks the events and the file of one confirmCase.
func checkConfirmation(t *testing.T, tc confirmCase, events []Event, timeout time.Duration, file string) {
	t.Helper()
	var required ConfirmationRequired
	if !firstEvent(t, events, EventConfirmationRequired, &required) {
		t.Fatalf("no confirmation_required: %v", eventTypes(events))
	}
	if required.ToolName != "write" || required.TimeoutMS != uint64(timeout.Milliseconds()) {
		t.Fatalf("confirmation_required: %+v", required)
	}
	var received ConfirmationReceived
	gotReceived := firstEvent(t, events, EventConfirmationReceived, &received)
	var denied PermissionDenied
	gotDenied := firstEvent(t, events, EventPermissionDenied, &denied)
	switch {
	case tc.approved:
		if !gotReceived || !received.Approved || gotDenied || file != "x" {
			t.Fatalf("approved: received %+v, denied %+v, file %q", received, denied, file)
		}
	case tc.timedOut:
		var to ConfirmationTimeout
		if !firstEvent(t, events, EventConfirmationTimeout, &to) || to.TimeoutMS != uint64(timeout.Milliseconds()) {
			t.Fatalf("no confirmation_timeout: %v", eventTypes(events))
		}
		if gotReceived || !gotDenied || file != "<absent>" {
			t.Fatalf("timed out: received %v, denied %+v, file %q", gotReceived, denied, file)
		}
	default:
		if !gotReceived || received.Approved || !strings.Contains(str(received.Reason), tc.reason) {
			t.Fatalf("confirmation_received: %+v (reason %q), want a rejection mentioning %q", received, str(received.Reason), tc.reason)
		}
		if !gotDenied || !strings.Contains(denied.Reason, tc.reason) || file != "<absent>" {
			t.Fatalf("rejected: denied %+v, file %q", denied, file)
		}
	}
}

func TestBridgePermissionQuestionsGoToTheirSession(t *testing.T) {
	checkNoLeaks(t)
	agent := newAgent(t, writeThenAnswer)
	policy := &PermissionPolicy{Ask: []string{"write*"}}
	type outcome struct {
		dir  string
		seen []string
		err  error
	}
	run := func(approve bool) <-chan outcome {
		done := make(chan outcome, 1)
		dir := workspace(t)
		var mu sync.Mutex
		var seen []string
		s := openSession(t, agent, dir, &SessionOptions{PermissionPolicy: policy,
			ConfirmPermission: func(_ context.Context, r PermissionRequest) (PermissionDecision, error) {
				mu.Lock()
				seen = append(seen, r.SessionID)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // overlap with the other session
				return PermissionDecision{Approved: approve, Reason: "session policy"}, nil
			}})
		go func() {
			_, err := s.Run(context.Background(), "Write a file.")
			mu.Lock()
			defer mu.Unlock()
			done <- outcome{dir, append(seen, s.SessionID()), err}
		}()
		return done
	}
	yes, no := run(true), run(false)
	for _, c := range []struct {
		o    outcome
		file string
	}{{<-yes, "x"}, {<-no, "<absent>"}} {
		if c.o.err != nil {
			t.Fatal(c.o.err)
		}
		// The handler saw one question, about its own session.
		if len(c.o.seen) != 2 || c.o.seen[0] != c.o.seen[1] {
			t.Fatalf("questions seen: %v", c.o.seen)
		}
		if got := readFile(t, filepath.Join(c.o.dir, "out.txt")); got != c.file {
			t.Fatalf("out.txt: %q, want %q", got, c.file)
		}
	}
}
