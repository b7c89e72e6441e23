package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
)

// conn is the JSON-RPC connection to one bridge: a symmetric peer in the
// shape of x/tools jsonrpc2_v2. Any number of goroutines may call, notify
// and stream at once; one reader goroutine (readLoop) routes what comes
// back and never waits on user code:
//
//   - a response completes its pending call through a one-slot channel;
//   - a session/event notification goes to its stream's bounded buffer;
//   - a request from the bridge (host/…) runs in its own goroutine;
//   - $/cancelRequest cancels that goroutine's context.
//
// Writes go through a one-slot channel used as a lock, so every message
// is written whole, with its newline, by one Write.
type conn struct {
	w     io.Writer
	wlock chan struct{}
	lr    *lineReader
	log   *slog.Logger

	lastID atomic.Int64

	mu       sync.Mutex
	pending  map[int64]*pendingCall
	streams  map[int64]*Stream
	incoming map[string]context.CancelFunc // running reverse-request handlers
	failErr  error                         // set once; the conn is dead after it

	done chan struct{} // closed when failErr is set

	// slots bounds our requests in flight to the bridge's
	// limits.maxInFlightRequests, so we wait instead of being answered
	// OVERLOADED. nil means unbounded (before initialize).
	slots chan struct{}

	// Reverse requests: handle answers them; handlerSlots bounds how many
	// run at once; handlerBase is cancelled when the conn dies.
	handle       func(ctx context.Context, method string, params json.RawMessage) (any, error)
	handlerSlots chan struct{}
	handlerBase  context.Context
	stopHandlers context.CancelFunc
	handlers     sync.WaitGroup
}

// pendingCall is one of our requests waiting for its response. Exactly one
// response is ever sent on ch, by whoever removes the entry from the map.
// An abandoned call (its caller's context ended) stays in the map only to
// hold its in-flight slot until the bridge's -32800 answer arrives.
type pendingCall struct {
	ch        chan callResult
	abandoned bool
}

type callResult struct {
	msg *wireMessage
	err error
}

// maxConcurrentHandlers bounds reverse-request goroutines; beyond it the
// request is answered OVERLOADED at once instead of growing without limit.
const maxConcurrentHandlers = 64

func newConn(w io.Writer, r io.Reader, log *slog.Logger) *conn {
	base, stop := context.WithCancel(context.Background())
	return &conn{
		w:            w,
		wlock:        make(chan struct{}, 1),
		lr:           newLineReader(r, defaultMaxLineBytes),
		log:          log,
		pending:      make(map[int64]*pendingCall),
		streams:      make(map[int64]*Stream),
		incoming:     make(map[string]context.CancelFunc),
		done:         make(chan struct{}),
		handlerSlots: make(chan struct{}, maxConcurrentHandlers),
		handlerBase:  base,
		stopHandlers: stop,
	}
}

// setLimits applies initialize's limits. It is called once, before any
// request other than initialize is sent.
func (c *conn) setLimits(l Limits) {
	c.lr.setLimit(l.MaxLineBytes)
	if l.MaxInFlightRequests > 0 {
		c.slots = make(chan struct{}, l.MaxInFlightRequests)
	}
}

// err returns why the conn died, or nil.
func (c *conn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failErr
}

// call sends a request and decodes its result into result (if non-nil).
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	id, p, err := c.start(ctx, method, params, nil)
	if err != nil {
		return err
	}
	return c.await(ctx, id, method, p, result)
}

// start registers and sends a request. A non-nil stream is registered
// under the same id before the request is written, so that no event can
// arrive for an id nobody knows.
func (c *conn) start(ctx context.Context, method string, params any, s *Stream) (int64, *pendingCall, error) {
	if err := c.acquireSlot(ctx, method); err != nil {
		return 0, nil, err
	}
	id := c.lastID.Add(1)
	p := &pendingCall{ch: make(chan callResult, 1)}
	c.mu.Lock()
	if c.failErr != nil {
		err := c.failErr
		c.mu.Unlock()
		c.releaseSlot()
		return 0, nil, err
	}
	c.pending[id] = p
	if s != nil {
		c.streams[id] = s
	}
	c.mu.Unlock()

	if params == nil {
		params = struct{}{}
	}
	err := c.write(ctx, outgoingRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		c.mu.Lock()
		_, mine := c.pending[id]
		if mine {
			delete(c.pending, id)
			delete(c.streams, id)
		}
		dead := c.failErr
		c.mu.Unlock()
		if mine {
			c.releaseSlot()
		}
		switch {
		case dead != nil:
			return 0, nil, dead
		case ctx.Err() != nil:
			return 0, nil, cancelledError(method, ctx.Err())
		}
		return 0, nil, fmt.Errorf("a3s-code: write %s: %w", method, err)
	}
	return id, p, nil
}

// await waits for the response of request id. When ctx ends first it
// sends $/cancelRequest and gives up on the call at once; the bridge's
// late -32800 answer is dropped by the reader.
func (c *conn) await(ctx context.Context, id int64, method string, p *pendingCall, result any) error {
	var r callResult
	select {
	case r = <-p.ch:
	case <-ctx.Done():
		c.mu.Lock()
		_, still := c.pending[id]
		if still {
			p.abandoned = true
			delete(c.streams, id)
		}
		c.mu.Unlock()
		if !still {
			r = <-p.ch // the answer won the race; it is already there
			break
		}
		// Tell the bridge with a context of our own: the caller's is over,
		// and a cancellation that waits on it would never be written.
		_ = c.notify(context.Background(), "$/cancelRequest", map[string]int64{"id": id})
		return cancelledError(method, ctx.Err())
	}
	if r.err != nil {
		return r.err
	}
	if r.msg.Error != nil {
		return errorFromWire(r.msg.Error)
	}
	if result == nil || len(r.msg.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.msg.Result, result); err != nil {
		return fmt.Errorf("a3s-code: decode %s result: %w", method, err)
	}
	return nil
}

func (c *conn) acquireSlot(ctx context.Context, method string) error {
	if c.slots == nil {
		return nil
	}
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return cancelledError(method, ctx.Err())
	case <-c.done:
		return c.err()
	}
}

func (c *conn) releaseSlot() {
	if c.slots != nil {
		<-c.slots
	}
}

// notify sends a notification.
func (c *conn) notify(ctx context.Context, method string, params any) error {
	return c.write(ctx, outgoingNotification{JSONRPC: "2.0", Method: method, Params: params})
}

// write sends one message as one line under the write lock.
func (c *conn) write(ctx context.Context, msg any) error {
	line, err := encodeLine(msg)
	if err != nil {
		return err
	}
	// The bridge discards a line over its limit and can only answer with
	// id null, which would leave the call waiting forever: refuse it here.
	if limit := c.lr.limit.Load(); int64(len(line)-1) > limit {
		return &Error{Code: CodeInvalidRequest, DataCode: "LINE_TOO_LONG",
			Message: fmt.Sprintf("a3s-code: message of %d bytes exceeds the bridge's maxLineBytes (%d)", len(line)-1, limit)}
	}
	select {
	case c.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.err()
	}
	defer func() { <-c.wlock }()
	_, err = c.w.Write(line)
	return err
}

// fail kills the conn: every pending call gets err at once, later calls
// fail with it immediately, and reverse-request handlers are cancelled.
// Only the first call has an effect.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.failErr != nil {
		c.mu.Unlock()
		return
	}
	c.failErr = err
	close(c.done)
	pending := c.pending
	c.pending = make(map[int64]*pendingCall)
	c.streams = make(map[int64]*Stream)
	c.mu.Unlock()

	c.stopHandlers()
	for _, p := range pending {
		c.releaseSlot()
		if !p.abandoned {
			p.ch <- callResult{err: err}
		}
	}
}

// failCall completes one pending call with err (used when its stream
// misbehaves) and tells the bridge to stop it.
func (c *conn) failCall(id int64, err error) {
	if c.complete(id, callResult{err: err}) {
		_ = c.notify(context.Background(), "$/cancelRequest", map[string]int64{"id": id})
	}
}

// complete removes pending call id, frees its slot and hands it r unless
// its caller already gave up. It reports whether the call was pending.
func (c *conn) complete(id int64, r callResult) bool {
	c.mu.Lock()
	p, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
		delete(c.streams, id)
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	c.releaseSlot()
	if !p.abandoned {
		p.ch <- r
	}
	return true
}

// readLoop reads and routes lines until EOF. It returns the read error
// (nil at a clean EOF); the process watcher decides what that means.
func (c *conn) readLoop() error {
	for {
		line, err := c.lr.next()
		if err != nil {
			var tooLong *LineTooLongError
			if errors.As(err, &tooLong) {
				// Same rule the bridge applies to us: skip it, go on.
				c.log.Warn("a3s-code: discarded oversized line from the bridge", "limit", tooLong.Limit)
				continue
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		if len(line) == 0 {
			continue
		}
		msg, err := decodeMessage(line)
		if err != nil {
			c.log.Warn("a3s-code: ignored malformed line from the bridge", "error", err)
			continue
		}
		c.dispatch(msg)
	}
}

func (c *conn) dispatch(msg *wireMessage) {
	switch msg.kind() {
	case kindResponse:
		c.deliver(msg)
	case kindRequest:
		c.serve(msg)
	case kindNotification:
		switch msg.Method {
		case "session/event":
			c.routeEvent(msg.Params)
		case "$/cancelRequest":
			c.cancelIncoming(msg.Params)
		default:
			c.log.Debug("a3s-code: ignored notification", "method", msg.Method)
		}
	}
}

// deliver completes the pending call a response belongs to.
func (c *conn) deliver(msg *wireMessage) {
	id, ok := msg.hostID()
	if !ok {
		// id null: the bridge could not tie an error to a request of ours
		// (a line it could not parse, or one over its limit).
		if msg.Error != nil {
			c.log.Warn("a3s-code: bridge reported an error without id", "error", errorFromWire(msg.Error))
		}
		return
	}
	c.complete(id, callResult{msg: msg})
}

// routeEvent hands a stream event to its stream without blocking.
func (c *conn) routeEvent(raw json.RawMessage) {
	var n struct {
		RequestID int64  `json:"requestId"`
		Seq       uint64 `json:"seq"`
		Event     Event  `json:"event"` // decoded in the same pass
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		c.log.Warn("a3s-code: ignored malformed session/event", "error", err)
		return
	}
	c.mu.Lock()
	s := c.streams[n.RequestID]
	c.mu.Unlock()
	if s == nil {
		return // a stream we cancelled or finished: late events are dropped
	}
	n.Event.fillConvenience()
	if !s.push(n.Seq, n.Event) {
		// The bridge sent more than the window beyond our last ack.
		// Blocking here would stall every other call; growing would
		// break the memory bound. Fail just this stream.
		c.failCall(n.RequestID, fmt.Errorf("a3s-code: stream %d: %w", n.RequestID, errStreamOverflow))
	}
}
