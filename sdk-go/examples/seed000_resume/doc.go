// The main.go next to this file is the Go sample of seed document 000
// (cluster extension points) copied unchanged except for the import path;
// it must keep compiling as written. Run it from this directory, where it
// finds agent.acl (the offline scripted model):
//
//	cd sdk-go/examples/seed000_resume && go run .
//
// It resumes run "run-id-from-node-a" of session "session-from-node-a"
// from the store ./.a3s/sessions, so node A must have left that run's
// loop checkpoint there (./.a3s/sessions/checkpoints/run-id-from-node-a.json);
// without it, it fails with "no loop checkpoint found for run
// 'run-id-from-node-a'". TestSeed000SamplesRunAsTheSeedShows in the
// package's tests plays node A (a run passivated after its first round)
// and then runs this sample.
package main
