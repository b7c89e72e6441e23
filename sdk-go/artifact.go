package code

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
)

// Artifacts: tool output over the inline limit (32 KiB) is kept by the
// session as an artifact; the model (and a tool_end event or a direct
// ToolResult) gets a preview, the size, the sha256 and the artifact's URI,
// artifact://<session id>/<artifact id>. The host reads it back by byte
// range. Artifacts live in the bridge's memory, per session, bounded by
// count and bytes: the oldest may be evicted (ErrArtifactNotFound).

// ArtifactSlice is a byte range of an artifact.
type ArtifactSlice struct {
	URI string `json:"uri"`
	// Offset is the byte offset of Data in the artifact.
	Offset int `json:"offset"`
	// Data is UTF-8 text; a slice never splits a character, so it may
	// hold a few bytes less than asked for.
	Data string `json:"data"`
	// EOF is true when Data reaches the end of the artifact.
	EOF bool `json:"eof"`
	// Total is the artifact's size in bytes.
	Total int `json:"total"`
	// SHA256 is the lowercase hex sha256 of the whole artifact.
	SHA256 string `json:"sha256"`
}

// Next returns the offset of the byte after this slice: where to continue.
func (a *ArtifactSlice) Next() int { return a.Offset + len(a.Data) }

// ReadArtifact reads up to limit bytes (limit <= 0: the bridge's maximum,
// 1 MiB) from byte offset of the artifact named by its id or its
// artifact:// URI. offset must be 0, a previous slice's Next, or otherwise
// on a character boundary. Errors: ErrArtifactNotFound (never stored, or
// evicted), ErrInvalidParams for a bad offset.
func (s *Session) ReadArtifact(ctx context.Context, uriOrID string, offset, limit int) (*ArtifactSlice, error) {
	params := map[string]any{"sessionId": s.id, "artifact": uriOrID, "offset": offset}
	if limit > 0 {
		params["limit"] = limit
	}
	var res ArtifactSlice
	if err := s.rt.call(ctx, "session/artifact", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ReadArtifactAll reads a whole artifact, slice by slice, and checks it
// against the size and sha256 the bridge reports.
func (s *Session) ReadArtifactAll(ctx context.Context, uriOrID string) (string, error) {
	var (
		b      strings.Builder
		offset int
		want   string
		total  int
	)
	for {
		slice, err := s.ReadArtifact(ctx, uriOrID, offset, 0)
		if err != nil {
			return "", err
		}
		if offset == 0 {
			want, total = slice.SHA256, slice.Total
			b.Grow(total)
		} else if slice.SHA256 != want || slice.Total != total {
			return "", fmt.Errorf("a3s-code: artifact %s changed while it was read", uriOrID)
		}
		b.WriteString(slice.Data)
		if slice.EOF {
			break
		}
		if len(slice.Data) == 0 {
			return "", fmt.Errorf("a3s-code: artifact %s: empty slice at offset %d before its end", uriOrID, offset)
		}
		offset = slice.Next()
	}
	data := b.String()
	sum := sha256.Sum256([]byte(data))
	if len(data) != total || hex.EncodeToString(sum[:]) != want {
		return "", fmt.Errorf("a3s-code: artifact %s: read %d bytes that do not match its size %d and sha256 %s",
			uriOrID, len(data), total, want)
	}
	return data, nil
}

// artifactScheme is the URI scheme of artifacts.
const artifactScheme = "artifact://"

// ArtifactURIs returns the artifact:// URIs mentioned in text, such as a
// tool's truncated output, in order. A URI ends at the first white space.
func ArtifactURIs(text string) []string {
	var uris []string
	for {
		i := strings.Index(text, artifactScheme)
		if i < 0 {
			return uris
		}
		text = text[i:]
		end := strings.IndexFunc(text, unicode.IsSpace)
		if end < 0 {
			end = len(text)
		}
		if end > len(artifactScheme) {
			uris = append(uris, text[:end])
		}
		text = text[end:]
	}
}
