// Package llmtest is the scripted provider of ctxfit's tests under its
// former name: it is [openaifittest], the public package agent
// developers test their agents with.
//
// Deprecated: use github.com/ctxfit/ctxfit/openaifit/openaifittest.
package llmtest

import "github.com/ctxfit/ctxfit/openaifit/openaifittest"

// Script is [openaifittest.Script].
type Script = openaifittest.Script

// Request is [openaifittest.Request].
type Request = openaifittest.Request

// Recall is [openaifittest.Recall].
type Recall = openaifittest.Recall

// Provider is [openaifittest.Provider].
type Provider = openaifittest.Provider

// New is [openaifittest.New].
func New(script Script) *Provider { return openaifittest.New(script) }
