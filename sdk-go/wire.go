package code

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// wireMessage is any JSON-RPC 2.0 message on the pipe. Which kind it is
// follows from the fields present (see kind).
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type messageKind int

const (
	kindInvalid messageKind = iota
	kindRequest
	kindNotification
	kindResponse
)

func (m *wireMessage) kind() messageKind {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		return kindRequest
	case m.Method != "":
		return kindNotification
	case len(m.ID) > 0 && (m.Result != nil || m.Error != nil):
		return kindResponse
	}
	return kindInvalid
}

// hostID returns the numeric id of a response to one of our requests. Our
// ids are always int64; a string or null id (e.g. LINE_TOO_LONG answered
// with id null) is not ours.
func (m *wireMessage) hostID() (int64, bool) {
	if len(m.ID) == 0 || m.ID[0] == '"' || bytes.Equal(m.ID, []byte("null")) {
		return 0, false
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	return id, err == nil
}

// reverseID returns the string id of a bridge→host request ("bridge-…").
func (m *wireMessage) reverseID() (string, bool) {
	var s string
	if len(m.ID) == 0 || m.ID[0] != '"' || json.Unmarshal(m.ID, &s) != nil {
		return "", false
	}
	return s, true
}

// decodeMessage parses one line. Batches are never sent to a host, so an
// array is reported as an error like any other malformed line.
func decodeMessage(line []byte) (*wireMessage, error) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		return nil, errors.New("unexpected batch from the bridge")
	}
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	if m.kind() == kindInvalid {
		return nil, errors.New("message is neither request, notification nor response")
	}
	return &m, nil
}

// encodeLine marshals v as one line. encoding/json escapes control
// characters inside strings, so the result never holds a raw newline and
// the trailing '\n' is the only one.
func encodeLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends the '\n'
		return nil, err
	}
	return buf.Bytes(), nil
}

type outgoingRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type outgoingNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// outgoingResponse answers a reverse request. Result is always present on
// success, even as null (a budget "allow" is the JSON value null).
type outgoingResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

var jsonNull = json.RawMessage("null")
