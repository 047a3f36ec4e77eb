package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twostep/twostep/client"
)

// Run starts a workflow and waits for its answer.
func ExampleClient_Run() {
	gw := startGateway(0, nil) // a gateway on a local port, for the example
	defer gw.close()

	c, err := client.New(gw.url, aliceToken)
	if err != nil {
		panic(err)
	}
	res, err := c.Run(context.Background(), "Write a note, then tell me the answer",
		client.Upload{Name: "brief.txt", Content: strings.NewReader("The answer is in here.")})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status)
	fmt.Println(res.Answer())
	// Output:
	// completed
	// The answer is 42.
}

// Events follows a round as it runs, one message per step.
func ExampleClient_Events() {
	gw := startGateway(0, nil)
	defer gw.close()

	c, _ := client.New(gw.url, aliceToken)
	ctx := context.Background()
	wf, err := c.Create(ctx, client.CreateRequest{Prompt: "Write a note, then tell me the answer"})
	if err != nil {
		panic(err)
	}
	for ev, err := range c.Events(ctx, wf.ID) {
		if err != nil {
			panic(err)
		}
		if ev.Type == "message" {
			fmt.Println(strings.TrimSpace(ev.Message.Role + " " + ev.Message.Action + " " + ev.Message.Status))
		}
	}
	// Output:
	// user
	// action document.generate success
	// assistant
}

// A problem answer is a *client.Problem: another user's workflow is a 404.
func ExampleProblem() {
	gw := startGateway(0, nil)
	defer gw.close()

	alice, _ := client.New(gw.url, aliceToken)
	bob, _ := client.New(gw.url, bobToken)
	ctx := context.Background()
	wf, _ := alice.Create(ctx, client.CreateRequest{Prompt: "hello"})
	_, err := bob.Get(ctx, wf.ID)
	fmt.Println(client.IsNotFound(err))
	_, err = alice.Create(ctx, client.CreateRequest{Prompt: " "})
	var p *client.Problem
	if errors.As(err, &p) {
		fmt.Println(p.Status, p.Errors[0].Location)
	}
	// Output:
	// true
	// 422 body.prompt
}

// Wait follows a round that was started without waiting, showing each
// step as it commits, and returns the round's messages.
func ExampleClient_Wait() {
	gw := startGateway(0, nil)
	defer gw.close()

	c, _ := client.New(gw.url, aliceToken)
	ctx := context.Background()
	wf, err := c.Create(ctx, client.CreateRequest{Prompt: "Write a note, then tell me the answer"})
	if err != nil {
		panic(err)
	}
	res, err := c.Wait(ctx, wf.ID, 0, func(ev client.Event) {
		if ev.Type == "message" && ev.Message.Role == "action" {
			fmt.Println("step", ev.Message.Step, ev.Message.Action)
		}
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Answer())
	// Output:
	// step 1 document.generate
	// The answer is 42.
}

// ListAll walks every page of the user's workflows, newest first.
func ExampleClient_ListAll() {
	gw := startGateway(0, nil)
	defer gw.close()

	c, _ := client.New(gw.url, aliceToken)
	ctx := context.Background()
	for _, p := range []string{"first", "second", "third"} {
		if _, err := c.Create(ctx, client.CreateRequest{Prompt: p, Wait: 10 * time.Second}); err != nil {
			panic(err)
		}
	}
	for w, err := range c.ListAll(ctx, client.ListOptions{Limit: 2}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(w.Title, w.Status)
	}
	// Output:
	// third completed
	// second completed
	// first completed
}
