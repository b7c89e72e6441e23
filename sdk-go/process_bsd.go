//go:build unix && !linux

package code

import "syscall"

// sysProcAttr puts the bridge in its own process group so that Close can
// signal it together with its children. These systems have no parent-death
// signal; the bridge still exits on its own when its stdin reaches EOF,
// which happens when this process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
