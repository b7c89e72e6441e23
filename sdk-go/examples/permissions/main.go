// Command permissions runs a read-only session: the policy of seed 004
// allows reading tools, denies writing ones, and asks the host (here: the
// terminal) about anything else. The offline scripted model tries to write
// a file, which the policy refuses, then reads instead.
//
//	go run ./examples/permissions -dir ..
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"

	code "github.com/a3s-lab/code-bridge/sdk-go"
)

func main() {
	config := flag.String("config", defaultConfig(), "agent configuration (ACL file or inline ACL)")
	dir := flag.String("dir", ".", "workspace directory")
	flag.Parse()

	ctx := context.Background()
	agent, err := code.Create(ctx, *config)
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close(ctx)

	session, err := agent.Session(ctx, *dir, &code.SessionOptions{
		PermissionPolicy: &code.PermissionPolicy{
			Allow:           []string{"read*", "ls*", "glob*", "grep*", "code_*"},
			Deny:            []string{"write*", "edit*", "patch*", "bash*", "git*"},
			DefaultDecision: code.PermissionDeny,
		},
		// Asked only for rules in Ask; here it documents the shape.
		ConfirmPermission: func(_ context.Context, req code.PermissionRequest) (code.PermissionDecision, error) {
			return code.PermissionDecision{Approved: false, Reason: "read-only session"}, nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close(ctx)

	info, err := session.Info(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tools offered to the model:", info.Tools)

	stream, err := session.Stream(ctx, "Find the authentication entry points. Do not change files.")
	if err != nil {
		log.Fatal(err)
	}
	for event := range stream.Events() {
		switch event.Type {
		case code.EventTextDelta:
			fmt.Print(event.Text)
		case code.EventToolStart:
			fmt.Printf("\n→ %s\n", event.ToolName)
		case code.EventPermissionDenied:
			var denied code.PermissionDenied
			if err := event.Decode(&denied); err == nil {
				fmt.Printf("  denied: %s\n", denied.Reason)
			}
		}
	}
	result, err := stream.Wait()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\n%d tool call(s), %d tokens\n", result.ToolCallsCount, result.Usage.TotalTokens)
}

// defaultConfig is the agent.acl next to this file, or the inline default.
func defaultConfig() string {
	_, file, _, ok := runtime.Caller(0)
	if ok {
		path := filepath.Join(filepath.Dir(file), "agent.acl")
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	return "agent.acl"
}
