// Package policy decides permission requests by the rules of an agent
// profile (yaml agents.*.rules) and the conversation's grants: Decide
// applies a list of Rule values to one request.
//
// For Bash the command line is parsed (mvdan.cc/sh) and every simple
// command in it is decided on its own; what the analyzer cannot fully
// account for is asked, never allowed (fail closed; see docs/rules.md).
// The differential tests prove the analyzer against the real Bash.
//
// The package keeps no state, never logs and imports nothing of the
// bridge's own: package config validates the rules of the YAML file with
// CheckGlob and CheckBashPattern.
package policy
