package protocol

import "errors"

// Sentinel errors.
var (
	// ErrCombine: a delta cannot be merged into the output (seed 002:
	// different types, or values of a type the algorithm does not combine).
	ErrCombine = errors.New("values cannot be combined")
	// ErrSchema: the schema file cannot be used; pass the official ACP
	// schema.json (draft 2020-12).
	ErrSchema = errors.New("unusable JSON schema")
)
