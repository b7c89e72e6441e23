package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// defaultReverseTimeout applies when a reverse request carries no
// timeoutMs (the protocol says every one does; this is a guard).
const defaultReverseTimeout = 5 * time.Second

// serve starts the handler of a bridge→host request in its own goroutine.
// The reader goroutine only decodes and spawns; it never runs user code.
func (c *conn) serve(msg *wireMessage) {
	key := incomingKey(msg.ID)
	select {
	case c.handlerSlots <- struct{}{}:
	default:
		// Answering here writes from the reader goroutine; that write is
		// bounded because the bridge always reads its stdin.
		c.respond(msg.ID, nil, wireErrorFrom(CodeOverloaded, "OVERLOADED",
			fmt.Sprintf("host is running %d handlers already", maxConcurrentHandlers)))
		return
	}

	var p struct {
		TimeoutMS int64 `json:"timeoutMs"`
	}
	_ = json.Unmarshal(msg.Params, &p) // a missing or odd timeoutMs means the default
	timeout := defaultReverseTimeout
	if p.TimeoutMS > 0 {
		timeout = time.Duration(p.TimeoutMS) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(c.handlerBase, timeout)

	c.mu.Lock()
	if c.failErr != nil {
		c.mu.Unlock()
		cancel()
		<-c.handlerSlots
		return
	}
	c.incoming[key] = cancel
	c.handlers.Add(1)
	c.mu.Unlock()

	go func() {
		defer c.handlers.Done()
		defer func() { <-c.handlerSlots }()
		defer func() {
			c.mu.Lock()
			delete(c.incoming, key)
			c.mu.Unlock()
			cancel()
		}()
		result, werr := c.runHandler(ctx, msg.Method, msg.Params)
		if err := ctx.Err(); err != nil && (p.TimeoutMS > 0 || !errors.Is(err, context.DeadlineExceeded)) {
			// The bridge has given up on this request: its deadline passed
			// (its own timer started before ours) or it withdrew the
			// question. It then applies its fail-closed rule by itself and
			// ignores late answers, so none is sent: one racing its timer
			// could turn a missed deadline into "allow", or a
			// confirmation_timeout into a plain rejection.
			c.log.Debug("a3s-code: not answering a reverse request the bridge gave up on", "method", msg.Method, "reason", err)
			return
		}
		c.respond(msg.ID, result, werr)
	}()
}

// runHandler calls the handler, turning a panic into an INTERNAL error so
// a bug in a host callback fails closed instead of killing the program.
func (c *conn) runHandler(ctx context.Context, method string, params json.RawMessage) (result json.RawMessage, werr *wireError) {
	defer func() {
		if v := recover(); v != nil {
			c.log.Error("a3s-code: reverse-request handler panicked", "method", method, "panic", v, "stack", string(debug.Stack()))
			result, werr = nil, wireErrorFrom(CodeInternalError, "INTERNAL",
				fmt.Sprintf("host handler for %s panicked: %v", method, v))
		}
	}()
	if c.handle == nil {
		return nil, methodNotFound(method)
	}
	v, err := c.handle(ctx, method, params)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, &wireError{Code: e.Code, Message: e.Message, Data: dataOrCode(e)}
		}
		return nil, wireErrorFrom(CodeRuntimeError, "HOST_ERROR", err.Error())
	}
	if v == nil {
		return jsonNull, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, wireErrorFrom(CodeInternalError, "INTERNAL", "encode host result: "+err.Error())
	}
	return b, nil
}

func dataOrCode(e *Error) json.RawMessage {
	if len(e.Data) > 0 {
		return e.Data
	}
	if e.DataCode == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"code": e.DataCode})
	return b
}

func methodNotFound(method string) *wireError {
	return wireErrorFrom(CodeMethodNotFound, "METHOD_NOT_FOUND", "host does not handle "+method)
}

// respond writes the answer to a reverse request; a dead pipe is the
// process watcher's business, so write errors are only logged.
func (c *conn) respond(id json.RawMessage, result json.RawMessage, werr *wireError) {
	msg := outgoingResponse{JSONRPC: "2.0", ID: id, Result: result, Error: werr}
	if werr == nil && result == nil {
		msg.Result = jsonNull
	}
	if err := c.write(context.Background(), msg); err != nil {
		c.log.Debug("a3s-code: could not answer reverse request", "error", err)
	}
}

// cancelIncoming handles $/cancelRequest from the bridge: it cancels the
// context of the running handler, if any. Unknown ids are ignored.
func (c *conn) cancelIncoming(raw json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &p) != nil || len(p.ID) == 0 {
		return
	}
	c.mu.Lock()
	cancel := c.incoming[incomingKey(p.ID)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// incomingKey normalises a request id so "bridge-1" in a request and in a
// later $/cancelRequest map to the same handler.
func incomingKey(id json.RawMessage) string {
	var s string
	if len(id) > 0 && id[0] == '"' && json.Unmarshal(id, &s) == nil {
		return "s:" + s
	}
	return "n:" + string(id)
}
