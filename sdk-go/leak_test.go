package code

import (
	"runtime"
	"testing"
	"time"
)

// checkNoLeaks records the goroutine count and registers a cleanup that
// fails the test if, after a grace period, more goroutines run than
// before. Call it first in a test (not with t.Parallel), so that its
// cleanup runs after every cleanup registered later (cleanups run last
// registered first), such as closing a runtime.
func checkNoLeaks(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			now := runtime.NumGoroutine()
			if now <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Errorf("goroutine leak: %d before, %d after\n%s", before, now, buf[:n])
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
