package code

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Direct tool calls and artifacts against the real bridge.

func TestBridgeDirectTools(t *testing.T) {
	checkNoLeaks(t)
	_, session := realSession(t, nil)
	ctx := context.Background()
	info, err := session.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := info.Workspace
	must(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a\n\nfunc Hello() {}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "src", "b.go"), []byte("package b\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "lines.txt"), []byte("one\ntwo\nthree\n"), 0o644))

	res, err := session.ReadFile(ctx, "README.md", nil)
	if err != nil || res.IsError || !strings.Contains(res.Output, "hello") || res.RunID == "" {
		t.Fatalf("ReadFile: %+v, %v", res, err)
	}
	res, err = session.ReadFile(ctx, "lines.txt", &ReadOptions{Offset: 2, Limit: 1})
	if err != nil || !strings.HasPrefix(res.Output, "     2\ttwo\n") || strings.Contains(res.Output, "one") {
		t.Fatalf("ReadFile with offset: %+v, %v", res, err)
	}

	// Escaping the workspace is the tool's error, not the bridge's.
	res, err = session.ReadFile(ctx, "../outside.txt", nil)
	var toolErr *ToolError
	if !errors.Is(err, ErrTool) || !errors.As(err, &toolErr) || res == nil || !res.IsError {
		t.Fatalf("escape: %+v, %v; want a tool error", res, err)
	}
	if toolErr.Output != "path '../outside.txt' is outside the workspace" || toolErr.Tool != "read" || toolErr.RunID != res.RunID {
		t.Fatalf("escape: %+v", toolErr)
	}

	res, err = session.ListDir(ctx, "")
	if err != nil || !strings.Contains(res.Output, "README.md") || !strings.Contains(res.Output, "src") {
		t.Fatalf("ListDir: %+v, %v", res, err)
	}
	res, err = session.Glob(ctx, "*.go")
	if err != nil || !strings.Contains(res.Output, "src/a.go") || !strings.Contains(res.Output, "src/b.go") || strings.Contains(res.Output, "README") {
		t.Fatalf("Glob: %+v, %v", res, err)
	}
	res, err = session.Grep(ctx, "^func", &GrepOptions{Glob: "*.go"})
	if err != nil || !strings.Contains(res.Output, "Hello") || strings.Contains(res.Output, "package b") {
		t.Fatalf("Grep: %+v, %v", res, err)
	}
	res, err = session.Grep(ctx, "HELLO", &GrepOptions{Path: "src", CaseInsensitive: true})
	if err != nil || !strings.Contains(res.Output, "Hello") {
		t.Fatalf("Grep -i: %+v, %v", res, err)
	}

	// Not a tool at all: the bridge refuses the request.
	if _, err := session.Tool(ctx, "no_such_tool", nil); !errors.Is(err, ErrInvalidParams) || errors.Is(err, ErrTool) {
		t.Fatalf("unknown tool: %v", err)
	}

	// Every call the bridge ran is a run of its own.
	runs, err := session.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 7 || runs[0].Prompt != "tool:read" || runs[0].Status != RunCompleted || runs[2].Status != RunFailed {
		t.Fatalf("runs: %+v", runs)
	}
}

// bigFile writes a file of n lines with multi-byte characters and returns
// what the read tool makes of it.
func bigFile(t *testing.T, path string, n int) string {
	t.Helper()
	var content, formatted strings.Builder
	for i := 1; i <= n; i++ {
		line := fmt.Sprintf("line %04d: ünïcödé ✓ 日本語 %s", i, strings.Repeat("x", i%40))
		content.WriteString(line + "\n")
		fmt.Fprintf(&formatted, "%6d\t%s\n", i, line)
	}
	must(t, os.WriteFile(path, []byte(content.String()), 0o644))
	return formatted.String()
}

func TestBridgeLargeReadBecomesAnArtifact(t *testing.T) {
	checkNoLeaks(t)
	agent := newAgent(t, script(toolTurn("read", `file_path = "big.txt"`), textTurn("Read it.")))
	dir := t.TempDir()
	want := bigFile(t, filepath.Join(dir, "big.txt"), 1500)
	if len(want) < 64<<10 {
		t.Fatalf("test file too small: %d bytes", len(want))
	}
	session := openSession(t, agent, dir, nil)
	ctx := context.Background()

	events, _, err := streamAll(t, session, "Read big.txt.")
	if err != nil {
		t.Fatal(err)
	}
	var end ToolEnd
	if !firstEvent(t, events, EventToolEnd, &end) || end.IsError {
		t.Fatalf("tool_end: %+v", end)
	}
	uris := ArtifactURIs(end.Output)
	if len(uris) != 1 || !strings.HasPrefix(uris[0], "artifact://"+session.SessionID()+"/") ||
		len(end.Output) > 4<<10 || !strings.Contains(end.Output, "output truncated") {
		t.Fatalf("the model should see a preview and one URI, got %d bytes, URIs %v", len(end.Output), uris)
	}

	got, err := session.ReadArtifactAll(ctx, uris[0])
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("artifact differs from the read output: %d bytes, want %d", len(got), len(want))
	}

	// By hand, in small slices by id: no slice splits a character.
	id := uris[0][strings.LastIndex(uris[0], "/")+1:]
	var b strings.Builder
	for offset := 0; ; {
		slice, err := session.ReadArtifact(ctx, id, offset, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(slice.Data) > 1000 || !utf8.ValidString(slice.Data) || slice.Offset != offset || slice.Total != len(want) || slice.URI != uris[0] {
			t.Fatalf("slice at %d: %d bytes, offset %d, total %d, uri %s", offset, len(slice.Data), slice.Offset, slice.Total, slice.URI)
		}
		b.WriteString(slice.Data)
		if slice.EOF {
			break
		}
		offset = slice.Next()
	}
	if b.String() != want {
		t.Fatal("the slices do not add up to the artifact")
	}

	// A direct read of the same file is kept the same way.
	res, err := session.ReadFile(ctx, "big.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if uris := ArtifactURIs(res.Output); len(uris) != 1 {
		t.Fatalf("direct read: %d URIs", len(uris))
	} else if got, err := session.ReadArtifactAll(ctx, uris[0]); err != nil || got != want {
		t.Fatalf("direct read artifact: %d bytes, %v", len(got), err)
	}

	if _, err := session.ReadArtifact(ctx, "artifact://another-session/"+id, 0, 0); !errors.Is(err, ErrArtifactNotFound) {
		t.Fatalf("another session's URI: %v", err)
	}
	if _, err := session.ReadArtifact(ctx, id, len(want)+1, 0); !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("offset past the end: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
