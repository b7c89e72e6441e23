package code

import "sync"

// stderrTailBytes is how much of the bridge's stderr is kept for error
// messages: enough for a Rust panic with its backtrace line.
const stderrTailBytes = 64 << 10

// ringBuffer keeps the last size bytes written to it. It is an io.Writer so
// the stderr drain can write to it; it never blocks and never grows, so a
// chatty bridge cannot fill the pipe (which would hang it) or our memory.
// It is safe for concurrent use.
type ringBuffer struct {
	mu    sync.Mutex
	buf   []byte
	start int  // index of the oldest byte once full
	full  bool // buf has wrapped at least once
}

func newRingBuffer(size int) *ringBuffer {
	return &ringBuffer{buf: make([]byte, 0, size)}
}

func (r *ringBuffer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	size := cap(r.buf)
	if size == 0 {
		return n, nil
	}
	if len(p) >= size { // only the tail of p survives
		r.buf = append(r.buf[:0], p[len(p)-size:]...)
		r.start, r.full = 0, true
		return n, nil
	}
	if !r.full {
		room := size - len(r.buf)
		if len(p) <= room {
			r.buf = append(r.buf, p...)
			return n, nil
		}
		r.buf = append(r.buf, p[:room]...)
		p = p[room:]
		r.full = true
		r.start = 0
	}
	// Overwrite the oldest bytes, wrapping at the end.
	for len(p) > 0 {
		c := copy(r.buf[r.start:], p)
		p = p[c:]
		r.start = (r.start + c) % size
	}
	return n, nil
}

// String returns the kept bytes, oldest first.
func (r *ringBuffer) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return string(r.buf)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	out = append(out, r.buf[:r.start]...)
	return string(out)
}
