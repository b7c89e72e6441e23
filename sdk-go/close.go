package code

import (
	"context"
	"fmt"
	"time"
)

// Close stops the bridge and releases everything the runtime holds. It is
// idempotent and safe to call concurrently; every call returns the first
// call's result. Calls still pending fail with ErrClosed.
//
// The steps follow the shutdown rule of stdio servers (as in the MCP
// specification and the Go MCP SDK's command transport), each bounded:
//
//  1. Send `shutdown`: the bridge closes every session and answers {},
//     then exits 0. Waits at most the stdin wait (WithCloseTimeouts).
//  2. Close the bridge's stdin: EOF is its other signal to exit.
//  3. Wait for the process to exit, at most the stdin wait (default 5s).
//  4. Send SIGTERM to its process group; wait at most the term wait
//     (default 2s).
//  5. Send SIGKILL to its process group. The group takes tool processes
//     the bridge started with it, so nothing is orphaned.
//  6. Report: nil after a clean exit 0, otherwise what happened. A bridge
//     that had died before Close is not reported again.
//
// When ctx ends, the remaining waits are cut short and Close goes straight
// to the next signal, so a cancelled Close still never leaves a process.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.closeOnce.Do(func() { rt.closeErr = rt.close(ctx) })
	return rt.closeErr
}

func (rt *Runtime) close(ctx context.Context) error {
	close(rt.closing)
	p := rt.proc

	// A bridge that died before Close was already reported to every call
	// (BridgeExitedError); Close then only releases what is left.
	diedBefore := rt.conn.err() != nil

	// Step 1. The caller's context may already be over; a bounded
	// shutdown is still worth a try only if it is not.
	if !diedBefore && ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(ctx, rt.opts.stdinWait)
		_ = rt.conn.call(sctx, "shutdown", nil, nil)
		cancel()
	}

	// Step 2.
	p.closeStdin()

	// Steps 3 to 5.
	forced := ""
	if !waitExit(ctx, p, rt.opts.stdinWait) {
		_ = signalGroup(p.cmd.Process, sigTerm)
		forced = "SIGTERM"
		if !waitExit(ctx, p, rt.opts.termWait) {
			_ = signalGroup(p.cmd.Process, sigKill)
			forced = "SIGKILL"
			<-p.exited // SIGKILL cannot be ignored; Wait returns promptly
		}
	}

	// The watcher fails every pending call (with ErrClosed, since closing
	// is set) once it has seen the exit.
	<-rt.watchDone
	// Our read ends may still be held open by a grandchild that inherited
	// the pipes; closing them releases the reader and the stderr drain.
	_ = p.stdout.Close()
	p.closeStderr()

	// Step 6.
	switch {
	case forced != "":
		return fmt.Errorf("a3s-code: bridge did not exit after shutdown and stdin EOF; sent %s (%s)", forced, p.describe())
	case !diedBefore && p.state != nil && !p.state.Success():
		return fmt.Errorf("a3s-code: bridge exited badly during close: %w", p.exitError())
	}
	return nil
}

// waitExit waits for the process up to d, or until ctx ends.
func waitExit(ctx context.Context, p *process, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return p.waitExit(0)
}
