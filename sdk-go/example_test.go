package code_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	code "github.com/a3s-lab/code-bridge/sdk-go"
)

// These examples need a bridge binary to run, so they are compiled but
// not executed by go test (no "Output:" comments).

func ExampleCreate() {
	ctx := context.Background()
	agent, err := code.Create(ctx, "agent.acl")
	if errors.Is(err, code.ErrBridgeNotFound) {
		log.Fatal(err) // the message says how to build and point at one
	}
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close(ctx)

	session, err := agent.Session(ctx, ".", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close(ctx)

	result, err := session.Run(ctx, "What does the README say?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Text)
}

func ExampleSession_Stream() {
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

	stream, err := session.Stream(ctx, "What does the README say?")
	if err != nil {
		log.Fatal(err)
	}
	for ev := range stream.Events() {
		switch ev.Type {
		case code.EventTextDelta:
			fmt.Print(ev.Text)
		case code.EventToolStart:
			fmt.Println("[tool]", ev.ToolName)
		}
	}
	if _, err := stream.Wait(); err != nil {
		log.Fatal(err)
	}
}

func ExampleNewRuntime() {
	// One bridge process shared by several agents.
	ctx := context.Background()
	rt, err := code.NewRuntime(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	coder, err := rt.CreateAgent(ctx, "coder.acl")
	if err != nil {
		log.Fatal(err)
	}
	reviewer, err := code.Create(ctx, "reviewer.acl", code.WithRuntime(rt))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(coder.ID(), reviewer.ID())
}

func ExampleSession_SetBudgetGuard() {
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

	err = session.SetBudgetGuard(ctx, &code.BudgetGuardHandlers{
		CheckBeforeLLM: func(_ context.Context, call code.BudgetLLMContext) (*code.BudgetDecision, error) {
			if call.EstimatedTokens > 10_000 {
				return &code.BudgetDecision{Decision: "deny", Resource: "tokens", Reason: "monthly cap reached"}, nil
			}
			return nil, nil // allow
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = session.Run(ctx, "Summarize this repository.")
	if errors.Is(err, code.ErrBudgetExhausted) {
		fmt.Println(err) // Budget exhausted on 'tokens': monthly cap reached
	}
}
