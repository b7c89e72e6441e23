package code

import (
	"io"
	"log/slog"
	"time"
)

// Option configures NewRuntime, Create and NewAgent.
type Option func(*options)

type options struct {
	bridgePath string
	bridgeArgs []string
	stderr     io.Writer
	stdinWait  time.Duration
	termWait   time.Duration
	runtime    *Runtime
	logger     *slog.Logger
}

// Close waits this long for the bridge after closing its stdin, then after
// SIGTERM, unless WithCloseTimeouts says otherwise.
const (
	defaultStdinWait = 5 * time.Second
	defaultTermWait  = 2 * time.Second
)

func buildOptions(opts []Option) options {
	o := options{stdinWait: defaultStdinWait, termWait: defaultTermWait}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// WithBridgePath runs this bridge binary instead of looking one up in
// $A3S_CODE_BRIDGE and PATH.
func WithBridgePath(path string) Option { return func(o *options) { o.bridgePath = path } }

// WithBridgeArgs passes extra command-line arguments to the bridge, e.g.
// "--max-line-bytes", "1048576".
func WithBridgeArgs(args ...string) Option {
	return func(o *options) { o.bridgeArgs = append([]string(nil), args...) }
}

// WithStderr copies everything the bridge writes on stderr (its logs) to w.
// Stderr is drained whether or not this is set; the last 64 KiB are always
// kept for BridgeExitedError. w should not block for long.
func WithStderr(w io.Writer) Option { return func(o *options) { o.stderr = w } }

// WithCloseTimeouts sets how long Close waits for the bridge to exit after
// closing its stdin (default 5s) and then after SIGTERM (default 2s)
// before it sends SIGKILL.
func WithCloseTimeouts(stdinWait, termWait time.Duration) Option {
	return func(o *options) { o.stdinWait, o.termWait = stdinWait, termWait }
}

// WithRuntime makes Create/NewAgent use rt instead of starting a bridge of
// their own; the agent's Close then leaves rt running.
func WithRuntime(rt *Runtime) Option { return func(o *options) { o.runtime = rt } }

// WithLogger receives what the SDK notices but cannot return to a caller:
// malformed or oversized lines from the bridge, panics in handlers.
// Default: discarded.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }
