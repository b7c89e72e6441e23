package code

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tests of the runtime against the fake bridge (fakebridge_test.go).

func startFake(t *testing.T, args ...string) *Runtime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rt, err := NewRuntime(ctx, fakeBridgeOptions(args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func TestFakeRoundTripAndCleanClose(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t)
	var got map[string]string
	if err := rt.conn.call(context.Background(), "test/echo", map[string]string{"hello": "world"}, &got); err != nil {
		t.Fatal(err)
	}
	if got["hello"] != "world" {
		t.Fatalf("echo: %v", got)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := rt.call(context.Background(), "test/echo", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v, want ErrClosed", err)
	}
}

func TestFakeBridgeDyingAtStartFailsNewRuntimeWithItsStderr(t *testing.T) {
	checkNoLeaks(t)
	_, err := NewRuntime(context.Background(), fakeBridgeOptions("-die-at-start")...)
	var exited *BridgeExitedError
	if !errors.As(err, &exited) || exited.ExitCode != 2 || !strings.Contains(err.Error(), "cannot bind the runtime") {
		t.Fatalf("got %v, want *BridgeExitedError with the stderr message", err)
	}
}

func TestFakeCrashFailsPendingAndLaterCallsWithStderr(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t)
	pending := make(chan error, 1)
	go func() { pending <- rt.conn.call(context.Background(), "test/hang", nil, nil) }()
	time.Sleep(50 * time.Millisecond) // let the hang request reach the bridge

	err := rt.conn.call(context.Background(), "test/die", nil, nil)
	var exited *BridgeExitedError
	if !errors.As(err, &exited) || exited.ExitCode != 3 || !strings.Contains(exited.Stderr, "fatal: boom") {
		t.Fatalf("crash: got %v", err)
	}
	select {
	case err := <-pending:
		if !errors.Is(err, ErrBridgeExited) || !strings.Contains(err.Error(), "fatal: boom") {
			t.Fatalf("pending call: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pending call did not fail when the bridge died")
	}
	if err := rt.conn.call(context.Background(), "test/echo", nil, nil); !errors.Is(err, ErrBridgeExited) {
		t.Fatalf("later call: %v", err)
	}
}

func TestFakeExitIsSeenEvenWhenAGrandchildHoldsThePipes(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t)
	start := time.Now()
	err := rt.conn.call(context.Background(), "test/die-with-grandchild", nil, nil)
	var exited *BridgeExitedError
	if !errors.As(err, &exited) || exited.ExitCode != 3 {
		t.Fatalf("got %v", err)
	}
	var pid int
	if i := strings.Index(exited.Stderr, "grandchild "); i >= 0 {
		fmt.Sscanf(exited.Stderr[i:], "grandchild %d", &pid)
	}
	if pid == 0 {
		t.Fatalf("no grandchild pid in stderr %q", exited.Stderr)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("exit noticed after %v", d)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestFakeContextCancelSendsCancelRequest(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.conn.call(ctx, "test/hang", nil, nil) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCancelled) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	var cancelled []int64
	if err := rt.conn.call(context.Background(), "test/cancelled", nil, &cancelled); err != nil {
		t.Fatal(err)
	}
	if len(cancelled) != 1 || cancelled[0] != 2 { // id 1 was initialize
		t.Fatalf("bridge saw $/cancelRequest for %v, want [2]", cancelled)
	}
}

func TestFakeOversizedLineIsSkipped(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t, "-max-line", "4096")
	var got string
	if err := rt.conn.call(context.Background(), "test/oversized", nil, &got); err != nil || got != "after" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestFakeOversizedRequestFailsAtOnce(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t, "-max-line", "4096")
	err := rt.conn.call(context.Background(), "test/echo", map[string]string{"big": strings.Repeat("x", 5000)}, nil)
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("got %v, want ErrLineTooLong", err)
	}
	if err := rt.conn.call(context.Background(), "test/echo", nil, nil); err != nil {
		t.Fatalf("next call: %v", err)
	}
}

func fakeSession(rt *Runtime) *Session { return &Session{rt: rt, id: "s"} }

func TestFakeStreamDeliversEverythingInOrderWithinTheWindow(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t, "-window", "4")
	st, err := fakeSession(rt).Stream(context.Background(), `{"count":100}`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev := range st.Events() {
		if ev.Text != fmt.Sprint(n) {
			t.Fatalf("event %d has text %q", n, ev.Text)
		}
		n++
		if n%10 == 0 {
			time.Sleep(time.Millisecond) // a consumer slower than the bridge
		}
	}
	res, err := st.Wait()
	if err != nil || res.Text != "streamed" || n != 100 {
		t.Fatalf("got %d events, %+v, %v", n, res, err)
	}
}

func TestFakeStreamWaitWithoutEventsDoesNotDeadlock(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t, "-window", "4")
	st, err := fakeSession(rt).Stream(context.Background(), `{"count":50}`)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Wait()
	if err != nil || res.Text != "streamed" {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestFakeStreamOverflowFailsOnlyThatStream(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t, "-window", "4")
	st, err := fakeSession(rt).Stream(context.Background(), `{"count":50,"ignoreWindow":true}`)
	if err != nil {
		t.Fatal(err)
	}
	events := st.Events() // a consumer that does not read yet
	if _, err := st.Wait(); !errors.Is(err, errStreamOverflow) {
		t.Fatalf("got %v, want overflow", err)
	}
	for range events { // closes without blocking
	}
	if err := rt.conn.call(context.Background(), "test/echo", nil, nil); err != nil {
		t.Fatalf("connection unusable after a stream overflow: %v", err)
	}
}

func TestFakeStreamCancelClosesEvents(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t, "-window", "4")
	ctx, cancel := context.WithCancel(context.Background())
	st, err := fakeSession(rt).Stream(ctx, `{"count":1000}`)
	if err != nil {
		t.Fatal(err)
	}
	<-st.Events()
	cancel()
	for range st.Events() {
	}
	if _, err := st.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// reverse makes the fake bridge send method with params and returns the
// host's raw answer.
func reverse(t *testing.T, rt *Runtime, method string, params any, cancelAfterMs int) wireMessage {
	t.Helper()
	var answer wireMessage
	err := rt.conn.call(context.Background(), "test/reverse",
		map[string]any{"method": method, "params": params, "cancelAfterMs": cancelAfterMs}, &answer)
	if err != nil {
		t.Fatal(err)
	}
	return answer
}

func TestFakeReverseRequests(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t)
	params := map[string]any{"sessionId": "s", "estimatedTokens": 10, "timeoutMs": 5000}

	if a := reverse(t, rt, methodCheckBeforeLLM, params, 0); a.Error == nil || a.Error.Code != CodeMethodNotFound {
		t.Fatalf("no handler: %+v", a)
	}
	rt.setGuard("s", &BudgetGuardHandlers{
		CheckBeforeLLM: func(_ context.Context, c BudgetLLMContext) (*BudgetDecision, error) {
			if c.EstimatedTokens > 100 {
				return &BudgetDecision{Decision: "deny", Resource: "tokens", Reason: "cap"}, nil
			}
			return nil, nil
		},
		CheckBeforeTool: func(context.Context, BudgetToolContext) (*BudgetDecision, error) { panic("bug in host") },
	})
	if a := reverse(t, rt, methodCheckBeforeLLM, params, 0); a.Error != nil || string(a.Result) != "null" {
		t.Fatalf("allow: got %+v (result %s), want result null", a, a.Result)
	}
	params["estimatedTokens"] = 1000
	a := reverse(t, rt, methodCheckBeforeLLM, params, 0)
	if a.Error != nil || string(a.Result) != `{"decision":"deny","resource":"tokens","reason":"cap"}` {
		t.Fatalf("deny: got result %s", a.Result)
	}
	a = reverse(t, rt, methodCheckBeforeTool, map[string]any{"sessionId": "s", "toolName": "read", "timeoutMs": 5000}, 0)
	if a.Error == nil || a.Error.Code != CodeInternalError || !strings.Contains(a.Error.Message, "bug in host") {
		t.Fatalf("panic: got %+v", a)
	}
	if a := reverse(t, rt, methodRecordAfterLLM, params, 0); a.Error == nil || a.Error.Code != CodeMethodNotFound {
		t.Fatalf("unset handler: %+v", a)
	}
	if a := reverse(t, rt, "host/unknown", params, 0); a.Error == nil || a.Error.Code != CodeMethodNotFound {
		t.Fatalf("unknown method: %+v", a)
	}
}

func TestFakeReverseHandlerContext(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t)
	ctxErr := make(chan error, 1)
	rt.setGuard("s", &BudgetGuardHandlers{
		CheckBeforeLLM: func(ctx context.Context, _ BudgetLLMContext) (*BudgetDecision, error) {
			<-ctx.Done()
			ctxErr <- ctx.Err()
			return nil, ctx.Err()
		},
	})
	// The bridge withdraws the request: the handler's context is
	// cancelled, and the host does not answer what was withdrawn.
	a := reverse(t, rt, methodCheckBeforeLLM, map[string]any{"sessionId": "s", "timeoutMs": 60000}, 50)
	if err := <-ctxErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("withdrawn: ctx.Err() = %v", err)
	}
	if a.JSONRPC != "" {
		t.Fatalf("withdrawn: the host answered %+v", a)
	}
	// timeoutMs is the handler's deadline; past it the bridge has given
	// up, and an answer could only race its timer, so none is sent.
	start := time.Now()
	a = reverse(t, rt, methodCheckBeforeLLM, map[string]any{"sessionId": "s", "timeoutMs": 100}, 0)
	if err := <-ctxErr; !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("deadline: ctx.Err() = %v after %v", err, time.Since(start))
	}
	if a.JSONRPC != "" {
		t.Fatalf("deadline: the host answered %+v", a)
	}
}

func TestFakeReverseHandlersAreBounded(t *testing.T) {
	checkNoLeaks(t)
	rt := startFake(t)
	release := make(chan struct{})
	var running sync.WaitGroup
	running.Add(maxConcurrentHandlers)
	rt.setGuard("s", &BudgetGuardHandlers{
		CheckBeforeLLM: func(ctx context.Context, _ BudgetLLMContext) (*BudgetDecision, error) {
			running.Done()
			<-release
			return nil, nil
		},
	})
	params := map[string]any{"sessionId": "s", "timeoutMs": 60000}
	var all sync.WaitGroup
	for i := 0; i < maxConcurrentHandlers; i++ {
		all.Add(1)
		go func() { defer all.Done(); reverse(t, rt, methodCheckBeforeLLM, params, 0) }()
	}
	running.Wait()
	if a := reverse(t, rt, methodCheckBeforeLLM, params, 0); a.Error == nil || a.Error.Code != CodeOverloaded {
		t.Fatalf("handler %d: got %+v, want OVERLOADED", maxConcurrentHandlers+1, a)
	}
	close(release)
	all.Wait()
}

func TestFakeStubbornBridgeIsKilledAndReported(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	rt, err := NewRuntime(ctx, append(fakeBridgeOptions("-stubborn"),
		WithCloseTimeouts(200*time.Millisecond, 200*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	pid := rt.pid()
	err = rt.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Fatalf("Close: %v, want a report that SIGKILL was needed", err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("bridge %d still alive after Close", pid)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFakeStderrIsCopied(t *testing.T) {
	checkNoLeaks(t)
	var buf syncBuffer
	rt, err := NewRuntime(context.Background(), append(fakeBridgeOptions(), WithStderr(&buf))...)
	if err != nil {
		t.Fatal(err)
	}
	rt.Close(context.Background())
	if !strings.Contains(buf.String(), "fake bridge: started") {
		t.Fatalf("stderr copy: %q", buf.String())
	}
}
