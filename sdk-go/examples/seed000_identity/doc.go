// The main.go next to this file is the Go sample of seed document 000
// (cluster extension points) copied unchanged except for the import path;
// it must keep compiling as written. Run it from this directory, where it
// finds agent.acl (the offline scripted model):
//
//	cd sdk-go/examples/seed000_identity && go run .
//
// Its workspace is the seed's /path/to/project, which must exist, and it
// persists the session and its tags in ./.a3s/sessions, which must be
// writable.
package main
