package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ProtocolVersion is the bridge protocol version this SDK speaks.
const ProtocolVersion = 1

// SDKVersion is sent to the bridge as clientInfo.version.
const SDKVersion = "0.1.0"

// defaultStreamWindow applies if the bridge reports no streamWindow.
const defaultStreamWindow = 256

// Runtime is one bridge child process and the connection to it. Agents and
// sessions created from it share that process; their requests are
// multiplexed over its stdin/stdout. A Runtime is safe for concurrent use.
//
// If the bridge dies, every pending call fails at once with a
// *BridgeExitedError carrying the tail of its stderr, and so does every
// later call.
type Runtime struct {
	opts options
	proc *process
	conn *conn
	init InitializeResult

	// guards and confirms hold each session's budget and permission
	// handlers, keyed by session id, for the host/budget/* and
	// host/permission/request reverse requests.
	guardsMu sync.Mutex
	guards   map[string]*BudgetGuardHandlers
	confirms map[string]PermissionHandler

	closing   chan struct{} // closed when Close starts
	closeOnce sync.Once
	closeErr  error
	watchDone chan struct{} // closed when the exit watcher has failed the conn
}

// InitializeResult is the bridge's answer to initialize.
type InitializeResult struct {
	ProtocolVersion int `json:"protocolVersion"`
	ServerInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Capabilities struct {
		Methods         []string `json:"methods"`
		Events          []string `json:"events"`
		ReverseRequests []string `json:"reverseRequests"`
	} `json:"capabilities"`
	Limits Limits `json:"limits"`
}

// Limits are the bridge's limits from initialize.
type Limits struct {
	MaxLineBytes        int `json:"maxLineBytes"`
	MaxInFlightRequests int `json:"maxInFlightRequests"`
	StreamWindow        int `json:"streamWindow"`
}

// reverseRequests are the bridge→host methods this SDK answers; initialize
// advertises them so the bridge may send them.
var reverseRequests = []string{
	methodCheckBeforeLLM,
	methodRecordAfterLLM,
	methodCheckBeforeTool,
	methodPermissionRequest,
}

// NewRuntime starts a bridge process and performs the initialize handshake.
// Options: WithBridgePath, WithBridgeArgs, WithStderr, WithCloseTimeouts,
// WithLogger. Close the runtime to stop the process.
func NewRuntime(ctx context.Context, opts ...Option) (*Runtime, error) {
	o := buildOptions(opts)
	path, err := findBridge(o.bridgePath)
	if err != nil {
		return nil, err
	}
	proc, err := startProcess(path, o.bridgeArgs, o.stderr)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{
		opts:      o,
		proc:      proc,
		conn:      newConn(proc.stdin, proc.stdout, o.logger),
		guards:    make(map[string]*BudgetGuardHandlers),
		confirms:  make(map[string]PermissionHandler),
		closing:   make(chan struct{}),
		watchDone: make(chan struct{}),
	}
	rt.conn.handle = rt.handleReverse
	readerDone := make(chan struct{})
	go func() {
		if err := rt.conn.readLoop(); err != nil {
			o.logger.Debug("a3s-code: reading from the bridge stopped", "error", err)
		}
		close(readerDone)
	}()
	go rt.watch(readerDone)

	if err := rt.initialize(ctx); err != nil {
		_ = rt.Close(context.Background())
		return nil, err
	}
	return rt, nil
}

// watch detects the child's exit itself (rather than waiting for stdout
// EOF, which a grandchild holding the pipe would delay forever) and fails
// the connection with the exit status and stderr tail.
func (rt *Runtime) watch(readerDone <-chan struct{}) {
	defer close(rt.watchDone)
	select {
	case <-rt.proc.exited:
	case <-readerDone:
		// stdout closed first. Normally the exit follows at once; a bridge
		// that closed stdout but lives on can answer nothing, so give up
		// on it after a grace period.
		t := time.NewTimer(time.Second)
		select {
		case <-rt.proc.exited:
			t.Stop()
		case <-t.C:
			rt.conn.fail(fmt.Errorf("a3s-code: the bridge closed its stdout but is still running: %w", ErrBridgeExited))
			<-rt.proc.exited
			return
		}
	}
	// Let the reader take replies still in the pipe before failing what is
	// left; bounded, since a grandchild may keep the pipe open.
	t := time.NewTimer(200 * time.Millisecond)
	select {
	case <-readerDone:
	case <-t.C:
	}
	t.Stop()
	exitErr := rt.proc.exitError()
	select {
	case <-rt.closing:
		rt.conn.fail(fmt.Errorf("%w (%v)", ErrClosed, exitErr))
	default:
		rt.conn.fail(exitErr)
	}
	// Whatever a grandchild still writes into the inherited pipes is not
	// protocol; closing our ends releases the reader and the stderr drain
	// even if nobody calls Close.
	_ = rt.proc.stdout.Close()
	rt.proc.closeStderr()
}

func (rt *Runtime) initialize(ctx context.Context) error {
	params := map[string]any{
		"protocolVersion": ProtocolVersion,
		"clientInfo":      map[string]string{"name": "a3s-code-sdk-go", "version": SDKVersion},
		"capabilities":    map[string]any{"reverseRequests": reverseRequests},
	}
	if err := rt.conn.call(ctx, "initialize", params, &rt.init); err != nil {
		return fmt.Errorf("a3s-code: initialize: %w", err)
	}
	if rt.init.ProtocolVersion != ProtocolVersion {
		return fmt.Errorf("a3s-code: bridge speaks protocol %d, this SDK speaks %d",
			rt.init.ProtocolVersion, ProtocolVersion)
	}
	rt.conn.setLimits(rt.init.Limits)
	return nil
}

// Initialize returns what the bridge answered to initialize: its version,
// the methods, events and reverse requests it serves, and its limits.
func (rt *Runtime) Initialize() InitializeResult { return rt.init }

// Serves reports whether the bridge listed method among its capabilities.
func (rt *Runtime) Serves(method string) bool {
	for _, m := range rt.init.Capabilities.Methods {
		if m == method {
			return true
		}
	}
	return false
}

// call is a request on behalf of the API types; after Close it fails fast
// with ErrClosed.
func (rt *Runtime) call(ctx context.Context, method string, params, result any) error {
	select {
	case <-rt.closing:
		return fmt.Errorf("a3s-code: %s: %w", method, ErrClosed)
	default:
	}
	return rt.conn.call(ctx, method, params, result)
}

// CreateAgent loads an agent configuration in the bridge: configPathOrACL
// is the path of an ACL file (resolved by the bridge, which shares this
// process's working directory) or inline ACL text.
func (rt *Runtime) CreateAgent(ctx context.Context, configPathOrACL string) (*Agent, error) {
	var res struct {
		AgentID string `json:"agentId"`
	}
	if err := rt.call(ctx, "agent/create", map[string]string{"config": configPathOrACL}, &res); err != nil {
		return nil, err
	}
	return &Agent{rt: rt, id: res.AgentID}, nil
}

// handleReverse answers bridge→host requests.
func (rt *Runtime) handleReverse(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case methodCheckBeforeLLM, methodRecordAfterLLM, methodCheckBeforeTool:
		return rt.handleBudget(ctx, method, params)
	case methodPermissionRequest:
		return rt.handlePermission(ctx, params)
	}
	return nil, &Error{Code: CodeMethodNotFound, DataCode: "METHOD_NOT_FOUND", Message: "host does not handle " + method}
}

// pid returns the bridge's process id (tests kill it to simulate a crash).
func (rt *Runtime) pid() int { return rt.proc.cmd.Process.Pid }

// errIsClosedOrExited tells the API types whether a failure means the
// bridge is gone (so e.g. a session Close has nothing left to do).
func errIsClosedOrExited(err error) bool {
	return errors.Is(err, ErrClosed) || errors.Is(err, ErrBridgeExited)
}
