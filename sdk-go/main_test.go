package code

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// realBridgePath is the a3s-code-bridge binary the integration tests run;
// realBridgeSkip says why there is none.
var realBridgePath, realBridgeSkip string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fakeBridgeFlag {
		runFakeBridge(os.Args[2:])
		return
	}
	// The fake bridge is this binary; under -race it would sleep 1s at
	// exit (the race runtime's default atexit_sleep_ms) on every Close.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	locateRealBridge()
	os.Exit(m.Run())
}

// locateRealBridge finds the bridge: $A3S_CODE_BRIDGE, else the workspace's
// debug build (built here with cargo when missing).
func locateRealBridge() {
	if p := os.Getenv(EnvBridgePath); p != "" {
		realBridgePath = p
		return
	}
	p, err := filepath.Abs(filepath.Join("..", "target", "debug", BridgeBinaryName))
	if err != nil {
		realBridgeSkip = err.Error()
		return
	}
	if _, err := os.Stat(p); err == nil {
		realBridgePath = p
		return
	}
	if _, err := exec.LookPath("cargo"); err != nil {
		realBridgeSkip = "no " + p + " and no cargo to build it; set " + EnvBridgePath
		return
	}
	fmt.Fprintln(os.Stderr, "building the bridge: cargo build -p a3s-code-bridge")
	cmd := exec.Command("cargo", "build", "-p", "a3s-code-bridge")
	cmd.Dir = ".."
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		// Not a skip: a bridge that does not build is a failure to report.
		fmt.Fprintln(os.Stderr, "cargo build -p a3s-code-bridge failed:", err)
		os.Exit(1)
	}
	realBridgePath = p
}

// requireBridge returns the real bridge's path or skips the test.
func requireBridge(t testing.TB) string {
	t.Helper()
	if realBridgePath == "" {
		t.Skip("real bridge unavailable: " + realBridgeSkip)
	}
	return realBridgePath
}
