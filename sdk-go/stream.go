package code

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// errStreamOverflow fails a stream whose bridge sent more events than the
// flow-control window allows.
var errStreamOverflow = errors.New("bridge sent more events than the stream window allows")

// Stream is a running session/stream call.
//
// Read Events until it is closed, then call Wait for the result:
//
//	for ev := range stream.Events() { ... }
//	result, err := stream.Wait()
//
// Flow control: the bridge sends at most limits.streamWindow events that
// this SDK has not acknowledged, and the SDK acknowledges an event only
// once the consumer has received it from Events. A slow consumer therefore
// slows its own run down, and memory stays bounded on both sides. It also
// means that a consumer who calls Events and then stops reading stalls the
// run until the context passed to Session.Stream ends.
//
// Calling Wait without ever having called Events is fine: the events are
// then acknowledged and discarded so the run can finish. Call Events before
// Wait if you want them.
type Stream struct {
	conn     *conn
	id       int64
	ackEvery int

	mu    sync.Mutex
	buf   chan streamItem // events received, not yet handed to the consumer
	ended bool            // buf is closed

	events   chan Event    // unbuffered: a send completes only when consumed
	consumer atomic.Bool   // Events was called
	drop     chan struct{} // closed: discard (but still ack) what is left
	dropOnce sync.Once

	done   chan struct{} // closed when result/err are set
	result *RunResult
	err    error
}

type streamItem struct {
	seq uint64
	ev  Event
}

func newStream(c *conn, window int) *Stream {
	if window <= 0 {
		window = defaultStreamWindow
	}
	ackEvery := window / 2
	if ackEvery < 1 {
		ackEvery = 1
	}
	return &Stream{
		conn:     c,
		ackEvery: ackEvery,
		// The window bounds the events the bridge may send beyond our last
		// ack, and we ack only what the consumer took, so window slots
		// always suffice; push reports the bridge breaking that rule.
		buf:    make(chan streamItem, window),
		events: make(chan Event),
		drop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Events returns the run's events in order. The channel is closed after
// the last one (or when the stream is cancelled or the bridge exits).
func (s *Stream) Events() <-chan Event {
	s.consumer.Store(true)
	return s.events
}

// Wait blocks until the run's result or error is known and returns it. It
// reads nothing from Events itself; see the type's comment on flow control.
func (s *Stream) Wait() (*RunResult, error) {
	if !s.consumer.Load() {
		s.discard()
	}
	<-s.done
	return s.result, s.err
}

func (s *Stream) discard() { s.dropOnce.Do(func() { close(s.drop) }) }

// push is called by the reader goroutine and never blocks. It returns
// false when the buffer is full, which a correct bridge never causes.
func (s *Stream) push(seq uint64, ev Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return true // finished or cancelled: late events are dropped
	}
	select {
	case s.buf <- streamItem{seq: seq, ev: ev}:
		return true
	default:
		return false
	}
}

// run awaits the response of the stream's request (started by
// Session.Stream) and finishes the stream.
func (s *Stream) run(ctx context.Context, p *pendingCall) {
	var result RunResult
	err := s.conn.await(ctx, s.id, "session/stream", p, &result)

	// Every event of this stream came before its response, and the reader
	// pushed each one before reading the next line, so buf holds them all.
	s.mu.Lock()
	s.ended = true
	close(s.buf)
	s.mu.Unlock()

	var rpcErr *Error
	if err != nil && !errors.As(err, &rpcErr) {
		// Cancelled, bridge gone or overflow: nobody should wait for the
		// remaining events, so drop them and let Events close.
		s.discard()
	}
	if err == nil {
		s.result = &result
	}
	s.err = err
	close(s.done)
}

// forward moves events from buf to the consumer, acknowledging them as
// they are taken. One goroutine per stream; it ends when buf is closed and
// drained, and then closes Events.
func (s *Stream) forward() {
	defer close(s.events)
	unacked := 0
	for item := range s.buf {
		select {
		case s.events <- item.ev:
		case <-s.drop:
		case <-s.conn.done:
			s.discard()
		}
		unacked++
		if unacked >= s.ackEvery {
			unacked = 0
			s.ack(item.seq)
		}
	}
}

// ack tells the bridge that every event up to seq has been consumed.
func (s *Stream) ack(seq uint64) {
	select {
	case <-s.done:
		return // the response is in: the bridge needs no more acks
	default:
	}
	_ = s.conn.notify(context.Background(), "$/streamAck", map[string]uint64{
		"requestId": uint64(s.id),
		"seq":       seq,
	})
}
