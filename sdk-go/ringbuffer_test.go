package code

import (
	"strings"
	"testing"
)

func TestRingBufferKeepsTheTail(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   string
	}{
		{"empty", nil, ""},
		{"fits", []string{"ab", "cd"}, "abcd"},
		{"exactly full", []string{"abcd", "ef"}, "abcdef"},
		{"wraps once", []string{"abcd", "efgh"}, "cdefgh"},
		{"wraps many times", []string{"abc", "def", "ghi", "jkl", "m"}, "hijklm"},
		{"one write larger than the buffer", []string{"x", "0123456789"}, "456789"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRingBuffer(6)
			for _, w := range tc.writes {
				if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := r.String(); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRingBufferByteByByteMatchesSuffix(t *testing.T) {
	r := newRingBuffer(7)
	var all strings.Builder
	for i := 0; i < 100; i++ {
		b := []byte{byte('a' + i%26)}
		r.Write(b)
		all.Write(b)
		s := all.String()
		want := s
		if len(s) > 7 {
			want = s[len(s)-7:]
		}
		if got := r.String(); got != want {
			t.Fatalf("after %d bytes: got %q, want %q", i+1, got, want)
		}
	}
}
