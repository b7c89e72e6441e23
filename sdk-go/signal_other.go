//go:build !unix

package code

import (
	"os"
	"syscall"
)

var (
	sigTerm os.Signal = os.Kill // no SIGTERM: the polite stage is stdin EOF
	sigKill os.Signal = os.Kill
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, sig os.Signal) error { return p.Signal(sig) }
