// Command quickstart runs one prompt through the A3S Code bridge and
// streams what happens: text as it arrives, tools as they run, then the
// result.
//
//	cargo build -p a3s-code-bridge            # once, from the repository root
//	export A3S_CODE_BRIDGE=$PWD/target/debug/a3s-code-bridge
//	cd sdk-go && go run ./examples/quickstart -dir ..
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"

	code "github.com/a3s-lab/code-bridge/sdk-go"
)

func main() {
	config := flag.String("config", defaultConfig(), "agent configuration (ACL file or inline ACL)")
	dir := flag.String("dir", ".", "workspace directory")
	prompt := flag.String("prompt", "What is in this workspace?", "prompt to run")
	flag.Parse()

	// Ctrl-C cancels the run in the bridge instead of killing it mid-way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	agent, err := code.Create(ctx, *config)
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close(context.Background())

	session, err := agent.Session(ctx, *dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close(context.Background())

	stream, err := session.Stream(ctx, *prompt)
	if err != nil {
		log.Fatal(err)
	}
	for ev := range stream.Events() {
		switch ev.Type {
		case code.EventTextDelta:
			fmt.Print(ev.Text)
		case code.EventToolStart:
			fmt.Printf("[tool %s]\n", ev.ToolName)
		case code.EventToolEnd:
			fmt.Printf("[tool %s done]\n", ev.ToolName)
		case code.EventError:
			fmt.Printf("[error: %s]\n", ev.Error)
		}
	}
	result, err := stream.Wait()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\n\nrun %s: %d tool call(s), %d tokens\n",
		result.RunID, result.ToolCallsCount, result.Usage.TotalTokens)
}

// defaultConfig is agent.acl next to this file, so `go run
// ./examples/quickstart` works from any directory; agent.acl in the
// working directory wins when present.
func defaultConfig() string {
	if _, err := os.Stat("agent.acl"); err == nil {
		return "agent.acl"
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		return filepath.Join(filepath.Dir(file), "agent.acl")
	}
	return "agent.acl"
}
