package code

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzMessageReader feeds arbitrary bytes through the SDK's line reader and
// message decoder, the code that reads everything a bridge writes. CI runs
// it briefly (.ci/test.sh); run it longer with
//
//	go test -run '^$' -fuzz FuzzMessageReader -fuzztime 10m ./
//
// Invariants: no panic; every line respects the limit; the lines read are
// exactly the input's lines that fit (the oversized ones are skipped, and
// reading goes on after them); decoded messages are of a known kind.
func FuzzMessageReader(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}` + "\n",
		`{"jsonrpc":"2.0","method":"session/event","params":{"requestId":3,"seq":0,"event":{"version":1,"type":"text_delta","payload":{"text":"hi"}}}}` + "\n",
		`{"jsonrpc":"2.0","id":"bridge-1","method":"host/budget/checkBeforeLlm","params":{"sessionId":"s","estimatedTokens":1,"timeoutMs":5}}` + "\r\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}` + "\n" + `[1,2]` + "\n",
		"\n\n{\"jsonrpc\":\"2.0\"" + "\xff\xfe\n" + `{"id":` + "\n",
		string(bytes.Repeat([]byte("x"), 200)) + "\n{}\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), 64)
	}
	f.Fuzz(func(t *testing.T, input []byte, limit int) {
		if limit < 1 || limit > 4096 {
			limit = 64
		}
		lr := newLineReader(bytes.NewReader(input), limit)
		var got [][]byte
		for {
			line, err := lr.next()
			var tooLong *LineTooLongError
			if errors.As(err, &tooLong) {
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if len(line) > limit {
				t.Fatalf("line of %d bytes over the limit %d", len(line), limit)
			}
			got = append(got, append([]byte(nil), line...))
			if msg, err := decodeMessage(line); err == nil && msg.kind() == kindInvalid {
				t.Fatalf("decoded a message of no known kind: %q", line)
			}
		}
		var want [][]byte
		rest := input
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '\n')
			var line []byte
			terminated := i >= 0
			if terminated {
				line, rest = rest[:i], rest[i+1:]
			} else {
				line, rest = rest, nil
			}
			if len(line) > limit {
				continue
			}
			if terminated {
				// "\r\n" ends a line too; a final unterminated line is kept as is.
				line = bytes.TrimSuffix(line, []byte{'\r'})
			}
			want = append(want, line)
		}
		if len(got) != len(want) {
			t.Fatalf("read %d lines, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}
