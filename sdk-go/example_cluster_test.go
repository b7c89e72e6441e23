package code_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	code "github.com/a3s-lab/code-bridge/sdk-go"
)

// Compiled, not run (they need a bridge): see the Example functions of
// example_test.go.

func ExamplePermissionPolicy() {
	ctx := context.Background()
	agent, err := code.Create(ctx, "agent.acl")
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close(ctx)

	session, err := agent.Session(ctx, ".", &code.SessionOptions{
		PermissionPolicy: &code.PermissionPolicy{
			Allow:           []string{"read*", "ls*", "glob*", "grep*", "code_*"},
			Ask:             []string{"write*", "edit*"},
			DefaultDecision: code.PermissionDeny,
		},
		ConfirmPermission: func(ctx context.Context, r code.PermissionRequest) (code.PermissionDecision, error) {
			if r.ToolName == "write" {
				return code.PermissionDecision{Approved: true}, nil
			}
			return code.PermissionDecision{Reason: "only writes are confirmed"}, nil
		},
		ConfirmationTimeout: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close(ctx)

	stream, err := session.Stream(ctx, "Fix the typo in README.md.")
	if err != nil {
		log.Fatal(err)
	}
	for ev := range stream.Events() {
		if ev.Type == code.EventPermissionDenied {
			var d code.PermissionDenied
			if ev.Decode(&d) == nil {
				fmt.Println("refused:", d.ToolName, d.Reason)
			}
		}
	}
	if _, err := stream.Wait(); err != nil {
		log.Fatal(err)
	}
}

func ExampleSession_Passivate() {
	ctx := context.Background()
	agent, err := code.Create(ctx, "agent.acl")
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close(ctx)
	session, err := agent.Session(ctx, ".", &code.SessionOptions{
		SessionID:           "session-from-node-a",
		FileSessionStoreDir: "./.a3s/sessions",
	})
	if err != nil {
		log.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { _, err := session.Run(ctx, "Refactor the parser."); done <- err }()

	// The node is drained: stop at the next safe point, within a minute.
	runID, err := session.Passivate(ctx, "node drain", time.Now().Add(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	var e *code.Error
	if err := <-done; errors.Is(err, code.ErrPassivated) && errors.As(err, &e) {
		fmt.Println("resume elsewhere:", e.RunID())
	}
	if runID != nil {
		fmt.Println("run to resume:", *runID) // another node calls ResumeRun(*runID)
	}
}

func ExampleSession_ReadArtifactAll() {
	ctx := context.Background()
	agent, err := code.Create(ctx, "agent.acl")
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close(ctx)
	session, err := agent.Session(ctx, ".", nil)
	if err != nil {
		log.Fatal(err)
	}

	res, err := session.ReadFile(ctx, "big.log", nil)
	if errors.Is(err, code.ErrTool) {
		log.Fatal(err) // e.g. file not found, or outside the workspace
	}
	if err != nil {
		log.Fatal(err)
	}
	for _, uri := range code.ArtifactURIs(res.Output) {
		all, err := session.ReadArtifactAll(ctx, uri)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(all), "bytes")
	}
}
