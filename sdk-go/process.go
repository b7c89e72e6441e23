package code

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is the bridge child and its three pipes.
//
// The pipes are made with os.Pipe instead of cmd.StdoutPipe/StderrPipe:
// exec.Cmd.Wait closes the pipes it made as soon as the process exits,
// which would throw away the last stderr lines (the panic message we want
// in BridgeExitedError) and any reply still in the pipe. With our own pipes
// cmd.Wait only waits for the process, and we read to EOF ourselves.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our write end of the child's stdin
	stdout *os.File // our read end of the child's stdout
	stderr *os.File // our read end of the child's stderr

	stderrTail *ringBuffer
	stderrDone chan struct{} // closed when the stderr drain hit EOF

	exited chan struct{} // closed once cmd.Wait returned
	state  *os.ProcessState

	stdinOnce sync.Once
}

// startProcess starts path with args. The copy writer, if any, receives
// everything the child writes on stderr.
func startProcess(path string, args []string, copyTo io.Writer) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}

	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("a3s-code: start %s: %w", path, err)
	}
	// The child holds its own copies now; ours would keep the pipes open
	// and hide the child's exit (no EOF) from the readers.
	closeAll(inR, outW, errW)

	p := &process{
		cmd:        cmd,
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		stderrTail: newRingBuffer(stderrTailBytes),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	go p.drainStderr(errR, copyTo)
	go func() {
		_ = cmd.Wait() // the exit status is read from ProcessState
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// drainStderr always reads the child's stderr, whether or not anybody
// wants it: a full stderr pipe blocks the child's next log line and hangs
// it. The tail is kept for error messages; copyTo gets a copy (a slow
// copyTo slows the drain, so it should not block for long).
func (p *process) drainStderr(r *os.File, copyTo io.Writer) {
	defer close(p.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = p.stderrTail.Write(buf[:n])
			if copyTo != nil {
				_, _ = copyTo.Write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// closeStdin closes our end of the child's stdin: the bridge reads EOF,
// closes its sessions and exits 0.
func (p *process) closeStdin() {
	p.stdinOnce.Do(func() { _ = p.stdin.Close() })
}

// closeStderr releases the stderr drain even if a grandchild still holds
// the pipe open.
func (p *process) closeStderr() { _ = p.stderr.Close() }

// waitExit waits up to d for the child to exit.
func (p *process) waitExit(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitError describes the finished child. Call it after exited is closed;
// it waits briefly for the stderr drain so the last lines are included (a
// grandchild holding stderr open must not hold us up for long).
func (p *process) exitError() *BridgeExitedError {
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
	e := &BridgeExitedError{ExitCode: -1, Stderr: p.stderrTail.String()}
	if p.state != nil {
		e.ExitCode = p.state.ExitCode()
		if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	}
	return e
}

// describe renders the exit for Close's report.
func (p *process) describe() string {
	if p.state == nil {
		return "still running"
	}
	return strings.TrimSpace(p.state.String())
}
