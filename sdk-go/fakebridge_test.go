package code

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The fake bridge is this test binary started with --fake-bridge. It
// speaks just enough of the protocol to drive the SDK into the corners a
// real bridge does not reach on purpose: a crash with a message on stderr,
// an oversized line, a stream that ignores the window, a child that will
// not exit. Behaviour that the real bridge has is tested against it in
// bridge_test.go.

const fakeBridgeFlag = "--fake-bridge"

// fakeBridgeOptions returns the options that run the fake with args.
func fakeBridgeOptions(args ...string) []Option {
	return []Option{
		WithBridgePath(os.Args[0]),
		WithBridgeArgs(append([]string{fakeBridgeFlag}, args...)...),
	}
}

type fakeBridge struct {
	mu       sync.Mutex // one writer, whole lines
	out      io.Writer
	window   int
	maxLine  int
	stubborn bool

	acked     map[int64]chan uint64 // stream id -> acks
	cancels   map[string]chan struct{}
	cancelled []int64
	replies   map[string]chan json.RawMessage // reverse id -> host answer
	nextRev   int
}

func runFakeBridge(args []string) {
	fs := flag.NewFlagSet("fake-bridge", flag.ExitOnError)
	window := fs.Int("window", 8, "limits.streamWindow")
	maxLine := fs.Int("max-line", 16<<20, "limits.maxLineBytes")
	stubborn := fs.Bool("stubborn", false, "ignore shutdown, stdin EOF and SIGTERM")
	dieAtStart := fs.Bool("die-at-start", false, "fail like a bridge that cannot start")
	fs.Parse(args)
	if *dieAtStart {
		fmt.Fprintln(os.Stderr, "fake bridge: cannot bind the runtime: permission denied")
		os.Exit(2)
	}

	f := &fakeBridge{out: os.Stdout, window: *window, maxLine: *maxLine, stubborn: *stubborn,
		acked: map[int64]chan uint64{}, cancels: map[string]chan struct{}{}, replies: map[string]chan json.RawMessage{}}
	if f.stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stderr, "fake bridge: started")
	lr := newLineReader(os.Stdin, f.maxLine)
	for {
		line, err := lr.next()
		if err == io.EOF {
			if f.stubborn {
				// Only SIGKILL ends us. (Not `select {}`: without -race
				// the runtime would call that a deadlock and exit.)
				for {
					time.Sleep(time.Hour)
				}
			}
			os.Exit(0)
		}
		if err != nil {
			continue
		}
		var m wireMessage
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		f.handle(&m)
	}
}

func (f *fakeBridge) send(v any) {
	line, _ := encodeLine(v)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Write(line)
}

func (f *fakeBridge) reply(id json.RawMessage, result any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fakeBridge) replyErr(id json.RawMessage, code int, dataCode, msg string) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": wireErrorFrom(code, dataCode, msg)})
}

func (f *fakeBridge) handle(m *wireMessage) {
	switch m.kind() {
	case kindResponse: // an answer to one of our reverse requests
		key := incomingKey(m.ID)
		f.mu.Lock()
		ch := f.replies[key]
		f.mu.Unlock()
		if ch != nil {
			b, _ := json.Marshal(m)
			ch <- b
		}
		return
	case kindNotification:
		f.notification(m)
		return
	}
	var p map[string]json.RawMessage
	json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "initialize":
		f.reply(m.ID, map[string]any{
			"protocolVersion": 1,
			"serverInfo":      map[string]string{"name": "fake-bridge", "version": "0"},
			"capabilities":    map[string]any{"methods": []string{"initialize", "shutdown"}},
			"limits":          map[string]int{"maxLineBytes": f.maxLine, "maxInFlightRequests": 256, "streamWindow": f.window},
		})
	case "shutdown":
		if f.stubborn {
			return
		}
		f.reply(m.ID, struct{}{})
		os.Exit(0)
	case "test/echo":
		f.reply(m.ID, m.Params)
	case "test/die":
		fmt.Fprintln(os.Stderr, "fake bridge: fatal: boom")
		os.Exit(3)
	case "test/die-with-grandchild":
		// The grandchild inherits stdout and stderr, so neither pipe sees
		// EOF when we exit: only watching the process tells the SDK.
		gc := exec.Command("sleep", "30")
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
		if err := gc.Start(); err != nil {
			f.replyErr(m.ID, CodeInternalError, "INTERNAL", err.Error())
			return
		}
		fmt.Fprintf(os.Stderr, "fake bridge: grandchild %d\n", gc.Process.Pid)
		os.Exit(3)
	case "test/hang":
		// Answered only by $/cancelRequest, with -32800 as the bridge does.
		done := make(chan struct{})
		f.mu.Lock()
		f.cancels[incomingKey(m.ID)] = done
		f.mu.Unlock()
		go func() { <-done; f.replyErr(m.ID, CodeCancelled, "CANCELLED", "cancelled") }()
	case "test/cancelled":
		f.mu.Lock()
		ids := append([]int64{}, f.cancelled...)
		f.mu.Unlock()
		f.reply(m.ID, ids)
	case "test/oversized":
		f.send(map[string]string{"jsonrpc": "2.0", "method": "noise", "junk": strings.Repeat("x", f.maxLine)})
		f.reply(m.ID, "after")
	case "test/reverse":
		go f.reverse(m.ID, p)
	case "session/stream":
		go f.stream(m.ID, p)
	default:
		f.replyErr(m.ID, CodeMethodNotFound, "METHOD_NOT_FOUND", "unknown method "+m.Method)
	}
}

func (f *fakeBridge) notification(m *wireMessage) {
	var p struct {
		ID        json.RawMessage `json:"id"`
		RequestID int64           `json:"requestId"`
		Seq       uint64          `json:"seq"`
	}
	json.Unmarshal(m.Params, &p)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m.Method {
	case "$/cancelRequest":
		var id int64
		json.Unmarshal(p.ID, &id)
		f.cancelled = append(f.cancelled, id)
		if done := f.cancels[incomingKey(p.ID)]; done != nil {
			delete(f.cancels, incomingKey(p.ID))
			close(done)
		}
	case "$/streamAck":
		if ch := f.acked[p.RequestID]; ch != nil {
			ch <- p.Seq
		}
	}
}

// stream reads its script from the prompt, {"count":N,"ignoreWindow":b},
// sends N text_delta events, honouring the window unless ignoreWindow, and
// answers with a RunResult.
func (f *fakeBridge) stream(id json.RawMessage, p map[string]json.RawMessage) {
	var prompt string
	json.Unmarshal(p["prompt"], &prompt)
	var script struct {
		Count        int  `json:"count"`
		IgnoreWindow bool `json:"ignoreWindow"`
	}
	json.Unmarshal([]byte(prompt), &script)
	count, ignore := script.Count, script.IgnoreWindow
	var reqID int64
	json.Unmarshal(id, &reqID)
	acks := make(chan uint64, 1024)
	f.mu.Lock()
	f.acked[reqID] = acks
	f.mu.Unlock()

	acked := int64(-1)
	for seq := 0; seq < count; seq++ {
		for !ignore && int64(seq) > acked+int64(f.window) {
			select {
			case a := <-acks:
				acked = int64(a)
			case <-time.After(10 * time.Second):
				f.replyErr(id, CodeInternalError, "INTERNAL", "no ack")
				return
			}
		}
		f.send(map[string]any{"jsonrpc": "2.0", "method": "session/event", "params": map[string]any{
			"requestId": reqID, "seq": seq,
			"event": map[string]any{"version": 1, "type": "text_delta", "payload": map[string]string{"text": fmt.Sprint(seq)},
				"metadata": map[string]any{"runId": "run-1", "sessionId": "s", "seq": seq, "timestampMs": 1}},
		}})
	}
	f.reply(id, RunResult{RunID: "run-1", Text: "streamed"})
}

// reverse asks the host params.method with params.params and answers
// with the host's reply. With params.cancelAfterMs it withdraws the
// request after that long, as the bridge does at its deadline.
func (f *fakeBridge) reverse(id json.RawMessage, p map[string]json.RawMessage) {
	var method string
	var cancelAfter int
	json.Unmarshal(p["method"], &method)
	json.Unmarshal(p["cancelAfterMs"], &cancelAfter)
	f.mu.Lock()
	f.nextRev++
	revID, _ := json.Marshal(fmt.Sprintf("bridge-%d", f.nextRev))
	ch := make(chan json.RawMessage, 1)
	f.replies[incomingKey(revID)] = ch
	f.mu.Unlock()

	var rp struct {
		TimeoutMS int `json:"timeoutMs"`
	}
	json.Unmarshal(p["params"], &rp)
	f.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(revID), "method": method, "params": p["params"]})
	// Like the bridge, give up at the deadline or after withdrawing; then
	// wait a grace period to see whether the host answers anyway, and
	// report no answer as null.
	wait := time.Duration(rp.TimeoutMS) * time.Millisecond
	if cancelAfter > 0 {
		wait = time.Duration(cancelAfter) * time.Millisecond
	}
	var answer json.RawMessage
	select {
	case answer = <-ch:
	case <-time.After(wait):
		if cancelAfter > 0 {
			f.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": json.RawMessage(revID)}})
		}
		select {
		case answer = <-ch:
		case <-time.After(500 * time.Millisecond):
			answer = json.RawMessage("null")
		}
	}
	f.reply(id, answer)
}
