package code

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The seed 000 samples in examples/seed000_* are built and run as they
// are, each in a working directory of its own holding its agent.acl, with
// the real bridge; their output must be what the seed shows.

var sampleNames = []string{"seed000_budget", "seed000_identity", "seed000_replay", "seed000_resume"}

// buildSamples compiles the samples into a directory and returns it.
func buildSamples(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if _, err := os.Stat(goTool); err != nil {
		t.Skip("no go command to build the samples with")
	}
	out := t.TempDir()
	args := []string{"build", "-o", out + string(filepath.Separator)}
	for _, name := range sampleNames {
		args = append(args, "./examples/"+name)
	}
	cmd := exec.Command(goTool, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// sampleDir is a fresh working directory holding the sample's agent.acl.
func sampleDir(t *testing.T, name string) (dir, acl string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("examples", name, "agent.acl"))
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "agent.acl"), b, 0o644))
	return dir, string(b)
}

// runSample runs a built sample in dir with the real bridge and returns
// its standard output.
func runSample(t *testing.T, bin, name, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), EnvBridgePath+"="+requireBridge(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func TestSeed000SamplesRunAsTheSeedShows(t *testing.T) {
	checkNoLeaks(t)
	requireBridge(t)
	if testing.Short() {
		t.Skip("builds and runs the samples")
	}
	bin := buildSamples(t)

	t.Run("budget", func(t *testing.T) {
		dir, _ := sampleDir(t, "seed000_budget")
		out := runSample(t, bin, "seed000_budget", dir)
		var text string
		var spent, limit int
		lines := strings.SplitN(out, "\n", 2)
		if len(lines) == 2 {
			text = lines[0]
			fmt.Sscanf(lines[1], "spent %d / %d tokens", &spent, &limit)
		}
		if text != "I listed the workspace; everything is in place." || spent <= 0 || limit != 50_000 {
			t.Fatalf("output:\n%s", out)
		}
	})

	t.Run("replay", func(t *testing.T) {
		dir, _ := sampleDir(t, "seed000_replay")
		if out := runSample(t, bin, "seed000_replay", dir); out != "replay-session-1\n" {
			t.Fatalf("output: %q", out)
		}
	})

	t.Run("identity", func(t *testing.T) {
		dir, _ := sampleDir(t, "seed000_identity")
		ensureSeedProjectDir(t)
		out := runSample(t, bin, "seed000_identity", dir)
		want := "tenant: tenant-example\nprincipal: principal-example\n" +
			"template: agent-template-example\ncorrelation: trace-example\n"
		if out != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out, want)
		}
		// The tags were persisted in the store next to agent.acl.
		files := filesUnder(t, filepath.Join(dir, ".a3s", "sessions"))
		if len(files) != 1 {
			t.Fatalf("store: %v", files)
		}
		for name, doc := range files {
			if !strings.HasPrefix(name, "sessions/") || !strings.Contains(doc, `"tenant_id":"tenant-example"`) {
				t.Fatalf("%s: %s", name, doc)
			}
		}
	})

	t.Run("resume", func(t *testing.T) {
		dir, acl := sampleDir(t, "seed000_resume")
		const text = "Resumed from node A's checkpoint: the workspace is listed."
		if !strings.Contains(acl, text) {
			t.Fatalf("examples/seed000_resume/agent.acl no longer answers %q", text)
		}
		prepareNodeA(t, acl, dir)
		if out := runSample(t, bin, "seed000_resume", dir); out != text+"\n" {
			t.Fatalf("output: %q, want %q", out, text+"\n")
		}
	})
}

// prepareNodeA plays node A of the resume sample: in a bridge process of
// its own, session "session-from-node-a" (store ./.a3s/sessions of dir)
// runs until it is passivated after its first round. Its run id is
// generated, so the checkpoint the bridge wrote is then moved to the run
// id the sample resumes, "run-id-from-node-a": same document, with run_id
// changed, under <store>/checkpoints/<encoded run id>.json.
func prepareNodeA(t *testing.T, acl, dir string) {
	t.Helper()
	store := filepath.Join(dir, ".a3s", "sessions")
	agent := newAgent(t, acl)
	s := openSession(t, agent, dir, &SessionOptions{SessionID: "session-from-node-a", FileSessionStoreDir: store})
	_, runID, err := passivateAfterFirstRound(t, s, "moving to node B", time.Time{})
	if !errors.Is(err, ErrPassivated) {
		t.Fatalf("node A's run: %v", err)
	}
	must(t, agent.Close(context.Background()))

	from := filepath.Join(store, "checkpoints", storeKey(runID)+".json")
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatalf("node A left no checkpoint: %v", err)
	}
	var doc map[string]json.RawMessage
	must(t, json.Unmarshal(raw, &doc))
	var cp struct {
		SchemaVersion int             `json:"schema_version"`
		SessionID     string          `json:"session_id"`
		RunID         string          `json:"run_id"`
		Turn          int             `json:"turn"`
		Pending       json.RawMessage `json:"pending"`
		History       []any           `json:"history"`
	}
	must(t, json.Unmarshal(raw, &cp))
	if cp.SchemaVersion != 1 || cp.SessionID != "session-from-node-a" || cp.RunID != runID ||
		cp.Turn != 1 || string(cp.Pending) != "null" || len(cp.History) != 3 {
		t.Fatalf("checkpoint of node A: %s", raw)
	}
	doc["run_id"], _ = json.Marshal("run-id-from-node-a")
	moved, err := json.Marshal(doc)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(store, "checkpoints", storeKey("run-id-from-node-a")+".json"), moved, 0o644))
	must(t, os.Remove(from))
}

// ensureSeedProjectDir makes the identity sample's workspace,
// /path/to/project, exist for the test (the sample must run unchanged),
// and removes what it created afterwards.
func ensureSeedProjectDir(t *testing.T) {
	t.Helper()
	const project = "/path/to/project"
	if info, err := os.Stat(project); err == nil && info.IsDir() {
		return
	}
	created := ""
	for p := project; p != "/"; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		}
		created = p
	}
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Skipf("the identity sample opens %s, which cannot be made here: %v", project, err)
	}
	t.Cleanup(func() {
		if created != "" {
			_ = os.RemoveAll(created)
		}
	})
}
