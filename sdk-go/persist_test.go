package code

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// Session stores, retention and replay against the real bridge, across
// separate bridge processes.

// threeAnswers reads README.md, then answers "first"; a later run on the
// same conversation answers "second" (turn N is played when the history
// holds N assistant messages).
var threeAnswers = script(
	toolTurn("read", `file_path = "README.md"`),
	textTurn("first"),
	textTurn("second"),
)

func TestBridgeSessionPersistsAcrossProcesses(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	dir, store := workspace(t), t.TempDir()
	const id = "persisted-session"

	// Process 1: a tagged session runs once.
	agent1 := newAgent(t, threeAnswers)
	s1 := openSession(t, agent1, dir, &SessionOptions{SessionID: id, FileSessionStoreDir: store,
		TenantID: "tenant-example", Principal: "principal-example",
		AgentTemplateID: "agent-template-example", CorrelationID: "trace-example"})
	first, err := s1.Run(ctx, "What does the README say?")
	if err != nil || first.Text != "first" {
		t.Fatalf("first run: %+v, %v", first, err)
	}
	must(t, s1.Save(ctx))
	must(t, agent1.Close(ctx)) // the bridge process exits

	// Process 2: the same id and store continue the session.
	agent2 := newAgent(t, threeAnswers)
	s2 := openSession(t, agent2, dir, &SessionOptions{SessionID: id, FileSessionStoreDir: store})
	info, err := s2.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{info.SessionID, str(info.TenantID), str(info.Principal), str(info.AgentTemplateID), str(info.CorrelationID)}
	want := []string{id, "tenant-example", "principal-example", "agent-template-example", "trace-example"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("restored tags: %v, want %v", got, want)
	}
	runs, err := s2.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != first.RunID || runs[0].Status != RunCompleted ||
		runs[0].Prompt != "What does the README say?" || runs[0].EndedMS == nil || runs[0].Ended().Before(runs[0].Started()) {
		t.Fatalf("restored runs: %+v", runs)
	}
	// The history continues: the model is at its third turn.
	second, err := s2.Run(ctx, "And then?")
	if err != nil || second.Text != "second" {
		t.Fatalf("second run: %+v, %v", second, err)
	}
	if runs, _ := s2.Runs(ctx); len(runs) != 2 || runs[1].ID != second.RunID {
		t.Fatalf("runs after the second run: %+v", runs)
	}
	must(t, agent2.Close(ctx))

	// Process 3: tags given again take precedence (a moved session is
	// relabelled); the others stay.
	agent3 := newAgent(t, threeAnswers)
	s3 := openSession(t, agent3, dir, &SessionOptions{SessionID: id, FileSessionStoreDir: store, TenantID: "tenant-moved"})
	info, err = s3.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if str(info.TenantID) != "tenant-moved" || str(info.Principal) != "principal-example" || str(info.CorrelationID) != "trace-example" {
		t.Fatalf("relabelled: %+v", info)
	}
}

func TestBridgeRetentionLimitsBoundRuns(t *testing.T) {
	checkNoLeaks(t)
	ctx := context.Background()
	var turns []string
	for i := 1; i <= 5; i++ {
		turns = append(turns, textTurn(fmt.Sprintf("answer %d", i)))
	}
	agent := newAgent(t, script(turns...))
	bounded := openSession(t, agent, t.TempDir(), &SessionOptions{RetentionLimits: &RetentionLimits{MaxRunsRetained: 2}})
	defaults := openSession(t, agent, t.TempDir(), &SessionOptions{RetentionLimits: &RetentionLimits{}})
	var last []string
	for i := 1; i <= 5; i++ {
		res, err := bounded.Run(ctx, fmt.Sprintf("prompt %d", i))
		if err != nil || res.Text != fmt.Sprintf("answer %d", i) {
			t.Fatalf("run %d: %+v, %v", i, res, err)
		}
		last = append(last, res.RunID)
		if _, err := defaults.Run(ctx, "again"); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := bounded.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != last[3] || runs[1].ID != last[4] || runs[1].Prompt != "prompt 5" {
		t.Fatalf("MaxRunsRetained 2 after 5 runs: %+v", runs)
	}
	if runs, err := defaults.Runs(ctx); err != nil || len(runs) != 5 {
		t.Fatalf("default limits: %d runs, %v", len(runs), err)
	}
}

// replayRun runs readThenAnswer in a bridge of its own with a
// deterministic HostEnv and a store, and returns its events.
func replayRun(t *testing.T, dir, store string) []Event {
	t.Helper()
	prefix, fixed := "replay", uint64(1_700_000_000_000)
	agent := newAgent(t, readThenAnswer)
	session := openSession(t, agent, dir, &SessionOptions{FileSessionStoreDir: store,
		HostEnv: &HostEnvConfig{SequentialIDPrefix: &prefix, FixedTimeMS: &fixed}})
	events, res, err := streamAll(t, session, "What does the README say?")
	if err != nil || res.Text != "The README says hello." {
		t.Fatalf("run: %+v, %v", res, err)
	}
	must(t, session.Save(context.Background()))
	must(t, agent.Close(context.Background()))
	return events
}

func TestBridgeDeterministicReplayAcrossProcesses(t *testing.T) {
	checkNoLeaks(t)
	dir := workspace(t)
	store1, store2 := t.TempDir(), t.TempDir()
	first := replayRun(t, dir, store1)
	second := replayRun(t, dir, store2)

	if len(first) != len(second) || len(first) < 8 {
		t.Fatalf("event counts %d and %d", len(first), len(second))
	}
	for i := range first {
		a, b := first[i], second[i]
		if a.Type != b.Type || a.Version != b.Version || a.Metadata != b.Metadata || !bytes.Equal(a.Payload, b.Payload) {
			t.Fatalf("event %d differs:\n%s %+v %s\n%s %+v %s", i, a.Type, a.Metadata, a.Payload, b.Type, b.Metadata, b.Payload)
		}
	}
	if first[0].Metadata.SessionID != "replay-session-1" || first[0].Metadata.TimestampMS != 1_700_000_000_000 {
		t.Fatalf("not deterministic: %+v", first[0].Metadata)
	}

	files1, files2 := filesUnder(t, store1), filesUnder(t, store2)
	names := make([]string, 0, len(files1))
	for name := range files1 {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(files1) == 0 || !reflect.DeepEqual(files1, files2) {
		t.Fatalf("session files differ: %v vs %d files", names, len(files2))
	}
	if !strings.HasPrefix(strings.Join(names, ","), "sessions/replay-session-1.json") {
		t.Fatalf("store files: %v", names)
	}
	var doc map[string]json.RawMessage
	must(t, json.Unmarshal([]byte(files1["sessions/replay-session-1.json"]), &doc))
	if string(doc["updated_ms"]) != "1700000000000" {
		t.Fatalf("snapshot: %s", files1["sessions/replay-session-1.json"])
	}
}
