//go:build unix

package code

import (
	"os"
	"syscall"
)

var (
	sigTerm os.Signal = syscall.SIGTERM
	sigKill os.Signal = syscall.SIGKILL
)

// signalGroup sends sig to the bridge's whole process group (it leads one,
// see sysProcAttr), falling back to the process alone.
func signalGroup(p *os.Process, sig os.Signal) error {
	if s, ok := sig.(syscall.Signal); ok {
		if err := syscall.Kill(-p.Pid, s); err == nil {
			return nil
		}
	}
	return p.Signal(sig)
}
