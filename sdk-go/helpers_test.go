package code

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Helpers of the tests against the real bridge that script the offline
// model turn by turn.

// script builds an inline agent configuration whose scripted model plays
// the given turns (see toolTurn and textTurn) in order: turn N is played
// when the conversation holds N assistant messages.
func script(turns ...string) string {
	var b strings.Builder
	b.WriteString("default_model = \"offline/demo\"\n")
	b.WriteString("providers \"offline\" {\n  kind = \"scripted\"\n  models \"demo\" {\n")
	for _, turn := range turns {
		b.WriteString("    " + turn + "\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// toolTurn is a turn that calls one tool; args is the ACL object body,
// e.g. `command = "echo r1 >> tools.log"`.
func toolTurn(name, args string) string {
	return fmt.Sprintf("turn {\n      tool_call {\n        name = %q\n        arguments = { %s }\n      }\n    }", name, args)
}

// textTurn is a turn that answers text.
func textTurn(text string) string { return fmt.Sprintf("turn { text = %q }", text) }

// newAgent starts a bridge of its own with the configuration acl and
// closes it when the test ends.
func newAgent(t *testing.T, acl string) *Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	agent, err := Create(ctx, acl, WithBridgePath(requireBridge(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := agent.Close(context.Background()); err != nil && !errIsClosedOrExited(err) {
			t.Errorf("agent.Close: %v", err)
		}
	})
	return agent
}

// openSession opens a session or fails the test.
func openSession(t *testing.T, agent *Agent, dir string, opts *SessionOptions) *Session {
	t.Helper()
	s, err := agent.Session(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// streamAll runs prompt as a stream and returns every event and the outcome.
func streamAll(t *testing.T, s *Session, prompt string) ([]Event, *RunResult, error) {
	t.Helper()
	st, err := s.Stream(context.Background(), prompt)
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	for ev := range st.Events() {
		events = append(events, ev)
	}
	res, err := st.Wait()
	return events, res, err
}

// eventTypes lists the types of events, text deltas included.
func eventTypes(events []Event) []string {
	types := make([]string, len(events))
	for i, ev := range events {
		types[i] = ev.Type
	}
	return types
}

// firstEvent returns the first event of type typ, decoded into v.
func firstEvent(t *testing.T, events []Event, typ string, v any) bool {
	t.Helper()
	for _, ev := range events {
		if ev.Type == typ {
			if v != nil {
				if err := ev.Decode(v); err != nil {
					t.Fatal(err)
				}
			}
			return true
		}
	}
	return false
}

// nthGuard holds the n-th model call of a session (1-based) in its budget
// check until release is closed or the check's context ends; the others
// are allowed.
type nthGuard struct {
	n       int
	mu      sync.Mutex
	calls   int
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	ctxErr  chan error
}

func newNthGuard(n int) *nthGuard {
	return &nthGuard{n: n, entered: make(chan struct{}), release: make(chan struct{}), ctxErr: make(chan error, 1)}
}

func (g *nthGuard) handlers() *BudgetGuardHandlers {
	return &BudgetGuardHandlers{
		Timeout: time.Minute,
		CheckBeforeLLM: func(ctx context.Context, _ BudgetLLMContext) (*BudgetDecision, error) {
			g.mu.Lock()
			g.calls++
			hold := g.calls == g.n
			g.mu.Unlock()
			if !hold {
				return nil, nil
			}
			g.once.Do(func() { close(g.entered) })
			select {
			case <-g.release:
				return nil, nil
			case <-ctx.Done():
				g.ctxErr <- ctx.Err()
				return nil, ctx.Err()
			}
		},
	}
}

// waitEntered fails the test unless the held call arrives in time.
func (g *nthGuard) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatalf("model call %d never reached the budget check", g.n)
	}
}

// readFile returns a file's content, or "<absent>".
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// filesUnder maps every regular file under root (by slash path relative
// to root) to its content.
func filesUnder(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// storeKey is the file stem the bridge's file store uses for a document
// key: every byte outside [a-z0-9_-] percent-encoded in upper-case hex.
func storeKey(key string) string {
	if key == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
