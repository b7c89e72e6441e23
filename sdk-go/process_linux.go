//go:build linux

package code

import "syscall"

// sysProcAttr puts the bridge in its own process group, so that Close can
// signal it together with any children it spawned (tool processes), and
// asks the kernel to SIGKILL it if we die without closing it, so it can
// never be orphaned.
//
// Pdeathsig fires when the OS thread that forked the child exits, not the
// process. The Go runtime only ends a thread when a goroutine that called
// runtime.LockOSThread returns without unlocking; this SDK never does that
// around Start, so in practice the signal comes when the host process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
