package code

import (
	"os"
	"os/exec"
)

// EnvBridgePath names the environment variable that points at the bridge
// binary when no WithBridgePath option is given.
const EnvBridgePath = "A3S_CODE_BRIDGE"

// BridgeBinaryName is the executable looked up on PATH last.
const BridgeBinaryName = "a3s-code-bridge"

// findBridge resolves the bridge binary: the explicit option, then
// $A3S_CODE_BRIDGE, then PATH. The first source that is set decides; a set
// but wrong path is an error rather than a silent fall-through to another
// binary.
func findBridge(explicit string) (string, error) {
	if explicit != "" {
		return checkBridge("WithBridgePath: "+explicit, explicit)
	}
	if env := os.Getenv(EnvBridgePath); env != "" {
		return checkBridge(EnvBridgePath+"="+env, env)
	}
	path, err := exec.LookPath(BridgeBinaryName)
	if err != nil {
		return "", &BridgeNotFoundError{Tried: []string{EnvBridgePath + " (unset)", BridgeBinaryName + " on PATH"}, Err: err}
	}
	return path, nil
}

func checkBridge(source, path string) (string, error) {
	// LookPath accepts a path with a separator as is, after checking that
	// it exists and is executable.
	if resolved, err := exec.LookPath(path); err == nil {
		return resolved, nil
	}
	if _, err := os.Stat(path); err != nil {
		return "", &BridgeNotFoundError{Tried: []string{source}, Err: err}
	}
	// It exists (e.g. a bare name in the working directory); let Start
	// report anything else, such as a missing execute bit.
	return path, nil
}
