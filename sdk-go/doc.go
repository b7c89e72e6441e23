// Package code is the Go SDK of A3S Code: it runs agent sessions in the
// a3s-code-bridge daemon, a child process that serves the Rust agent
// runtime over line-delimited JSON-RPC 2.0 on its stdin and stdout
// (protocol/README.md in the repository is the wire contract). The package
// is pure Go: no cgo, standard library only.
//
// # Quick start
//
//	ctx := context.Background()
//	agent, err := code.Create(ctx, "agent.acl") // or inline ACL text
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer agent.Close(ctx)
//
//	session, err := agent.Session(ctx, ".", nil)
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer session.Close(ctx)
//
//	stream, err := session.Stream(ctx, "Summarize this repository.")
//	if err != nil {
//		log.Fatal(err)
//	}
//	for ev := range stream.Events() {
//		if ev.Type == code.EventTextDelta {
//			fmt.Print(ev.Text)
//		}
//	}
//	result, err := stream.Wait()
//
// The bridge binary is found through WithBridgePath, then the environment
// variable A3S_CODE_BRIDGE, then a3s-code-bridge on PATH. Build it with
// `cargo build --release -p a3s-code-bridge` in the repository.
//
// # How it fits together
//
//	Go program
//	  │  Agent, Session, Stream            (this package's API)
//	  ▼
//	Runtime ── one bridge child per Runtime, shared by its agents
//	  │
//	  ├─ writer: one line per message under a one-slot write lock
//	  │      requests, $/cancelRequest, $/streamAck, answers ──► stdin
//	  │
//	  ├─ reader goroutine (bufio.Reader, maxLineBytes) ◄── stdout
//	  │      response ─────────► completes its pending call
//	  │      session/event ────► its stream's bounded buffer ─► forwarder ─► Events()
//	  │      host/budget/*,
//	  │      host/permission/request ─► handler goroutine (≤64), deadline = timeoutMs
//	  │      $/cancelRequest ──► cancels that handler's context
//	  │
//	  ├─ stderr drain ──► last 64 KiB kept (+ WithStderr copy) ◄── stderr
//	  └─ exit watcher: cmd.Wait; on exit every pending call fails with
//	     *BridgeExitedError carrying the stderr tail
//
// # Contracts
//
//   - Every method takes a context.Context first. Cancelling it sends
//     $/cancelRequest for that request and returns at once with an error
//     matching both ctx.Err() and ErrCancelled; the bridge stops the run
//     and the session stays usable.
//   - Errors from the bridge are *Error values; match them with errors.Is
//     against ErrBudgetExhausted, ErrSessionBusy, ErrSessionNotFound, …
//     A missing binary is *BridgeNotFoundError (ErrBridgeNotFound), a dead
//     bridge *BridgeExitedError (ErrBridgeExited).
//   - Streams are flow-controlled: the bridge sends at most
//     limits.streamWindow unacknowledged events and the SDK acknowledges
//     them as the consumer reads Events, so a slow consumer slows its own
//     run, not the others, and memory stays bounded.
//   - Budget guard and permission handlers run in their own goroutines
//     with the bridge's deadline; a panic is recovered and answered as an
//     error, which the bridge treats as deny (fail-closed). A handler that
//     returns after the deadline or after the bridge withdrew the question
//     gets no answer sent: the bridge has applied its own fail-closed rule.
//   - The child runs in its own process group with a parent-death signal
//     (Linux), so it never outlives the program; Close stops it in steps
//     (shutdown, stdin EOF, SIGTERM, SIGKILL).
//
// # Permissions (seed 004)
//
// SessionOptions.PermissionPolicy decides each tool call before it runs:
// deny rules, then allow, then ask, then DefaultDecision. Tools no call
// could pass are not even offered to the model (Session.Info lists the
// rest); a refused call is a tool error the model sees, with a
// permission_denied event. "Ask" goes to SessionOptions.ConfirmPermission,
// a PermissionHandler that works like the budget guard handlers: own
// goroutine, the bridge's deadline (ConfirmationTimeout) on its context,
// cancelled when the bridge withdraws the question, fail-closed on error,
// panic or timeout. The events confirmation_required,
// confirmation_received and confirmation_timeout trace the exchange.
//
//	session, err := agent.Session(ctx, ".", &code.SessionOptions{
//		PermissionPolicy: &code.PermissionPolicy{
//			Allow:           []string{"read*", "ls*", "glob*", "grep*"},
//			Ask:             []string{"write*", "edit*"},
//			DefaultDecision: code.PermissionDeny,
//		},
//		ConfirmPermission: func(ctx context.Context, r code.PermissionRequest) (code.PermissionDecision, error) {
//			return askTheUser(ctx, r.ToolName, r.Arguments) // zero value = reject
//		},
//		ConfirmationTimeout: 30 * time.Second,
//	})
//
// # Direct tools and artifacts
//
// Session.Tool runs one of the session's tools without the model (no
// permission prompt: the host is the authority), inside the workspace and
// with the same limits and events; ReadFile, ListDir, Glob and Grep are
// typed shortcuts. A tool's own failure (a path outside the workspace, a
// missing file) comes back as a *ToolError next to the result. Output over
// 32 KiB, from the model's calls or the host's, is kept as an artifact:
// the output holds a preview and an artifact:// URI (ArtifactURIs finds
// it); Session.ReadArtifact reads it by byte range and ReadArtifactAll
// reads all of it, checked against its sha256.
//
// # Persistence and the cluster seams (seed 000)
//
//   - SessionOptions.FileSessionStoreDir persists the session (identity
//     tags, history, usage, runs) and a loop checkpoint after every tool
//     round and tool result. A session created again with the same
//     SessionID and store, in any process, continues where it was; tags
//     given again take precedence. Session.Save writes the snapshot now.
//   - Session.ResumeRun continues a run from its checkpoint as a new run,
//     e.g. after the process that ran it died; errors match
//     ErrNoSessionStore and ErrCheckpointNotFound (the seed's messages).
//   - Session.Passivate stops the running prompt at its next safe point and
//     returns its run id; the run fails with ErrPassivated and (*Error).RunID
//     names it, for ResumeRun on another node.
//   - Session.InjectEvent delivers a host-made passivation_requested or
//     peer_invocation (PassivationRequestedEvent, PeerInvocationEvent) to
//     the running prompt's stream.
//   - Session.Runs lists the retained runs; SessionOptions.RetentionLimits
//     bounds them and the other in-memory stores (defaults: 64 runs, 2,048
//     events and 8 MiB of events per run, 8,192 trace events, 512 finished
//     sub-agent tasks).
//   - SessionOptions.HostEnv with both fields set makes two processes
//     produce the same events and byte-identical session files.
//
// # Events
//
// A Stream delivers every event the bridge sends, in order, whatever its
// type: types this package has no constant for are passed on unchanged.
// Event.Decode reads a payload into its struct (PermissionDenied,
// ConfirmationRequired, PassivationRequested, PeerInvocation, ToolEnd, …).
package code
