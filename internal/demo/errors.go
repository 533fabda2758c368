package demo

import (
	"errors"
	"fmt"
)

var (
	// ErrProtocol marks a message from the peer that breaks JSON-RPC 2.0
	// or ACP (bad JSON, a response to an id never sent, an update for an
	// unknown session, …).
	ErrProtocol = errors.New("protocol violation")
	// ErrClosed: the connection ended while a call waited for its answer.
	ErrClosed = errors.New("connection closed")
	// ErrOption: an option value the peers do not know.
	ErrOption = errors.New("unknown option value")
)

// JSON-RPC and ACP error codes the peers use.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeNotFound       = -32002 // ACP: resource not found
)

// RPCError is a JSON-RPC error object, sent or received.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

func rpcErrorf(code int, format string, args ...any) *RPCError {
	return &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func protocolErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}
