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
//	  │      host/budget/* ────► handler goroutine (≤64), deadline = timeoutMs
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
//   - Budget guard handlers run in their own goroutines with the bridge's
//     deadline; a panic is recovered and answered as an error, which the
//     bridge treats as deny (fail-closed).
//   - The child runs in its own process group with a parent-death signal
//     (Linux), so it never outlives the program; Close stops it in steps
//     (shutdown, stdin EOF, SIGTERM, SIGKILL).
package code
