package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Benchmarks through the real bridge, plus the floor: the same pipes and
// framing against `cat`, which echoes lines and does nothing else.
//
//	go test -run '^$' -bench . -benchtime 2s

func benchRuntime(b *testing.B) *Runtime {
	b.Helper()
	rt, err := NewRuntime(context.Background(), WithBridgePath(requireBridge(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func benchSession(b *testing.B, rt *Runtime, acl string) *Session {
	b.Helper()
	ctx := context.Background()
	agent, err := rt.CreateAgent(ctx, acl)
	if err != nil {
		b.Fatal(err)
	}
	s, err := agent.Session(ctx, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// cheapCall is the lightest request the bridge serves: session/info, or,
// on a bridge without it, an unknown method's error round trip.
func cheapCall(rt *Runtime, s *Session) func(context.Context) error {
	if rt.Serves("session/info") {
		return func(ctx context.Context) error { _, err := s.Info(ctx); return err }
	}
	return func(ctx context.Context) error {
		err := rt.conn.call(ctx, "bench/noop", nil, nil)
		if errors.Is(err, ErrMethodNotFound) {
			return nil
		}
		return err
	}
}

const textOnly = `
default_model = "offline/demo"
providers "offline" {
  kind = "scripted"
  models "demo" { turn { text = "ok" } }
}
`

func BenchmarkRoundTripSequential(b *testing.B) {
	rt := benchRuntime(b)
	call := cheapCall(rt, benchSession(b, rt, textOnly))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoundTripPipelined(b *testing.B) {
	rt := benchRuntime(b)
	call := cheapCall(rt, benchSession(b, rt, textOnly))
	ctx := context.Background()
	b.SetParallelism(16) // 16 × GOMAXPROCS goroutines share the one connection
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := call(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkStreamEvents runs a scripted answer of 5000 words, which the
// scripted model sends as 5000 text_delta events, and consumes them.
func BenchmarkStreamEvents(b *testing.B) {
	const words = 5000
	acl := strings.Replace(textOnly, `"ok"`, `"`+strings.Repeat("word ", words)+`"`, 1)
	rt := benchRuntime(b)
	agent, err := rt.CreateAgent(context.Background(), acl)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	dir := b.TempDir()
	events := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The scripted model plays turn N on a history with N answers, so
		// each run needs a fresh session.
		s, err := agent.Session(ctx, dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		st, err := s.Stream(ctx, "go")
		if err != nil {
			b.Fatal(err)
		}
		for range st.Events() {
			events++
		}
		if _, err := st.Wait(); err != nil {
			b.Fatal(err)
		}
		s.Close(ctx)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReverseRequest measures a budget check round trip: one turn of
// 50 tool calls (each asks host/budget/checkBeforeTool when guarded) and a
// final answer, with and without a guard. The difference per call is the
// reverse-request cost, reported as ns/check.
func BenchmarkReverseRequest(b *testing.B) {
	const calls = 50
	var turn strings.Builder
	for i := 0; i < calls; i++ {
		fmt.Fprintf(&turn, "tool_call {\n name = \"ls\"\n arguments = { path = \".\" }\n}\n")
	}
	acl := strings.Replace(textOnly, `models "demo" { turn { text = "ok" } }`,
		"models \"demo\" {\n turn {\n"+turn.String()+"}\n turn { text = \"ok\" }\n}", 1)
	rt := benchRuntime(b)
	agent, err := rt.CreateAgent(context.Background(), acl)
	if err != nil {
		b.Fatal(err)
	}
	allow := &BudgetGuardHandlers{
		CheckBeforeTool: func(context.Context, BudgetToolContext) (*BudgetDecision, error) { return nil, nil },
	}
	run := func(b *testing.B, guard *BudgetGuardHandlers) time.Duration {
		ctx := context.Background()
		dir := b.TempDir()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s, err := agent.Session(ctx, dir, nil)
			if err == nil && guard != nil {
				err = s.SetBudgetGuard(ctx, guard)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			res, err := s.Run(ctx, "go")
			if err != nil || res.ToolCallsCount != calls {
				b.Fatalf("%+v, %v", res, err)
			}
			b.StopTimer()
			s.Close(ctx)
			b.StartTimer()
		}
		return b.Elapsed() / time.Duration(b.N)
	}
	var plain time.Duration
	b.Run("unguarded", func(b *testing.B) { plain = run(b, nil) })
	b.Run("guarded", func(b *testing.B) {
		guarded := run(b, allow)
		b.ReportMetric(float64((guarded-plain).Nanoseconds())/calls, "ns/check")
	})
}

// BenchmarkFloorCat is the transport floor: one JSON-RPC line written to
// `cat` over the same kind of pipes, read back with the same line reader
// and decoded. No bridge can answer faster than this.
func BenchmarkFloorCat(b *testing.B) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat")
	}
	p, err := startProcess(cat, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		p.closeStdin()
		<-p.exited
		p.stdout.Close()
	}()
	lr := newLineReader(p.stdout, defaultMaxLineBytes)
	line, _ := encodeLine(outgoingRequest{JSONRPC: "2.0", ID: 1, Method: "session/info", Params: map[string]string{"sessionId": "s"}})

	b.Run("sequential", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := p.stdin.Write(line); err != nil {
				b.Fatal(err)
			}
			got, err := lr.next()
			if err != nil {
				b.Fatal(err)
			}
			var m wireMessage
			if err := json.Unmarshal(got, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pipelined", func(b *testing.B) {
		go func() {
			for i := 0; i < b.N; i++ {
				p.stdin.Write(line)
			}
		}()
		for i := 0; i < b.N; i++ {
			got, err := lr.next()
			if err != nil {
				b.Fatal(err)
			}
			var m wireMessage
			if err := json.Unmarshal(got, &m); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	})
}
