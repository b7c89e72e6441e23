package code

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync/atomic"
)

// defaultMaxLineBytes applies until initialize tells the bridge's limit
// (protocol/README.md, "Framing").
const defaultMaxLineBytes = 16 << 20

// keepBufferBytes is the largest line buffer kept between lines; a buffer
// grown for one huge line is released instead of pinning that memory.
const keepBufferBytes = 1 << 20

// LineTooLongError reports a line over the limit. The line has been
// discarded up to its newline and the next line can be read.
type LineTooLongError struct {
	Limit int
	// Read is how many bytes the line had when it was found too long (the
	// rest was skipped without being counted).
	Read int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("a3s-code: line from the bridge longer than %d bytes discarded", e.Limit)
}

// lineReader reads newline-terminated lines of any length up to a limit.
// It uses bufio.Reader.ReadSlice rather than bufio.Scanner, whose 64 KiB
// token cap fails on large tool outputs and cannot skip past a bad line.
//
// Only one goroutine may call next; setLimit may be called from any.
type lineReader struct {
	r     *bufio.Reader
	limit atomic.Int64
	buf   []byte
}

func newLineReader(r io.Reader, limit int) *lineReader {
	lr := &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
	lr.setLimit(limit)
	return lr
}

func (lr *lineReader) setLimit(n int) {
	if n <= 0 {
		n = defaultMaxLineBytes
	}
	lr.limit.Store(int64(n))
}

// next returns the next line without its "\n" (or "\r\n"). The slice is
// only valid until the next call. A final line without newline is returned
// before io.EOF. An oversized line yields *LineTooLongError after it has
// been skipped; reading may go on.
func (lr *lineReader) next() ([]byte, error) {
	if cap(lr.buf) > keepBufferBytes {
		lr.buf = nil
	}
	lr.buf = lr.buf[:0]
	limit := int(lr.limit.Load())
	for {
		chunk, err := lr.r.ReadSlice('\n')
		content := len(lr.buf) + len(chunk)
		if err == nil {
			content-- // the newline does not count toward the limit
		}
		if content > limit {
			return nil, lr.skipLine(err, limit, content)
		}
		lr.buf = append(lr.buf, chunk...)
		switch err {
		case nil:
			line := lr.buf[:len(lr.buf)-1]
			return bytes.TrimSuffix(line, []byte{'\r'}), nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(lr.buf) > 0 {
				return lr.buf, nil // the next call reports io.EOF
			}
		}
		return nil, err
	}
}

// skipLine discards the rest of an oversized line. err is the error of the
// ReadSlice that found the line too long.
func (lr *lineReader) skipLine(err error, limit, read int) error {
	for err == bufio.ErrBufferFull {
		_, err = lr.r.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return err
	}
	return &LineTooLongError{Limit: limit, Read: read}
}
