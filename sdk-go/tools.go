package code

import (
	"context"
	"errors"
	"fmt"
)

// Direct tool calls (session/tool): the host runs one of the session's
// tools itself, without the model. The host is the authority, so there is
// no permission check, but everything else is as for the model's calls:
// the workspace boundary, output limits (large output becomes an
// artifact), tool_start/tool_end events and a run record ("tool:<name>").

// ToolResult is what a direct tool call produced.
type ToolResult struct {
	// RunID is the run recorded for this call (see Session.Runs).
	RunID string `json:"runId"`
	// Output is the tool's output; over the inline limit (32 KiB) it is a
	// preview followed by the artifact's URI (see ArtifactURIs).
	Output string `json:"output"`
	// IsError marks a tool error: bad arguments, a path outside the
	// workspace, a missing file, ...
	IsError bool `json:"isError"`
}

// ErrTool matches every *ToolError with errors.Is.
var ErrTool = errors.New("a3s-code: tool error")

// ToolError is a tool's own failure (IsError), as opposed to a failure to
// run the tool at all (an *Error from the bridge, e.g. ErrInvalidParams
// for an unknown tool).
type ToolError struct {
	Tool   string
	RunID  string
	Output string // the tool's message, e.g. "path '../x' is outside the workspace"
}

func (e *ToolError) Error() string        { return fmt.Sprintf("a3s-code: %s: %s", e.Tool, e.Output) }
func (e *ToolError) Is(target error) bool { return target == ErrTool }

// Tool runs the tool name with args (anything that encodes as a JSON
// object; nil for none). When the tool itself fails, the result is
// returned together with a *ToolError (errors.Is(err, ErrTool)), so
// callers that only check err do not take a failure for output.
func (s *Session) Tool(ctx context.Context, name string, args any) (*ToolResult, error) {
	params := map[string]any{"sessionId": s.id, "name": name}
	if args != nil {
		params["arguments"] = args
	}
	var res ToolResult
	if err := s.rt.call(ctx, "session/tool", params, &res); err != nil {
		return nil, err
	}
	if res.IsError {
		return &res, &ToolError{Tool: name, RunID: res.RunID, Output: res.Output}
	}
	return &res, nil
}

// ReadOptions page through a file by lines.
type ReadOptions struct {
	// Offset is the first line to return, 1-based (default 1).
	Offset int
	// Limit is the most lines to return (default 2000).
	Limit int
}

// ReadFile runs the read tool: the file's lines, numbered, from a path
// relative to the workspace (or absolute inside it). opts may be nil.
func (s *Session) ReadFile(ctx context.Context, path string, opts *ReadOptions) (*ToolResult, error) {
	args := map[string]any{"file_path": path}
	if opts != nil {
		if opts.Offset > 0 {
			args["offset"] = opts.Offset
		}
		if opts.Limit > 0 {
			args["limit"] = opts.Limit
		}
	}
	return s.Tool(ctx, "read", args)
}

// ListDir runs the ls tool on a directory of the workspace ("" for its
// root).
func (s *Session) ListDir(ctx context.Context, path string) (*ToolResult, error) {
	args := map[string]any{}
	if path != "" {
		args["path"] = path
	}
	return s.Tool(ctx, "ls", args)
}

// Glob runs the glob tool over the workspace: a pattern without '/'
// matches file names at any depth.
func (s *Session) Glob(ctx context.Context, pattern string) (*ToolResult, error) {
	return s.Tool(ctx, "glob", map[string]any{"pattern": pattern})
}

// GrepOptions narrow a Grep.
type GrepOptions struct {
	// Path is the file or directory to search (default the workspace).
	Path string
	// Glob only searches files matching it, e.g. "*.go".
	Glob            string
	CaseInsensitive bool
	// Context is the lines shown before and after each match.
	Context int
	// MaxResults bounds the matching lines returned (default 200).
	MaxResults int
}

// Grep runs the grep tool: lines matching the regular expression pattern.
// opts may be nil.
func (s *Session) Grep(ctx context.Context, pattern string, opts *GrepOptions) (*ToolResult, error) {
	args := map[string]any{"pattern": pattern}
	if opts != nil {
		if opts.Path != "" {
			args["path"] = opts.Path
		}
		if opts.Glob != "" {
			args["glob"] = opts.Glob
		}
		if opts.CaseInsensitive {
			args["case_insensitive"] = true
		}
		if opts.Context > 0 {
			args["context"] = opts.Context
		}
		if opts.MaxResults > 0 {
			args["max_results"] = opts.MaxResults
		}
	}
	return s.Tool(ctx, "grep", args)
}
