package code

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReaderReadsLinesLongerThanScannerLimit(t *testing.T) {
	big := strings.Repeat("x", 200<<10) // bufio.Scanner fails at 64 KiB
	lr := newLineReader(strings.NewReader("a\n"+big+"\r\nb"), 1<<20)
	for i, want := range []string{"a", big, "b"} {
		got, err := lr.next()
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if string(got) != want {
			t.Fatalf("line %d: got %d bytes, want %d", i, len(got), len(want))
		}
	}
	if _, err := lr.next(); err != io.EOF {
		t.Fatalf("after last line: got %v, want io.EOF", err)
	}
}

func TestLineReaderSkipsOversizedLineAndReadsTheNext(t *testing.T) {
	oversized := strings.Repeat("y", 300<<10)
	lr := newLineReader(strings.NewReader("ok1\n"+oversized+"\nok2\n"), 100<<10)

	if got, err := lr.next(); err != nil || string(got) != "ok1" {
		t.Fatalf("first line: %q, %v", got, err)
	}
	_, err := lr.next()
	var tooLong *LineTooLongError
	if !errors.As(err, &tooLong) || tooLong.Limit != 100<<10 {
		t.Fatalf("oversized line: got %v, want *LineTooLongError with limit 100 KiB", err)
	}
	if got, err := lr.next(); err != nil || string(got) != "ok2" {
		t.Fatalf("line after the oversized one: %q, %v", got, err)
	}
}

func TestLineReaderLimitExcludesTheNewline(t *testing.T) {
	lr := newLineReader(strings.NewReader("12345\n123456\nend\n"), 5)
	if got, err := lr.next(); err != nil || string(got) != "12345" {
		t.Fatalf("line at the limit: %q, %v", got, err)
	}
	if _, err := lr.next(); err == nil {
		t.Fatal("line one byte over the limit was accepted")
	}
	if got, err := lr.next(); err != nil || string(got) != "end" {
		t.Fatalf("next line: %q, %v", got, err)
	}
}

func TestLineReaderOversizedLastLineWithoutNewline(t *testing.T) {
	lr := newLineReader(strings.NewReader("ok\n"+strings.Repeat("z", 100)), 10)
	lr.next()
	var tooLong *LineTooLongError
	if _, err := lr.next(); !errors.As(err, &tooLong) {
		t.Fatalf("got %v, want *LineTooLongError", err)
	}
	if _, err := lr.next(); err != io.EOF {
		t.Fatalf("got %v, want io.EOF", err)
	}
}

func TestLineReaderLimitCanChangeBetweenLines(t *testing.T) {
	lr := newLineReader(bytes.NewReader([]byte("aaaa\naaaa\n")), 2)
	if _, err := lr.next(); err == nil {
		t.Fatal("4-byte line accepted with limit 2")
	}
	lr.setLimit(4)
	if got, err := lr.next(); err != nil || string(got) != "aaaa" {
		t.Fatalf("after raising the limit: %q, %v", got, err)
	}
}
